package ipp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestNew: printer URIs, and where requests go.
func TestNew(t *testing.T) {
	f := func(uri, want, wantErr string) {
		t.Helper()
		c, err := New(uri, Config{})
		switch {
		case wantErr != "":
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%s: %v; want ...%s...", uri, err, wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", uri, err)
		case c.url != want || c.Printer() != uri:
			t.Errorf("%s: posts to %s", uri, c.url)
		}
	}
	f("ipp://print.example/printers/lodge", "http://print.example:631/printers/lodge", "")
	f("ipp://print.example:8631/printers/lodge", "http://print.example:8631/printers/lodge", "")
	f("ipps://print.example/ipp/print", "https://print.example:443/ipp/print", "")
	f("ipp://[::1]/printers/a%20b?waitjob=false", "http://[::1]:631/printers/a%20b?waitjob=false", "")
	f("http://print.example/printers/lodge", "", "the scheme must be ipp or ipps")
	f("print.example:631/printers/lodge", "", "the scheme must be ipp or ipps")
	f("ipp:///printers/lodge", "", "no host")
	f("ipp://:631/printers/lodge", "", "no host")
	f("ipp://print.example", "", "no printer path")
	f("ipp://print.example/", "", "no printer path")
	f("ipp://print.example:0/printers/lodge", "", `port "0" is not 1 to 65535`)
	f("ipp://print.example:65536/printers/lodge", "", `port "65536" is not 1 to 65535`)
	f("ipp://print.example/printers/lodge#x", "", "a fragment")
	f("ipp://%zz/x", "", "invalid URL escape")
	// the password is not repeated in the error
	if _, err := New("ipp://op:secret@print.example/printers/lodge", Config{}); err == nil || !strings.Contains(err.Error(), "credentials") || strings.Contains(err.Error(), "secret") {
		t.Errorf("credentials: %v", err)
	}
}

// response encodes an answer to the request in r: its request id, the
// status and groups given.
func response(r *http.Request, status uint16, groups ...Group) []byte {
	head := make([]byte, 8)
	io.ReadFull(r.Body, head)
	io.Copy(io.Discard, r.Body)
	m := Message{Major: 2, Code: status, RequestID: binary.BigEndian.Uint32(head[4:]), Groups: groups}
	b, err := m.AppendBinary(nil)
	if err != nil {
		panic(err)
	}
	return b
}

var opGroup = Group{Tag: TagOperation, Attrs: []Attribute{{"attributes-charset", []Value{Charset("utf-8")}}, {"attributes-natural-language", []Value{Language("en")}}}}

// TestClientHostile: a printer's bad answers are errors that say what was
// wrong, never a panic or a success.
func TestClientHostile(t *testing.T) {
	f := func(answer func(w http.ResponseWriter, r *http.Request), print bool, wantErr string) {
		t.Helper()
		srv := httptest.NewServer(http.HandlerFunc(answer))
		defer srv.Close()
		c, err := New("ipp://"+strings.TrimPrefix(srv.URL, "http://")+"/printers/p", Config{MaxResponseBytes: 1024})
		if err != nil {
			t.Fatal(err)
		}
		if print {
			doc := []byte("%PDF-1.7 ...")
			_, err = c.PrintJob(context.Background(), "B1", "application/pdf", nil, bytes.NewReader(doc), int64(len(doc)))
		} else {
			_, err = c.GetJobs(context.Background(), "all", true)
		}
		if whole, ok := strings.CutSuffix(wantErr, "$"); ok {
			if err == nil || !strings.HasSuffix(err.Error(), whole) {
				t.Errorf("%v; want ...%s", err, whole)
			}
		} else if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%v; want ...%s...", err, wantErr)
		}
	}
	ipp := func(body []byte) func(w http.ResponseWriter, r *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/ipp")
			w.Write(body)
		}
	}
	f(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }, false, "HTTP 500 Internal Server Error")
	f(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "who?", 401) }, true, "HTTP 401 Unauthorized")
	f(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(response(r, 0, opGroup))
	}, false, `the answer is "text/html", not application/ipp`)
	f(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/ipp")
		w.Write(response(r, 0, opGroup, Group{Tag: TagJob, Attrs: []Attribute{{"job-name", []Value{Name(strings.Repeat("x", 2000))}}}}))
	}, false, "the answer is larger than 1024 bytes")
	// go-ipp v1.6.1 panics on this answer
	f(ipp([]byte{2, 0, 0, 0, 0, 0, 0, 1, 0x01, 0x47, 0xff, 0xff}), false, "ipp Get-Jobs to ipp://127.0.0.1")
	f(ipp([]byte{2, 0, 0, 0, 0, 0, 0, 1, 0x01, 0x47, 0xff, 0xff}), false, "at byte 10: name length -1 is negative")
	f(ipp([]byte{2, 0, 0, 0, 0, 0, 0, 99, 0x03}), false, "the answer is to request 99, not 1")
	f(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/ipp")
		g := opGroup
		g.Attrs = append(g.Attrs, Attribute{"status-message", []Value{Text("not accepting jobs")}})
		w.Write(response(r, 0x0506, g))
	}, true, "/printers/p: server-error-not-accepting-jobs: not accepting jobs")
	f(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/ipp")
		w.Write(response(r, 0x0599, Group{Tag: TagOperation, Attrs: []Attribute{{"status-message", []Value{Integer(3)}}}}))
	}, false, "/printers/p: status 0x0599$") // a status-message that is no text is not read as one
	f(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/ipp")
		w.Write(response(r, 0, opGroup))
	}, true, "the answer has no job attributes")
	f(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/ipp")
		w.Write(response(r, 0, opGroup, Group{Tag: TagJob, Attrs: []Attribute{{"job-id", []Value{Keyword("seven")}}}}))
	}, true, "the answer names no job")
	// the connection is cut half-way through the answer
	f(func(w http.ResponseWriter, r *http.Request) {
		body := response(r, 0, opGroup)
		w.Header().Set("Content-Type", "application/ipp")
		w.Header().Set("Content-Length", "500")
		w.Write(body)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}, false, "unexpected EOF")
}

// TestRequestOrder: every request starts with the attributes RFC 8011
// requires first, in its order, and asks as Config.User.
func TestRequestOrder(t *testing.T) {
	c, err := New("ipp://print.example/printers/p", Config{User: "mailroom"})
	if err != nil {
		t.Fatal(err)
	}
	m := c.Request(OpGetJobs, Attribute{"which-jobs", []Value{Keyword("all")}})
	var names []string
	for _, a := range m.Groups[0].Attrs {
		names = append(names, a.Name+"="+a.Values[0].String())
	}
	want := "attributes-charset=utf-8,attributes-natural-language=en,printer-uri=ipp://print.example/printers/p,requesting-user-name=mailroom,which-jobs=all"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("request attributes\n%s\nwant\n%s", got, want)
	}
	var se *StatusError
	if !errors.As(error(&StatusError{Printer: "ipp://p.example/printers/p", Op: OpPrintJob, Status: 0x0406}), &se) || se.Error() != "ipp Print-Job to ipp://p.example/printers/p: client-error-not-found" {
		t.Errorf("StatusError reads %q", se.Error())
	}
}
