package upload

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"
	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/pipeline"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata from the current answers")

// web serves a rig's handler with fasthttp on an in-memory listener, set
// up as the server package does for uploads: bodies beyond 64 KiB reach
// the handler as a stream. Authentication is the server's business: the
// caller's account is the X-Account header, the user X-User (default
// clerk).
type web struct {
	*rig
	ln *tcpListener

	mu             sync.Mutex
	changed        *sync.Cond // on mu: a connection opened or closed
	opened, closed int        // connections, closed once the handler is done
}

type noLog struct{}

func (noLog) Printf(string, ...any) {}

func newWeb(t *testing.T) *web { return newWebOn(t, backends[0]) }

// newWebOn is newWeb with the backend's store.
func newWebOn(t *testing.T, b backend) *web {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &web{rig: newRigOn(t, b), ln: &tcpListener{l}}
	w.changed = sync.NewCond(&w.mu)
	srv := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			user := string(ctx.Request.Header.Peek("X-User"))
			if user == "" {
				user = "clerk"
			}
			w.h.Serve(ctx, Principal{Account: string(ctx.Request.Header.Peek("X-Account")), User: user})
		},
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		MaxRequestBodySize:           32 << 20,
		HeaderReceived: func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
			return fasthttp.RequestConfig{MaxRequestBodySize: 64 << 10}
		},
		Logger: noLog{},
		ConnState: func(_ net.Conn, st fasthttp.ConnState) {
			w.mu.Lock()
			defer w.mu.Unlock()
			switch st {
			case fasthttp.StateNew:
				w.opened++
			case fasthttp.StateClosed:
				w.closed++
			}
			w.changed.Broadcast()
		},
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(w.ln) }()
	t.Cleanup(func() {
		srv.Shutdown()
		w.ln.Close()
		<-done
	})
	return w
}

// tcpListener is a loopback listener that dials itself: real sockets, so
// that the server sees a client's connection close as it would in the
// field.
type tcpListener struct{ net.Listener }

func (l *tcpListener) Dial() (net.Conn, error) { return net.Dial("tcp", l.Addr().String()) }

// answer is an answer as the client saw it.
type answer struct {
	status     int
	ctype      string
	body       string
	retryAfter string
}

// do sends one request on a new connection as account and returns the
// answer. A body of type []byte or string is sent with its length; any
// other io.Reader chunked. The answer is read even when the server
// answers before it has read the whole body and closes the connection.
func (w *web) do(method, path, account string, body any, header ...string) answer {
	w.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	case io.Reader:
		rd = struct{ io.Reader }{b} // hides the length: chunked
	}
	req, err := http.NewRequest(method, "http://lodge.test/", rd)
	if err != nil {
		w.t.Fatal(err)
	}
	// the path goes out as written, invalid escapes and all
	req.URL.Opaque, req.URL.RawQuery, _ = strings.Cut(path, "?")
	if account != "" {
		req.Header.Set("X-Account", account)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	conn, err := w.ln.Dial()
	if err != nil {
		w.t.Fatal(err)
	}
	defer conn.Close()
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		req.Write(conn) // fails when the server refuses the body and closes
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", method, path, err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		w.t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	conn.Close()
	<-wrote
	return answer{resp.StatusCode, resp.Header.Get("Content-Type"), string(b), resp.Header.Get("Retry-After")}
}

// idle waits until the server has accepted more than n connections in
// all and closed every one (a connection closes after its handler
// returned), and returns how many it accepted.
func (w *web) idle(n int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.opened <= n || w.closed < w.opened {
		w.changed.Wait()
	}
	return w.opened
}

// newSession opens a session over HTTP for ABC12345.
func (w *web) newSession() string {
	w.t.Helper()
	a := w.do("GET", "/publicinterface/get_session_id.text?account=ABC12345", "ABC12345", nil)
	epid := strings.TrimSpace(a.body)
	if a.status != 200 || !ValidEPID(epid) {
		w.t.Fatalf("get_session_id: %+v", a)
	}
	return epid
}

func (w *web) putFile(epid, name string, body any) answer {
	w.t.Helper()
	return w.do("PUT", "/direct_upload/"+epid+"/"+name, "ABC12345", body)
}

// golden compares an answer with testdata/name, or rewrites the file with
// -update. The session identifier and blob names, random, are replaced
// by {EPID} and {BLOB} first.
func golden(t *testing.T, name, epid, got string) {
	t.Helper()
	got = strings.ReplaceAll(got, epid, "{EPID}")
	got = regexp.MustCompile(`[0-9a-f]{24}\.blob`).ReplaceAllString(got, "{BLOB}")
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test ./upload -run %s -update writes it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs (go test ./upload -run %s -update rewrites it)\ngot:\n%s\nwant:\n%s", file, t.Name(), got, want)
	}
}

var contentTypes = map[string]string{
	"text": "text/plain; charset=utf-8",
	"json": "application/json",
	"xml":  "application/xml; charset=utf-8",
}

// TestGetSessionID: get_session_id opens a session of the caller's own
// account only.
func TestGetSessionID(t *testing.T) {
	w := newWeb(t)
	f := func(method, path, account string, want int, wantBody string) {
		t.Helper()
		a := w.do(method, path, account, nil)
		if a.status != want || !strings.Contains(a.body, wantBody) {
			t.Errorf("%s %s as %s: %d %q, want %d %q", method, path, account, a.status, a.body, want, wantBody)
			return
		}
		if want != 200 {
			return
		}
		epid := strings.TrimSpace(a.body)
		ss, err := w.s.Session(epid)
		if err != nil || ss.Account != account || ss.User != "clerk" || ss.State != StateOpen {
			t.Errorf("%s: session %+v, %v", path, ss, err)
		}
	}
	f("GET", "/publicinterface/get_session_id.text?account=ABC12345", "ABC12345", 200, "\n")
	f("POST", "/publicinterface/get_session_id.text?account=ABC12345", "ABC12345", 200, "\n")
	f("GET", "/publicinterface/get_session_id.text?account=abc12345", "ABC12345", 200, "\n")
	f("GET", "/publicinterface/get_session_id.text?account=%20ABC12345%20", "ABC12345", 200, "\n")
	f("GET", "/publicinterface/get_session_id.text", "ABC12345", 400, "account parameter is required")
	f("GET", "/publicinterface/get_session_id.json?account=", "ABC12345", 400, `"status":400`)
	f("GET", "/publicinterface/get_session_id.text?account=XYZ99999", "ABC12345", 403, "not for account XYZ99999")
	f("GET", "/publicinterface/get_session_id.xml?account=ABC12345", "XYZ99999", 403, "<Status>403</Status>")
	f("GET", "/publicinterface/get_session_id.html?account=ABC12345", "ABC12345", 404, "unknown format")
	f("GET", "/publicinterface/get_session_id.?account=ABC12345", "ABC12345", 404, "unknown format")
	f("DELETE", "/publicinterface/get_session_id.text?account=ABC12345", "ABC12345", 405, "use GET")
	f("GET", "/publicinterface/nothing_here", "ABC12345", 404, "not found")

	// each call is a new session
	if a, b := w.newSession(), w.newSession(); a == b {
		t.Errorf("the same session twice: %s", a)
	}
}

// TestGetSessionIDGolden: the text, JSON and XML answers of
// get_session_id, byte for byte (testdata/get_session_id.*).
func TestGetSessionIDGolden(t *testing.T) {
	w := newWeb(t)
	for _, form := range []string{"text", "json", "xml"} {
		a := w.do("GET", "/publicinterface/get_session_id."+form+"?account=ABC12345", "ABC12345", nil)
		if a.status != 200 || a.ctype != contentTypes[form] {
			t.Errorf("%s: %d %s", form, a.status, a.ctype)
		}
		var epid string
		switch form {
		case "text":
			epid = strings.TrimSuffix(a.body, "\n")
		case "json":
			var r SessionIDResult
			if err := json.Unmarshal([]byte(a.body), &r); err != nil {
				t.Fatalf("%s: %v", a.body, err)
			}
			epid = r.SessionID
		case "xml":
			epid = regexp.MustCompile(`<SessionId>(\w+)</SessionId>`).FindStringSubmatch(a.body + "<SessionId>-</SessionId>")[1]
		}
		if !ValidEPID(epid) {
			t.Errorf("%s: no session identifier in %q", form, a.body)
		}
		golden(t, "get_session_id."+form, epid, a.body)
	}
}

// TestPutStatus: the status of every kind of PUT: 201 stored, 403 a type
// not accepted or content not matching the extension, 500 no extension,
// 400 a path, 404 no such session, 403 another account's session, 409 an
// ended session, 413 too large; only the 201s are stored.
func TestPutStatus(t *testing.T) { forBackends(t, testPutStatus) }

func testPutStatus(t *testing.T, b backend) {
	w := newWebOn(t, b)
	w.s.opt.MaxFileBytes = 1 << 20
	epid := w.newSession()
	other, err := w.s.CreateSession("XYZ99999", "them")
	if err != nil {
		t.Fatal(err)
	}
	pdf := pdfPages(1)
	stored := map[string][]byte{}
	f := func(method, path, account string, body any, want int, wantBody string) {
		t.Helper()
		a := w.do(method, path, account, body)
		if a.status != want || !strings.Contains(a.body, wantBody) {
			t.Errorf("%s %s: %d %q, want %d %q", method, path, a.status, a.body, want, wantBody)
		}
		if a.ctype != contentTypes["text"] {
			t.Errorf("%s %s: content type %q", method, path, a.ctype)
		}
	}
	// ok uploads a file, sent as name in the path and stored as as
	ok := func(name, as string, body []byte, chunked bool) {
		t.Helper()
		var b any = body
		if chunked {
			b = bytes.NewReader(body)
		}
		f("PUT", "/direct_upload/"+epid+"/"+name, "ABC12345", b, 201, fmt.Sprintf("%s %d %s\n", as, len(body), sha1Hex(body)))
		stored[as] = body
	}
	u := "/direct_upload/" + epid + "/"
	ok("a.pdf", "a.pdf", pdf, false)
	ok("a.pdf", "a.pdf", pdfPages(2), true) // replaced
	ok("b.PDF", "b.PDF", pdf, false)
	ok("m.json", "m.json", []byte(`{"letters":[]}`), false)
	ok("m.xml", "m.xml", []byte(`<pack/>`), true)
	ok("d.ps", "d.ps", []byte("%!PS-Adobe-3.0\nshowpage\n"), false)
	ok("with%20space.pdf", "with space.pdf", pdf, false)
	ok("big.pdf", "big.pdf", append(pdfPages(1), bytes.Repeat([]byte("%"), 900<<10)...), true) // streamed
	ok("q.pdf?x=1", "q.pdf", pdf, false)                                                       // the query is not the name

	f("PUT", u+"a.exe", "ABC12345", pdf, 403, "not accepted")
	f("PUT", u+"a.docx", "ABC12345", pdf, 403, "not accepted")
	f("PUT", u+"z.pdf", "ABC12345", zipOf(t, "a", "b"), 403, "content is")
	f("PUT", u+"p.json", "ABC12345", pdf, 403, "content is")
	f("PUT", u+"x.xps", "ABC12345", pdf, 403, "content is")
	f("PUT", u+"e.pdf", "ABC12345", []byte{}, 403, "empty")
	f("PUT", u+"noextension", "ABC12345", pdf, 500, "no extension")
	f("PUT", u+"trailingdot.", "ABC12345", pdf, 500, "no extension")
	f("PUT", u+".pdf", "ABC12345", pdf, 500, "no extension")
	f("PUT", u+"dir%2Fa.pdf", "ABC12345", pdf, 400, "contains a path")
	f("PUT", u+"dir/a.pdf", "ABC12345", pdf, 400, "contains a path")
	f("PUT", u+"dir%5Ca.pdf", "ABC12345", pdf, 400, "contains a path")
	f("PUT", u+"..%2Fa.pdf", "ABC12345", pdf, 400, "contains a path")
	f("PUT", u+"a%00.pdf", "ABC12345", pdf, 400, "control characters")
	f("PUT", u+"a%zz.pdf", "ABC12345", pdf, 400, "not a valid URL path")
	f("PUT", u+strings.Repeat("x", 252)+".pdf", "ABC12345", pdf, 400, "longer than 255")
	f("PUT", u, "ABC12345", pdf, 400, "name is required")
	f("PUT", "/direct_upload/"+epid, "ABC12345", pdf, 400, "PUT /direct_upload/<session>/<filename>")
	f("PUT", "/direct_upload/ZZZZZZZZZZZZZZZZZZZZZZZZZZZZ/a.pdf", "ABC12345", pdf, 404, "no session")
	f("PUT", "/direct_upload/nonsense/a.pdf", "ABC12345", pdf, 404, "no session")
	f("PUT", "/direct_upload/"+strings.ToLower(epid)+"/a.pdf", "ABC12345", pdf, 404, "no session")
	f("PUT", "/direct_upload/"+other.EPID+"/a.pdf", "ABC12345", pdf, 403, "another account")
	f("PUT", u+"a.pdf", "XYZ99999", pdf, 403, "another account")
	// another user or key of the account continues it: TestSessionBelongsToAccount
	f("GET", u+"a.pdf", "ABC12345", nil, 405, "PUT")
	f("DELETE", u+"a.pdf", "ABC12345", nil, 405, "PUT")
	huge := append(pdfPages(1), bytes.Repeat([]byte("%"), 1<<20)...)
	f("PUT", u+"huge.pdf", "ABC12345", huge, 413, "larger than 1048576 bytes")
	f("PUT", u+"huge.pdf", "ABC12345", bytes.NewReader(huge), 413, "larger than")
	f("PUT", u+"a.pdf", "ABC12345", huge, 413, "larger than") // a refused replacement keeps the file

	files, err := w.s.Files(epid)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, fl := range files {
		got[fl.Name] = true
		if want, ok := stored[fl.Name]; !ok || fl.SHA1 != sha1Hex(want) {
			t.Errorf("stored %s (%s), want %v", fl.Name, fl.SHA1, ok)
		}
	}
	for name := range stored {
		if !got[name] {
			t.Errorf("%s not stored", name)
		}
	}
	checkBlobs(t, w.s, epid)
	if fs, _ := w.s.Files(other.EPID); len(fs) != 0 {
		t.Errorf("another account's session got files: %+v", fs)
	}

	// an ended session takes no more files; an expired one is gone
	ended := w.newSession()
	w.putFile(ended, "a.pdf", pdf)
	if a := w.do("GET", "/publicinterface/end_session.text?session_id="+ended, "ABC12345", nil); a.status != 200 {
		t.Fatalf("end_session: %+v", a)
	}
	f("PUT", "/direct_upload/"+ended+"/late.pdf", "ABC12345", pdf, 409, "has ended")
	f("PUT", "/direct_upload/"+ended+"/a.pdf", "ABC12345", pdf, 409, "has ended")
	exp := w.newSession()
	w.c.Add(25 * time.Hour)
	f("PUT", "/direct_upload/"+exp+"/a.pdf", "ABC12345", pdf, 404, "expired")
}

// TestEndSession: end_session's statuses, ownership, idempotence, and a
// rejected end followed by a corrected one, over HTTP.
func TestEndSession(t *testing.T) { forBackends(t, testEndSession) }

func testEndSession(t *testing.T, b backend) {
	w := newWebOn(t, b)
	f := func(path, account string, want int, wantBody string) answer {
		t.Helper()
		a := w.do("GET", path, account, nil)
		if a.status != want || !strings.Contains(a.body, wantBody) {
			t.Errorf("%s as %s: %d %q, want %d %q", path, account, a.status, a.body, want, wantBody)
		}
		return a
	}
	epid := w.newSession()
	w.putFile(epid, "letter.pdf", pdfPages(1))
	w.putFile(epid, "m.json", `{"letters":[{"postal":"Jo"`)
	e := "/publicinterface/end_session."
	f(e+"text", "ABC12345", 400, "session_id parameter is required")
	f(e+"json?session_id=", "ABC12345", 400, "session_id parameter is required")
	f(e+"html?session_id="+epid, "ABC12345", 404, "unknown format")
	f(e+"json?session_id=ZZZZZZZZZZZZZZZZZZZZZZZZZZZZ", "ABC12345", 404, "no session")
	f(e+"json?session_id="+epid, "XYZ99999", 403, "another account")
	bad := f(e+"json?session_id="+epid, "ABC12345", 400, `"status":"rejected"`)
	if again := f(e+"json?session_id="+epid, "ABC12345", 400, `"status":"rejected"`); again.body != bad.body {
		t.Errorf("rejected twice differently:\n%s\n%s", bad.body, again.body)
	}
	if a := w.putFile(epid, "m.json", meta("", melbourne)); a.status != 201 {
		t.Fatalf("corrected metadata: %+v", a)
	}
	ok := f(e+"json?session_id="+epid, "ABC12345", 200, `"result":"ok"`)
	w.c.Add(time.Minute) // a second mailing would differ in its times
	if again := f(e+"json?session_id="+epid, "ABC12345", 200, `"result":"ok"`); again.body != ok.body {
		t.Errorf("end_session twice differently:\n%s\n%s", ok.body, again.body)
	}
	f(e+"text?session_id="+epid, "ABC12345", 200, "result: ok\nstatus: received\n")
	f(e+"json?session_id="+epid, "XYZ99999", 403, "another account")
	if j := w.jobs(epid); len(j) != 1 {
		t.Errorf("jobs %v, want the mailroom's check, once", j)
	}
	// an expired session is gone
	exp := w.newSession()
	w.putFile(exp, "letter.pdf", pdfPages(1))
	w.c.Add(25 * time.Hour)
	f(e+"json?session_id="+exp, "ABC12345", 404, "expired")
	f(e+"json?session_id="+epid, "ABC12345", 200, `"result":"ok"`) // ended: kept
}

// TestEndSessionGolden: the text, JSON and XML answers of end_session for
// an accepted and a rejected mailing, byte for byte
// (testdata/end_session_ok.*, end_session_rejected.*).
func TestEndSessionGolden(t *testing.T) {
	w := newWeb(t)
	session := func(files ...any) string {
		epid := w.newSession()
		for i := 0; i+1 < len(files); i += 2 {
			w.c.Add(1500 * time.Millisecond)
			if a := w.putFile(epid, files[i].(string), files[i+1]); a.status != 201 {
				t.Fatalf("PUT %s: %+v", files[i], a)
			}
		}
		w.c.Add(time.Second)
		return epid
	}
	okEPID := session("letter.pdf", pdfPages(2), "single_addressed.json", `{"letters":[{"postal":"Jo Citizen\n3/72 Charles St\nSt Kilda VIC 3182","reference":"r-1"}]}`)
	badEPID := session("letter.pdf", pdfPages(2), "broken.pdf", "%PDF-1.4\nnot really\n", "m.xml", `<pack/>`, "n.json", `{}`)
	for _, c := range []struct {
		name, epid string
		status     int
	}{{"ok", okEPID, 200}, {"rejected", badEPID, 400}} {
		for _, form := range []string{"text", "json", "xml"} {
			a := w.do("GET", "/publicinterface/end_session."+form+"?session_id="+c.epid, "ABC12345", nil)
			if a.status != c.status || a.ctype != contentTypes[form] {
				t.Errorf("%s %s: %d %s, want %d", c.name, form, a.status, a.ctype, c.status)
			}
			golden(t, "end_session_"+c.name+"."+form, c.epid, a.body)
		}
	}
	// the JSON answer has the field names of the service in the field
	a := w.do("GET", "/publicinterface/end_session.json?session_id="+okEPID, "ABC12345", nil)
	var m map[string]any
	if err := json.Unmarshal([]byte(a.body), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"session_id", "result", "status", "files", "error", "errs"} {
		if _, ok := m[k]; !ok {
			t.Errorf("end_session.json lacks %q", k)
		}
	}
	file := m["files"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "sz", "upld_sz", "cl_sz", "chunks", "intent", "first", "last", "host", "apath", "gpath", "sha1"} {
		if _, ok := file[k]; !ok {
			t.Errorf("end_session.json files[0] lacks %q", k)
		}
	}
}

// multipartBody is a form with each file as a part named "file" (and one
// field that is not a file).
func multipartBody(t *testing.T, files ...any) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("comment", "ignored")
	for i := 0; i+1 < len(files); i += 2 {
		p, err := mw.CreateFormFile("file", files[i].(string))
		if err != nil {
			t.Fatal(err)
		}
		switch b := files[i+1].(type) {
		case []byte:
			p.Write(b)
		case string:
			io.WriteString(p, b)
		}
	}
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// TestMultipart: mpf_upload takes a whole mailing in one request, up to
// 20 MB in all: more is 413, whether declared by Content-Length or sent
// chunked.
func TestMultipart(t *testing.T) { forBackends(t, testMultipart) }

func testMultipart(t *testing.T, b backend) {
	w := newWebOn(t, b)
	const path = "/publicinterface/mpf_upload?account=ABC12345"
	f := func(method, path, account string, body any, ctype string, want int, wantBody string) answer {
		t.Helper()
		a := w.do(method, path, account, body, "Content-Type", ctype)
		if a.status != want || !strings.Contains(a.body, wantBody) || a.ctype != contentTypes["json"] {
			t.Errorf("%s %s: %d %s %.300q, want %d %q", method, path, a.status, a.ctype, a.body, want, wantBody)
		}
		return a
	}
	body, ctype := multipartBody(t, "C:\\fakepath\\letter.pdf", pdfPages(1), "m.json", meta("", melbourne))
	a := f("POST", path, "ABC12345", body, ctype, 200, `"result":"ok"`)
	var res EndResult
	if err := json.Unmarshal([]byte(a.body), &res); err != nil {
		t.Fatal(err)
	}
	if res.Status != PackReceived || len(res.Files) != 2 || res.Files[0].Name != "letter.pdf" || res.Files[1].Name != "m.json" {
		t.Errorf("answer %+v", res)
	}
	if ss, err := w.s.Session(res.SessionID); err != nil || ss.State != StateEnded || ss.Account != "ABC12345" {
		t.Errorf("session %+v, %v", ss, err)
	}
	f("POST", path, "ABC12345", bytes.NewReader(body), ctype, 200, `"result":"ok"`) // chunked
	f("POST", path, "ABC12345", bytes.NewReader(body), ctype, 200, `"result":"ok"`) // chunked

	auto, ctype2 := multipartBody(t, "a.pdf", pdfPages(1))
	f("POST", path, "ABC12345", auto, ctype2, 200, `"status":"queued_auto"`)
	badMeta, ctype3 := multipartBody(t, "a.pdf", pdfPages(1), "m.json", `{"letters":[{}]}`)
	f("POST", path, "ABC12345", badMeta, ctype3, 400, `"result":"error"`)
	exe, ctype4 := multipartBody(t, "a.exe", pdfPages(1))
	f("POST", path, "ABC12345", exe, ctype4, 403, "part 1: file type .exe is not accepted")
	notPDF, ctype5 := multipartBody(t, "a.pdf", pdfPages(1), "b.pdf", "GIF89a")
	f("POST", path, "ABC12345", notPDF, ctype5, 403, "part 2:")
	noext, ctype6 := multipartBody(t, "a", pdfPages(1))
	f("POST", path, "ABC12345", noext, ctype6, 500, "no extension")
	none, ctype7 := multipartBody(t)
	f("POST", path, "ABC12345", none, ctype7, 400, "no file parts")
	f("POST", path, "ABC12345", body, "application/json", 400, "multipart/form-data")
	f("POST", path, "ABC12345", body, "multipart/form-data", 400, "boundary")
	f("POST", path, "ABC12345", "no boundary here", "multipart/form-data; boundary=x", 400, "no file parts")
	f("POST", path, "ABC12345", "--x\r\nno headers", "multipart/form-data; boundary=x", 400, "malformed multipart")
	cut := body[:bytes.LastIndex(body, []byte("\r\n--"))] // the last part without its end
	f("POST", path, "ABC12345", cut, ctype, 400, "part 2: the content of m.json ended early")
	f("POST", path, "ABC12345", bytes.NewReader(cut), ctype, 400, "part 2: the content of m.json ended early")
	f("POST", path, "XYZ99999", body, ctype, 403, "not for account ABC12345")
	f("POST", "/publicinterface/mpf_upload", "ABC12345", body, ctype, 400, "account parameter is required")
	f("GET", path, "ABC12345", nil, ctype, 405, "POST")

	// the limit: 20 MB in all
	const limit = 20 << 20
	under, ctypeU := multipartBody(t, "big.pdf", pdfDoc(1, limit-(64<<10)), "m.json", meta("", melbourne))
	if len(under) > limit {
		t.Fatalf("test body %d bytes", len(under))
	}
	f("POST", path, "ABC12345", under, ctypeU, 200, `"result":"ok"`)
	over, ctypeO := multipartBody(t, "big.pdf", append(pdfPages(1), bytes.Repeat([]byte("%"), limit)...))
	f("POST", path, "ABC12345", over, ctypeO, 413, "limited to 20971520 bytes")
	f("POST", path, "ABC12345", bytes.NewReader(over), ctypeO, 413, "limited to 20971520 bytes")
	// over the limit in a later part, after a file was stored
	later, ctypeL := multipartBody(t, "a.pdf", pdfPages(1), "big.pdf", append(pdfPages(1), bytes.Repeat([]byte("%"), limit)...))
	f("POST", path, "ABC12345", bytes.NewReader(later), ctypeL, 413, "limited to")
	// many small parts adding up to more than the limit
	var parts []any
	for i := 0; i < 25; i++ {
		parts = append(parts, fmt.Sprintf("p%d.pdf", i), append(pdfPages(1), bytes.Repeat([]byte("%"), 1<<20)...))
	}
	many, ctypeM := multipartBody(t, parts...)
	f("POST", path, "ABC12345", bytes.NewReader(many), ctypeM, 413, "limited to")

	// a request that failed left no session open, and no files behind
	ended, abandoned := 0, 0
	all, err := w.s.accountSessions("ABC12345", nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, epid := range all {
		ss, err := w.s.Session(epid)
		if err != nil {
			t.Fatal(err)
		}
		switch ss.State {
		case StateEnded:
			ended++
		case StateAbandoned:
			abandoned++
			if ss.Reason == "" {
				t.Errorf("abandoned session %s keeps no reason", ss.EPID)
			}
			if files, _ := w.s.Files(ss.EPID); len(files) > 0 {
				t.Errorf("abandoned session %s keeps %d files", ss.EPID, len(files))
			}
		default:
			t.Errorf("session %s left %s", ss.EPID, ss.State)
		}
		checkBlobs(t, w.s, ss.EPID)
	}
	if ended != 5 || abandoned < 8 {
		t.Errorf("%d sessions ended, %d abandoned", ended, abandoned)
	}
}

// TestPutCutOff: an upload whose connection drops before the body is
// complete stores nothing and leaves the file it would have replaced as it
// was, whether its length was declared or it came chunked.
func TestPutCutOff(t *testing.T) { forBackends(t, testPutCutOff) }

func testPutCutOff(t *testing.T, b backend) {
	w := newWebOn(t, b)
	testCutOff(t, w, "declared", func(body []byte) string {
		return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body[:200<<10])
	})
	testCutOff(t, w, "chunked", func(body []byte) string {
		return fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n%x\r\n%s", 100<<10, body[:100<<10], 100<<10, body[100<<10:150<<10])
	})
}

// TestPutCutOffAtChunkBoundary: as TestPutCutOff, the connection dropping
// right after a whole chunk. fasthttp (v1.77.0) reports that as the end
// of the body (its requestStream returns parseChunkSize's io.EOF as is);
// chunkedBody tells it apart by the closed connection.
func TestPutCutOffAtChunkBoundary(t *testing.T) { forBackends(t, testPutCutOffAtChunkBoundary) }

func testPutCutOffAtChunkBoundary(t *testing.T, b backend) {
	w := newWebOn(t, b)
	testCutOff(t, w, "chunked", func(body []byte) string {
		return fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", 100<<10, body[:100<<10])
	})
}

// testCutOff uploads a.pdf, then sends a replacement of it, more than the
// 64 KiB read before the handler runs, as rest (headers after X-Account
// and the part of the body sent) and drops the connection.
func testCutOff(t *testing.T, w *web, what string, rest func(body []byte) string) {
	t.Helper()
	epid := w.newSession()
	first := pdfPages(1)
	if a := w.putFile(epid, "a.pdf", first); a.status != 201 {
		t.Fatalf("PUT: %+v", a)
	}
	n := w.idle(0)
	conn, err := w.ln.Dial()
	if err != nil {
		t.Fatal(err)
	}
	body := append(pdfPages(2), bytes.Repeat([]byte("%"), 300<<10)...)
	fmt.Fprintf(conn, "PUT /direct_upload/%s/a.pdf HTTP/1.1\r\nHost: lodge.test\r\nX-Account: ABC12345\r\n%s", epid, rest(body))
	conn.Close()
	w.idle(n)
	files, _ := w.s.Files(epid)
	if len(files) != 1 || files[0].SHA1 != sha1Hex(first) || files[0].Chunks != 1 {
		t.Errorf("%s: after the cut-off upload: %+v", what, files)
	}
	checkBlobs(t, w.s, epid)
}

// TestPutNoSpace: an upload that would leave the disk with less than
// MinFreeBytes free is refused with 503 and Retry-After before any of it is
// stored, declared or chunked, single or multipart; the file it would have
// replaced is kept.
func TestPutNoSpace(t *testing.T) { forBackends(t, testPutNoSpace) }

func testPutNoSpace(t *testing.T, b backend) {
	w := newWebOn(t, b)
	if _, local := w.s.blobs.(interface{ Root() string }); w.s.pg != nil && !local {
		t.Skip("object storage refuses for itself when it is full: MinFreeBytes is about this node's disk")
	}
	epid := w.newSession()
	first := pdfPages(1)
	if a := w.putFile(epid, "a.pdf", first); a.status != 201 {
		t.Fatalf("PUT: %+v", a)
	}
	w.s.opt.MinFreeBytes = 1 << 62 // more than any disk has
	f := func(a answer) {
		t.Helper()
		if a.status != 503 || a.retryAfter == "" || !strings.Contains(a.body, "short of disk space") {
			t.Errorf("%d %q Retry-After %q", a.status, a.body, a.retryAfter)
		}
	}
	f(w.do("PUT", "/direct_upload/"+epid+"/a.pdf", "ABC12345", pdfPages(2)))
	f(w.do("PUT", "/direct_upload/"+epid+"/b.pdf", "ABC12345", bytes.NewReader(pdfPages(2))))
	body, ctype := multipartBody(t, "c.pdf", pdfPages(1))
	f(w.do("POST", "/publicinterface/mpf_upload?account=ABC12345", "ABC12345", body, "Content-Type", ctype))
	files, _ := w.s.Files(epid)
	if len(files) != 1 || files[0].SHA1 != sha1Hex(first) {
		t.Errorf("files after the refusals: %+v", files)
	}
	checkBlobs(t, w.s, epid)
}

// TestFailovers: GET /publicinterface/failovers.json|xml lists the
// account's letters that failed over to post, newest first, in the
// layout of the service in the field; other accounts' are not there.
func TestFailovers(t *testing.T) {
	w := newWeb(t)
	at := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
	for i, acct := range []string{"ABC12345", "ABC12345", "XYZ98765"} {
		epid := fmt.Sprintf("F%d", i)
		l := pipeline.Letter{EPID: epid, Account: acct, Received: at, Status: pipeline.Received, Idx: 0, Reference: fmt.Sprintf("inv-%d", i), Channels: []string{"email", "postal"}, Email: "a@example.com"}
		if err := w.ms.Submit(pipeline.Mailing{EPID: epid, Account: acct, Created: at}, []pipeline.Letter{l}, nil); err != nil {
			t.Fatal(err)
		}
		err := w.ms.Update([]string{epid}, func(tx pipeline.Tx) error {
			l, err := tx.Letter(epid, 0)
			if err != nil {
				return err
			}
			l.Failover = &pipeline.FailoverInfo{From: "email", Reason: "email refused: 550 no such user", Time: at.Add(time.Duration(i) * time.Minute)}
			l.Channels, l.Status = []string{"postal", "email"}, pipeline.Failover
			tx.PutLetter(l)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	f := func(path, account string, status int, want ...string) {
		t.Helper()
		a := w.do("GET", path, account, nil)
		if a.status != status {
			t.Fatalf("%s: %d %s", path, a.status, a.body)
		}
		for _, s := range want {
			if !strings.Contains(a.body, s) {
				t.Errorf("%s: %s lacks %s", path, a.body, s)
			}
		}
	}
	f("/publicinterface/failovers.json?account=ABC12345", "ABC12345", 200,
		`{"failovers":[{"reason":"email refused: 550 no such user","epid":"F1","reference":"inv-1","index":0,"received_ts":1793588645,"failover_ts":1793588705,"status":"Failover","transport":["EMAIL","POST"]},{"reason":"email refused: 550 no such user","epid":"F0"`)
	f("/publicinterface/failovers.xml?account=ABC12345", "ABC12345", 200,
		`<ListFailoversResult><FailoverLetter><Reason>email refused: 550 no such user</Reason><EPID>F1</EPID><Reference>inv-1</Reference><Index>0</Index>`,
		`<Transport><Channel>EMAIL</Channel><Channel>POST</Channel></Transport>`)
	f("/publicinterface/failovers.json?account=ABC12345&limit=1", "ABC12345", 200, `"epid":"F1"`)
	f("/publicinterface/failovers.json?account=XYZ98765", "ABC12345", 403, "not for account XYZ98765")
	f("/publicinterface/failovers.json?account=ABC12345&limit=0", "ABC12345", 400, "limit is 1 to 1000")
	f("/publicinterface/failovers.text?account=ABC12345", "ABC12345", 404, "use failovers.json or .xml")
	if a := w.do("GET", "/publicinterface/failovers.json?account=ABC12345&limit=1", "ABC12345", nil); strings.Contains(a.body, `"F0"`) {
		t.Errorf("limit 1 lists more: %s", a.body)
	}
}
