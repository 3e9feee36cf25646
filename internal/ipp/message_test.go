package ipp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The golden answers in testdata were captured from CUPS 2.4.2 (Debian
// 12) answering this package's Client: a Print-Job, a Get-Jobs of two
// jobs, a Get-Job-Attributes, a Get-Job-Attributes of a job that does not
// exist, and a Get-Printer-Attributes of a cups-pdf queue (14 KiB, with
// collections).
func golden(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDecodeCUPS decodes CUPS's answers, reads what the Client reads of
// them, and encodes each back to the same bytes (nothing is lost).
func TestDecodeCUPS(t *testing.T) {
	f := func(name string, status uint16, check func(m *Message)) {
		t.Helper()
		data := golden(t, name)
		m, err := Decode(data, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.Major != 2 || m.Minor != 0 || m.Code != status || len(m.Data) != 0 {
			t.Errorf("%s: version %d.%d status 0x%04x, %d bytes after the end tag", name, m.Major, m.Minor, m.Code, len(m.Data))
		}
		back, err := m.AppendBinary(nil)
		if err != nil {
			t.Fatalf("%s: encoding it back: %v", name, err)
		}
		if !bytes.Equal(back, data) {
			t.Errorf("%s: encoded back to other bytes", name)
		}
		check(m)
	}
	f("cups-print-job.ipp", 0, func(m *Message) {
		j := jobOf(m.Group(TagJob))
		if j.ID != 1 || !strings.HasSuffix(j.URI, "/jobs/1") || j.State != JobPending {
			t.Errorf("Print-Job: %+v", j)
		}
	})
	f("cups-get-jobs.ipp", 0, func(m *Message) {
		var names []string
		for _, g := range m.Groups {
			if g.Tag == TagJob {
				j := jobOf(&g)
				names = append(names, j.Name)
			}
		}
		if strings.Join(names, ",") != "20261123-E1-01,20261123-E2-01" {
			t.Errorf("Get-Jobs: jobs %q", names)
		}
	})
	f("cups-get-job-attributes.ipp", 0, func(m *Message) {
		if j := jobOf(m.Group(TagJob)); j.ID != 1 || j.State != JobCompleted || j.Name != "20261123-E1-01" {
			t.Errorf("Get-Job-Attributes: %+v", j)
		}
	})
	f("cups-not-found.ipp", 0x0406, func(m *Message) {
		if a := m.Group(TagOperation).Get("status-message"); a == nil || a.Values[0].String() != "Job #99 does not exist." {
			t.Errorf("status-message: %+v", a)
		}
	})
	f("cups-get-printer-attributes.ipp", 0, func(m *Message) {
		g := m.Group(TagPrinter)
		if a := g.Get("printer-name"); a == nil || a.Values[0].String() != "pdf" {
			t.Errorf("printer-name: %+v", a)
		}
		// media-col-default is a collection: begCollection, members, endCollection
		a := g.Get("media-col-default")
		if a == nil || a.Values[0].Tag != TagBegCollection || a.Values[len(a.Values)-1].Tag != TagEndCollection {
			t.Fatalf("media-col-default: %+v", a)
		}
		var members []string
		for _, v := range a.Values {
			if v.Tag == TagMemberName {
				members = append(members, v.String())
			}
		}
		if !strings.Contains(strings.Join(members, ","), "media-size") {
			t.Errorf("media-col-default members %q", members)
		}
	})
}

// hostile builds a message: version 2.0, status 0, request 1, then the
// bytes given.
func hostile(parts ...[]byte) []byte {
	b := []byte{2, 0, 0, 0, 0, 0, 0, 1}
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// attr encodes one value: tag, name, value.
func attr(tag byte, name string, value []byte) []byte {
	b := []byte{tag}
	b = binary.BigEndian.AppendUint16(b, uint16(len(name)))
	b = append(b, name...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(value)))
	return append(b, value...)
}

var (
	op  = []byte{TagOperation}
	end = []byte{TagEnd}
	cs  = attr(TagCharset, "attributes-charset", []byte("utf-8"))
)

// TestDecodeHostile: every malformed message is refused with the offset
// of the field at fault, never a panic or a read past the end.
func TestDecodeHostile(t *testing.T) {
	f := func(data []byte, lim Limits, at int, msg string) {
		t.Helper()
		m, err := Decode(data, lim)
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("% x: got %+v, %v; want a DecodeError", data, m, err)
			return
		}
		if de.Offset != at || !strings.Contains(de.Msg, msg) {
			t.Errorf("% x: %v; want at byte %d: ...%s...", data, err, at, msg)
		}
	}
	f(nil, Limits{}, 0, "at least 9 bytes")
	f(hostile(), Limits{}, 8, "at least 9 bytes")
	f(hostile(op, cs), Limits{}, 37, "ends before its end-of-attributes tag")
	// go-ipp v1.6.1 panics on this one: a name length of 0xFFFF
	f(hostile(op, []byte{TagCharset, 0xFF, 0xFF}), Limits{}, 10, "name length -1 is negative")
	f(hostile(op, []byte{TagCharset, 0x80, 0x00}), Limits{}, 10, "name length -32768 is negative")
	f(hostile(op, []byte{TagCharset, 0x00, 0x05, 'a', 'b'}), Limits{}, 10, "name length 5 runs past the end (2 bytes left)")
	f(hostile(op, []byte{TagCharset, 0x00, 0x01, 'a', 0x00}), Limits{}, 13, "the message ends inside a value length")
	f(hostile(op, []byte{TagCharset, 0x00, 0x01, 'a', 0x7F, 0xFF, 'x'}), Limits{}, 13, "value length 32767 runs past the end (1 bytes left)")
	f(hostile(op, []byte{TagCharset, 0x00, 0x01, 'a', 0xFF, 0xFF}), Limits{}, 13, "value length -1 is negative")
	f(hostile(cs, end), Limits{}, 8, "value tag 0x47 before any group")
	f(hostile(op, attr(TagCharset, "", []byte("utf-8")), end), Limits{}, 10, "an additional value (no name) before any attribute")
	f(hostile(op, cs, op, attr(TagKeyword, "", []byte("x")), end), Limits{}, 39, "before any attribute of its group")
	f(hostile([]byte{0x00}, end), Limits{}, 8, "reserved delimiter tag 0x00")
	f(hostile(op, []byte{0x0F}, end), Limits{}, 9, "reserved delimiter tag 0x0f")
	// values of fixed sizes
	f(hostile(op, attr(TagInteger, "job-id", []byte{0, 0, 1}), end), Limits{}, 18, "must be 4 bytes, not 3")
	f(hostile(op, attr(TagEnum, "job-state", []byte{0, 0, 0, 0, 9}), end), Limits{}, 21, "must be 4 bytes, not 5")
	f(hostile(op, attr(TagBoolean, "my-jobs", []byte{1, 1}), end), Limits{}, 19, "must be 1 bytes, not 2")
	f(hostile(op, attr(TagBoolean, "my-jobs", []byte{7}), end), Limits{}, 21, "boolean 7 (0 or 1)")
	f(hostile(op, attr(TagDateTime, "t", make([]byte, 10)), end), Limits{}, 13, "must be 11 bytes, not 10")
	f(hostile(op, attr(TagResolution, "r", make([]byte, 8)), end), Limits{}, 13, "must be 9 bytes, not 8")
	f(hostile(op, attr(TagRange, "r", make([]byte, 4)), end), Limits{}, 13, "must be 8 bytes, not 4")
	// with-language strings: two lengths that fill the value exactly
	f(hostile(op, attr(TagTextWithLang, "m", []byte{0, 2, 'e', 'n', 0, 9, 'h', 'i'}), end), Limits{}, 15, "two strings that fill it exactly")
	f(hostile(op, attr(TagNameWithLang, "m", []byte{0xFF, 0xFF, 0, 0}), end), Limits{}, 15, "two strings that fill it exactly")
	f(hostile(op, attr(TagNameWithLang, "m", []byte{0, 0, 0}), end), Limits{}, 15, "two strings that fill it exactly")
	// collections
	beg := attr(TagBegCollection, "media-col", nil)
	member := attr(TagMemberName, "", []byte("media-size"))
	endc := attr(TagEndCollection, "", nil)
	f(hostile(op, attr(TagEndCollection, "x", nil), end), Limits{}, 9, "endCollection without begCollection")
	f(hostile(op, attr(TagKeyword, "x", []byte("a")), member, end), Limits{}, 16, "memberAttrName outside a collection")
	f(hostile(op, beg, member, attr(TagKeyword, "other", []byte("a")), end), Limits{}, 39, `attribute "other" starts inside a collection of "media-col"`)
	f(hostile(op, beg, member, end), Limits{}, 38, `attribute "media-col" ends inside a collection`)
	f(hostile(op, beg, member, []byte{TagJob}, end), Limits{}, 38, "ends inside a collection")
	f(hostile(op, beg, endc, endc, end), Limits{}, 28, "endCollection without begCollection")
	f(hostile(op, attr(TagEndCollection, "x", []byte("z")), end), Limits{}, 13, "must be 0 bytes, not 1")
	deep := hostile(op, beg)
	for range 3 {
		deep = append(deep, attr(TagBegCollection, "", nil)...)
	}
	f(deep, Limits{MaxDepth: 3}, 9+14+2*5, "collections nested deeper than 3")
	// the count of values
	many := hostile(op, cs)
	for range 3 {
		many = append(many, attr(TagKeyword, "", []byte("k"))...)
	}
	f(append(many, end...), Limits{MaxValues: 3}, 9+28+2*6, "more than 3 values")
}

// TestDecodeAccepts: what a message may hold besides the usual.
func TestDecodeAccepts(t *testing.T) {
	f := func(data []byte, check func(m *Message) bool) {
		t.Helper()
		m, err := Decode(data, Limits{})
		if err != nil {
			t.Errorf("% x: %v", data, err)
			return
		}
		if !check(m) {
			t.Errorf("% x: decoded %+v", data, m)
		}
		back, err := m.AppendBinary(nil)
		if err != nil || !bytes.Equal(append(back, m.Data...), data) {
			t.Errorf("% x: encoded back to % x, %v", data, back, err)
		}
	}
	// no group at all; empty groups; data after the end tag
	f(hostile(end), func(m *Message) bool { return len(m.Groups) == 0 })
	f(hostile(op, []byte{TagJob}, end), func(m *Message) bool { return len(m.Groups) == 2 && len(m.Groups[1].Attrs) == 0 })
	f(hostile(op, cs, end, []byte("%PDF-1.7")), func(m *Message) bool { return string(m.Data) == "%PDF-1.7" })
	// out-of-band values, a tag this package does not know, a 1setOf
	f(hostile(op, attr(TagNoValue, "job-name", nil), attr(0x7F, "ext", []byte{0, 0, 0x12, 0x34, 'x'}), end),
		func(m *Message) bool { return m.Groups[0].Attrs[1].Values[0].Tag == 0x7F })
	f(hostile(op, attr(TagKeyword, "k", []byte("a")), attr(TagKeyword, "", []byte("b")), attr(TagInteger, "", []byte{0, 0, 0, 7}), end),
		func(m *Message) bool {
			v := m.Groups[0].Attrs[0].Values
			n, ok := v[2].Int()
			return len(v) == 3 && v[1].String() == "b" && ok && n == 7
		})
	// a with-language string reads as its text
	f(hostile(op, attr(TagTextWithLang, "status-message", []byte{0, 2, 'e', 'n', 0, 2, 'h', 'i'}), end),
		func(m *Message) bool { return m.Groups[0].Attrs[0].Values[0].String() == "hi" })
	// nested collections within the depth
	f(hostile(op, attr(TagBegCollection, "c", nil), attr(TagMemberName, "", []byte("m")), attr(TagBegCollection, "", nil),
		attr(TagEndCollection, "", nil), attr(TagEndCollection, "", nil), attr(TagKeyword, "next", []byte("x")), end),
		func(m *Message) bool { return len(m.Groups[0].Attrs) == 2 })
}

// TestEncodeRefuses: a message that cannot be encoded is an error.
func TestEncodeRefuses(t *testing.T) {
	f := func(m Message, msg string) {
		t.Helper()
		_, err := m.AppendBinary(nil)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%+v: %v; want ...%s...", m, err, msg)
		}
	}
	one := func(a Attribute) Message { return Message{Groups: []Group{{Tag: TagOperation, Attrs: []Attribute{a}}}} }
	f(one(Attribute{Name: "", Values: []Value{Keyword("x")}}), "attribute name of 0 bytes")
	f(one(Attribute{Name: strings.Repeat("n", 32768), Values: []Value{Keyword("x")}}), "attribute name of 32768 bytes")
	f(one(Attribute{Name: "job-name"}), `attribute "job-name" has no value`)
	f(one(Attribute{Name: "job-name", Values: []Value{Name(strings.Repeat("x", 32768))}}), "value of 32768 bytes")
	f(one(Attribute{Name: "job-name", Values: []Value{{Tag: TagEnd}}}), "value tag 0x03 is a delimiter tag")
	f(Message{Groups: []Group{{Tag: 0x21}}}, "group tag 0x21 is not a delimiter tag")
	f(Message{Groups: []Group{{Tag: TagEnd}}}, "group tag 0x03 is not a delimiter tag")
}

// TestValues: the value makers and readers.
func TestValues(t *testing.T) {
	if n, ok := Integer(-5).Int(); !ok || n != -5 {
		t.Errorf("Integer(-5).Int() = %d, %v", n, ok)
	}
	if n, ok := Enum(9).Int(); !ok || n != 9 {
		t.Errorf("Enum(9).Int() = %d, %v", n, ok)
	}
	if _, ok := Keyword("9").Int(); ok {
		t.Error("a keyword read as an integer")
	}
	if _, ok := (Value{TagInteger, []byte{1}}).Int(); ok {
		t.Error("a 1-byte integer read as an integer")
	}
	if s := (Value{TagNameWithLang, []byte{0, 9}}).String(); s != "\x00\x09" {
		t.Errorf("a broken nameWithLanguage reads %q", s)
	}
	if b := Boolean(true); b.Tag != TagBoolean || b.Data[0] != 1 || Boolean(false).Data[0] != 0 {
		t.Error("Boolean")
	}
}
