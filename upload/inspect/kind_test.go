package inspect

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestSniff(t *testing.T) {
	f := func(name string, head []byte, want Kind) {
		t.Helper()
		if got := Sniff(head); got != want {
			t.Errorf("%s: Sniff = %s, want %s", name, got, want)
		}
	}
	f("PDF", []byte("%PDF-1.7\n"), PDF)
	f("PDF after 1000 bytes of junk", append(bytes.Repeat([]byte{'x'}, 1000), "%PDF-1.4"...), PDF)
	f("PDF after 1024 bytes of junk", append(bytes.Repeat([]byte{'x'}, 1024), "%PDF-1.4"...), PDF)
	f("PDF after 1025 bytes of junk", append(bytes.Repeat([]byte{'x'}, 1025), "%PDF-1.4"...), Unknown)
	f("PDF header cut short", []byte("%PDF"), Unknown)
	f("PostScript", []byte("%!PS-Adobe-3.0\n"), PostScript)
	f("PostScript after Ctrl-D", []byte("\x04%!PS-Adobe-3.0\n"), PostScript)
	f("PostScript in a PJL job", []byte("\x1b%-12345X@PJL JOB\r\n@PJL ENTER LANGUAGE=POSTSCRIPT\r\n%!PS-Adobe-3.0\n"), PostScript)
	f("DOS EPS", []byte{0xC5, 0xD0, 0xD3, 0xC6, 30, 0, 0, 0}, PostScript)
	f("%! without PS", []byte("%!\n"), Unknown)
	f("ZIP", []byte("PK\x03\x04\x14\x00"), ZIP)
	f("empty ZIP", []byte("PK\x05\x06\x00\x00"), ZIP)
	f("XPS (a ZIP)", twoPageXPS(t), ZIP)
	f("JSON object", []byte(`{"letters":[]}`), JSON)
	f("JSON array after space", []byte("\r\n\t [1]"), JSON)
	f("JSON after a BOM", []byte("\xEF\xBB\xBF{}"), JSON)
	f("XML declaration", []byte(`<?xml version="1.0"?><pack/>`), XML)
	f("XML element", []byte(`<pack><letters/></pack>`), XML)
	f("XML after BOM and space", []byte("\xEF\xBB\xBF \n<pack/>"), XML)
	f("XML comment", []byte("<!-- c --><pack/>"), XML)
	f("XML UTF-16LE", []byte("\xFF\xFE<\x00?\x00"), XML)
	f("XML UTF-16BE after white space", []byte("\xFE\xFF\x00\r\x00\n\x00<\x00p"), XML)
	f("XML UTF-16LE, no byte order mark", []byte("<\x00?\x00x\x00m\x00l\x00 \x00"), XML)
	f("XML UTF-16BE, no byte order mark", []byte("\x00<\x00p\x00a\x00c\x00k"), XML)
	f("XML UTF-16LE, a non-ASCII name", []byte("\xFF\xFE<\x00\xe9\x00"), XML)
	f("JSON in UTF-16", []byte("\xFF\xFE{\x00}\x00"), Unknown)
	f("UTF-16 < and a digit, no byte order mark", []byte("<\x001\x00"), Unknown)
	f("UTF-16 byte order mark only", []byte("\xFF\xFE"), Unknown)
	f("< and a digit", []byte("<1>"), Unknown)
	f("lone <", []byte("<"), Unknown)
	f("text", []byte("hello"), Unknown)
	f("empty", nil, Unknown)
	f("BOM only", []byte("\xEF\xBB\xBF"), Unknown)
	f("PDF wins over JSON junk prefix only after start signatures", []byte(`{"x":"%PDF-1.4"}`), JSON)
	f("PostScript with %PDF- later", []byte("%!PS-Adobe-3.0\n% %PDF-1.4\n"), PostScript)
}

func TestKindForExtension(t *testing.T) {
	f := func(name string, want Kind, ok bool) {
		t.Helper()
		if got, gotOK := KindForExtension(name); got != want || gotOK != ok {
			t.Errorf("KindForExtension(%q) = %s, %v; want %s, %v", name, got, gotOK, want, ok)
		}
	}
	f("a.pdf", PDF, true)
	f("A.PDF", PDF, true)
	f("letter.Ps", PostScript, true)
	f("doc.xps", XPS, true)
	f("meta.JSON", JSON, true)
	f("meta.xml", XML, true)
	f("bundle.zip", ZIP, true)
	f("a.tar.gz", Unknown, false)
	f("a.eps", Unknown, false)
	f("pdf", Unknown, false)
	f(".pdf", Unknown, false)
	f("a.", Unknown, false)
	f("dir.pdf/file", Unknown, false)
	f(`c:\dir.x\a.pdf`, PDF, true)
	f("", Unknown, false)
}

func TestCheckType(t *testing.T) {
	pdf := []byte("%PDF-1.7\n")
	f := func(name string, head []byte, want Kind, wantErr error, msg string) {
		t.Helper()
		got, err := CheckType(name, head)
		if got != want || !errors.Is(err, wantErr) || err != nil && !strings.Contains(err.Error(), msg) {
			t.Errorf("CheckType(%q) = %s, %v; want %s, %v containing %q", name, got, err, want, wantErr, msg)
		}
	}
	f("a.pdf", pdf, PDF, nil, "")
	f("a.PDF", pdf, PDF, nil, "")
	f("a.ps", []byte("%!PS-Adobe-3.0"), PostScript, nil, "")
	f("a.xps", twoPageXPS(t), XPS, nil, "")
	f("a.zip", twoPageXPS(t), ZIP, nil, "")
	f("m.json", []byte(`{}`), JSON, nil, "")
	f("m.xml", []byte(`<pack/>`), XML, nil, "")
	f("a.pdf", []byte("PK\x03\x04"), Unknown, ErrType, `"a.pdf": the extension says PDF but the content is ZIP`)
	f("a.json", pdf, Unknown, ErrType, "says JSON but the content is PDF")
	f("a.pdf", []byte("hello"), Unknown, ErrType, "content is no recognised type")
	f("a.pdf", nil, Unknown, ErrType, "is empty")
	f("a.txt", []byte("hello"), Unknown, ErrType, ".txt are not accepted (accepted: pdf, ps, xps, json, xml, zip)")
	f("a.exe", []byte("MZ"), Unknown, ErrType, "not accepted")
	f("README", []byte("hello"), Unknown, ErrNoExtension, "has no extension")
	_, err := CheckType("README", nil)
	if !errors.Is(err, ErrType) {
		t.Errorf("no extension: %v is not ErrType too", err)
	}
}
