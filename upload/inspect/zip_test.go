package inspect

import (
	"github.com/lodge-mail/lodge/internal/testdoc"

	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestZipGood(t *testing.T) {
	pdf := testdoc.OnePagePDF()
	data := zipOf(t, "a.pdf", string(pdf), "meta.json", `{"letters":[]}`, "b.PS", psTwoPages, "c.xps", string(twoPageXPS(t)))
	// a directory entry is skipped
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	w.Create("docs/")
	fw, _ := w.Create("d.xml")
	fw.Write([]byte("<pack/>"))
	w.Close()

	a, err := OpenZip(bytes.NewReader(data), int64(len(data)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{"a.pdf", int64(len(pdf)), PDF}, {"meta.json", 14, JSON}, {"b.PS", int64(len(psTwoPages)), PostScript}, {"c.xps", int64(len(twoPageXPS(t))), XPS}}
	if got := a.Entries(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	var out bytes.Buffer
	if n, err := a.Extract("a.pdf", &out); err != nil || n != int64(len(pdf)) || !bytes.Equal(out.Bytes(), pdf) {
		t.Errorf("Extract a.pdf: %d, %v", n, err)
	}
	if _, err := a.Extract("A.PDF", io.Discard); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Extract of another case: %v", err)
	}
	if _, err := a.Extract("nope.pdf", io.Discard); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Extract of a missing entry: %v", err)
	}

	dir := t.TempDir()
	got, err := a.ExtractTo(dir)
	if err != nil || len(got) != 4 {
		t.Fatalf("ExtractTo: %v, %v", got, err)
	}
	for _, x := range got {
		b, err := os.ReadFile(x.Path)
		if err != nil || int64(len(b)) != x.Size || x.Path != filepath.Join(dir, x.Name) {
			t.Errorf("%s: %d bytes, %v", x.Path, len(b), err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".inspect-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// again: the files exist, nothing is replaced, nothing extra is left
	if _, err := a.ExtractTo(dir); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second ExtractTo: %v", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 4 {
		t.Errorf("%d files after the failed ExtractTo", len(names))
	}

	dirOnly := buf.Bytes()
	a, err = OpenZip(bytes.NewReader(dirOnly), int64(len(dirOnly)), Limits{})
	if err != nil || len(a.Entries()) != 1 || a.Entries()[0].Name != "d.xml" {
		t.Errorf("directory entry: %v, %v", a, err)
	}
	empty := []byte("PK\x05\x06" + strings.Repeat("\x00", 18))
	if a, err := OpenZip(bytes.NewReader(empty), int64(len(empty)), Limits{}); err != nil || len(a.Entries()) != 0 {
		t.Errorf("empty archive: %v", err)
	}
}

// zeros deflates n zero bytes (n a multiple of 1 MiB). One MiB is
// deflated and its sync-flushed segment repeated: deflate segments that
// end byte-aligned concatenate, and a segment of zeros refers back only to
// zeros, so this is the deflated file without the cost of compressing it.
func zeros(t testing.TB, n int64) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	w.Write(make([]byte, 1<<20))
	w.Flush()
	seg := bytes.Clone(buf.Bytes())
	buf.Reset()
	w.Close()
	return append(bytes.Repeat(seg, int(n>>20)), buf.Bytes()...)
}

func TestZeros(t *testing.T) {
	r := flate.NewReader(bytes.NewReader(zeros(t, 3<<20)))
	b, err := io.ReadAll(r)
	if err != nil || len(b) != 3<<20 || bytes.ContainsFunc(b, func(r rune) bool { return r != 0 }) {
		t.Fatalf("zeros: %d bytes, %v", len(b), err)
	}
}

// TestZipHostile: archives built to harm the server. Each must be refused
// by OpenZip with the given category and message, before any extraction.
func TestZipHostile(t *testing.T) {
	pdf := testdoc.OnePagePDF()
	f := func(name string, data []byte, lim Limits, want error, msg string) {
		t.Helper()
		a, err := OpenZip(bytes.NewReader(data), int64(len(data)), lim)
		if a != nil || !errors.Is(err, want) || err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %v containing %q", name, err, want, msg)
		}
	}
	stored := func(name string, data []byte) rawEntry { return rawEntry{name: name, data: data} }

	// 100 MB of zeros deflated: about 100 KB, a ratio near 1000:1.
	bomb := zeros(t, 100<<20)
	f("zip bomb by ratio", rawZip(rawEntry{name: "bomb.pdf", data: bomb, method: 8, usize: 100 << 20, crc: 1}),
		Limits{MaxEntryBytes: 200 << 20}, ErrLimit, "more than the limit of 100:1")
	f("zip bomb by size", rawZip(rawEntry{name: "bomb.pdf", data: bomb, method: 8, usize: 100 << 20, crc: 1}),
		Limits{MaxEntryBytes: 10 << 20}, ErrLimit, "more than the limit of 10485760")
	var many []rawEntry
	for i := range 60 {
		many = append(many, rawEntry{name: fmt.Sprintf("%d.pdf", i), data: bomb, method: 8, usize: 2 << 20, crc: 1})
	}
	f("many entries of 20:1, 120 MB in all", rawZip(many...), Limits{MaxRatio: 1000, MaxTotalBytes: 100 << 20}, ErrLimit, "more than the limit of 104857600 bytes")
	f("declared ratio from nothing", rawZip(rawEntry{name: "a.pdf", method: 8, usize: 2 << 20}), Limits{}, ErrLimit, "from nothing")

	// Overlapping entries: a.pdf's stored data is b.pdf's local header and
	// data, so one stream is read twice.
	inner := append(localHeader("b.pdf", stored("b.pdf", pdf)), pdf...)
	f("overlapping entries", rawZip(stored("a.pdf", inner), rawEntry{name: "b.pdf", data: pdf, cdOnly: true, offset: 30 + len("a.pdf")}),
		Limits{}, ErrUnsafe, `"a.pdf" and "b.pdf" overlap`)
	// c.pdf's record points at b.pdf's local header: the names disagree.
	f("record pointing at another entry", rawZip(stored("a.pdf", pdf), stored("b.pdf", pdf), rawEntry{name: "c.pdf", data: pdf, cdOnly: true, offset: 30 + 5 + len(pdf)}),
		Limits{}, ErrUnsafe, `"c.pdf" is called "b.pdf" in its local header`)
	f("record pointing into data", rawZip(stored("a.pdf", pdf), rawEntry{name: "c.pdf", data: pdf, cdOnly: true, offset: 40}),
		Limits{}, ErrMalformed, "no local header at offset 40")
	f("local name differs", rawZip(rawEntry{name: "a.pdf", localName: "../a.pdf", data: pdf}), Limits{}, ErrUnsafe, `called "../a.pdf" in its local header`)

	// Names.
	f("../evil.pdf", rawZip(stored("../evil.pdf", pdf)), Limits{}, ErrUnsafe, "climbs out")
	f("a/../../evil.pdf", rawZip(stored("a/../../evil.pdf", pdf)), Limits{}, ErrUnsafe, "climbs out")
	f("/abs.pdf", rawZip(stored("/abs.pdf", pdf)), Limits{}, ErrUnsafe, "absolute path")
	f(`\abs.pdf`, rawZip(stored(`\abs.pdf`, pdf)), Limits{}, ErrUnsafe, "absolute path")
	f(`C:\x.pdf`, rawZip(stored(`C:\x.pdf`, pdf)), Limits{}, ErrUnsafe, "drive letter")
	f("C:x.pdf", rawZip(stored("C:x.pdf", pdf)), Limits{}, ErrUnsafe, "drive letter")
	f(`a\b.pdf`, rawZip(stored(`a\b.pdf`, pdf)), Limits{}, ErrUnsafe, "backslash")
	f(`..\evil.pdf`, rawZip(stored(`..\evil.pdf`, pdf)), Limits{}, ErrUnsafe, "backslash")
	f("a/b.pdf", rawZip(stored("a/b.pdf", pdf)), Limits{}, ErrUnsafe, "must not contain paths")
	f("a.pdf:stream", rawZip(stored("a.pdf:x.pdf", pdf)), Limits{}, ErrUnsafe, "colon")
	f("NUL in name", rawZip(stored("a\x00.pdf", pdf)), Limits{}, ErrUnsafe, "control characters")
	f("newline in name", rawZip(stored("a\n.pdf", pdf)), Limits{}, ErrUnsafe, "control characters")
	f("not UTF-8", rawZip(stored("\xff.pdf", pdf)), Limits{}, ErrUnsafe, "not valid UTF-8")
	f("empty name", rawZip(stored("", pdf)), Limits{}, ErrUnsafe, "empty name")
	f("hidden", rawZip(stored(".a.pdf", pdf)), Limits{}, ErrUnsafe, "hidden")
	f("trailing dot", rawZip(stored("a.pdf.", pdf)), Limits{}, ErrUnsafe, "ends with a space or dot")
	f("trailing space", rawZip(stored("a.pdf ", pdf)), Limits{}, ErrUnsafe, "ends with a space or dot")
	f("device name", rawZip(stored("CON.pdf", pdf)), Limits{}, ErrUnsafe, "reserved device name")
	f("long name", rawZip(stored(strings.Repeat("a", 300)+".pdf", pdf)), Limits{}, ErrUnsafe, "longer than 255")
	f("duplicate names differing in case", rawZip(stored("Letter.pdf", pdf), stored("letter.PDF", pdf)), Limits{}, ErrUnsafe,
		`"Letter.pdf" and "letter.PDF" have the same name`)

	// Entry kinds and flags.
	f("symlink entry", rawZip(rawEntry{name: "a.pdf", data: []byte("/etc/passwd"), creator: 3, extAttr: 0o120777 << 16}), Limits{}, ErrUnsafe, "symbolic link")
	f("device entry", rawZip(rawEntry{name: "a.pdf", data: pdf, creator: 3, extAttr: 0o060644 << 16}), Limits{}, ErrUnsafe, "not a regular file")
	f("encrypted entry flag", rawZip(rawEntry{name: "a.pdf", data: pdf, flags: 1}), Limits{}, ErrEncrypted, "encrypted")
	f("strong encryption flag", rawZip(rawEntry{name: "a.pdf", data: pdf, flags: 1 << 6}), Limits{}, ErrUnsafe, "encrypted")
	f("AES method", rawZip(rawEntry{name: "a.pdf", data: pdf, method: 99}), Limits{}, ErrEncrypted, "encrypted")
	f("bzip2 method", rawZip(rawEntry{name: "a.pdf", data: pdf, method: 12}), Limits{}, ErrUnsafe, "method 12")
	f("stored sizes differ", rawZip(rawEntry{name: "a.pdf", data: pdf, usize: 10}), Limits{}, ErrMalformed, "declares")
	f("directory with data", rawZip(stored("docs/", pdf)), Limits{}, ErrUnsafe, "directory entry")

	// Nested archives.
	inner = zipOf(t, "x.pdf", string(pdf))
	f("nested zip", zipOf(t, "inner.zip", string(inner)), Limits{}, ErrUnsafe, `"inner.zip" is a nested archive`)
	f("nested zip named .pdf", zipOf(t, "inner.pdf", string(inner)), Limits{}, ErrUnsafe, `"inner.pdf" is a nested archive`)
	f("nested gzip named .pdf", zipOf(t, "inner.pdf", "\x1f\x8b\x08\x00junk"), Limits{}, ErrUnsafe, "nested archive")
	f("nested 7z by name", zipOf(t, "inner.7z", "7z"), Limits{}, ErrUnsafe, "nested archive")
	f("nested jar by name", zipOf(t, "x.jar", "x"), Limits{}, ErrUnsafe, "nested archive")
	f("nested rar named .xml", zipOf(t, "x.xml", "Rar!\x1a\x07\x00"), Limits{}, ErrUnsafe, "nested archive")
	f("xps that is a zip in disguise", zipOf(t, "x.xps", "Rar!\x1a\x07\x00"), Limits{}, ErrUnsafe, "nested archive")

	// Counts.
	var entries []rawEntry
	for i := range 10001 {
		entries = append(entries, stored(fmt.Sprintf("%d.json", i), []byte("{}")))
	}
	f("10,001 entries", rawZip(entries...), Limits{}, ErrLimit, "has 10001 entries, more than the limit of 1000")
	f("1,001 entries", rawZip(entries[:1001]...), Limits{}, ErrLimit, "has 1001 entries")
	if _, err := OpenZip(bytes.NewReader(rawZip(entries[:1000]...)), int64(len(rawZip(entries[:1000]...))), Limits{}); err != nil {
		t.Errorf("1,000 entries: %v", err)
	}

	// Types inside.
	f("a .pdf that is JSON", zipOf(t, "a.pdf", "{}"), Limits{}, ErrType, `"a.pdf": the extension says PDF but the content is JSON`)
	f("a .txt", zipOf(t, "a.txt", "hello"), Limits{}, ErrType, "not accepted")
	f("no extension", zipOf(t, "README", "hello"), Limits{}, ErrNoExtension, "has no extension")
	f("empty file", zipOf(t, "a.pdf", ""), Limits{}, ErrType, "is empty")

	// Structure.
	good := zipOf(t, "a.pdf", string(pdf))
	f("not a zip", pdf, Limits{}, ErrMalformed, "no end of central directory")
	f("tiny", []byte("PK"), Limits{}, ErrMalformed, "too short")
	cut := bytes.Clone(good)
	le.PutUint32(cut[len(cut)-6:], uint32(len(cut))) // central directory offset beyond the end
	f("central directory out of bounds", cut, Limits{}, ErrMalformed, "out of bounds")
	cut = bytes.Clone(good)
	le.PutUint16(cut[len(cut)-12:], 40000) // entries
	le.PutUint16(cut[len(cut)-14:], 40000)
	f("end record lies about the count", cut, Limits{MaxEntries: 50000}, ErrMalformed, "more than its central directory")
	cut = bytes.Clone(good)
	le.PutUint16(cut[len(cut)-18:], 1) // disk number
	f("multi-disk", cut, Limits{}, ErrUnsafe, "multi-disk")
}

// TestZipLies: archives whose declared sizes and checksums are wrong are
// caught while extracting, and never produce more than declared.
func TestZipLies(t *testing.T) {
	pdf := testdoc.OnePagePDF()
	f := func(name string, data []byte, entry string, want error, msg string) {
		t.Helper()
		a, err := OpenZip(bytes.NewReader(data), int64(len(data)), Limits{})
		if err != nil {
			t.Fatalf("%s: OpenZip: %v", name, err)
		}
		var n int64
		var e Entry
		for _, x := range a.Entries() {
			if x.Name == entry {
				e = x
			}
		}
		n, err = a.Extract(entry, io.Discard)
		if n > e.Size || !errors.Is(err, want) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %d bytes (declared %d), %v; want %v containing %q", name, n, e.Size, err, want, msg)
		}
		if _, err := a.ExtractTo(t.TempDir()); !errors.Is(err, want) {
			t.Errorf("%s: ExtractTo: %v", name, err)
		}
	}
	lie := func(usize uint32) []byte {
		// The head is a PDF (so the type check passes), then 64 KiB of
		// zeros.
		var buf bytes.Buffer
		w, _ := flate.NewWriter(&buf, 9)
		w.Write(pdf)
		w.Write(make([]byte, 64<<10))
		w.Close()
		return rawZip(rawEntry{name: "a.pdf", data: buf.Bytes(), method: 8, usize: usize, crc: 1})
	}
	f("inflates beyond its declared size", lie(4096), "a.pdf", ErrUnsafe, "more data than its declared size")
	f("ends before its declared size", lie(200<<10), "a.pdf", ErrMalformed, "short of its declared size")
	f("wrong checksum", rawZip(rawEntry{name: "a.pdf", data: pdf, crc: 12345}), "a.pdf", ErrMalformed, "checksum mismatch")
	var bad bytes.Buffer
	w, _ := flate.NewWriter(&bad, 9)
	w.Write(pdf)
	w.Write(bytes.Repeat([]byte(" "), 4096))
	w.Flush()
	corrupt := append(bad.Bytes(), 0xff, 0xff, 0xff, 0xff, 0xff)
	f("corrupt deflate after the head", rawZip(rawEntry{name: "a.pdf", data: corrupt, method: 8, usize: uint32(len(pdf)) + 4196, crc: 1}), "a.pdf", ErrMalformed, "corrupt data")
}

func TestZipLimitsExact(t *testing.T) {
	pdf := testdoc.OnePagePDF()
	data := zipOf(t, "a.pdf", string(pdf), "b.pdf", string(pdf))
	lim := Limits{MaxEntries: 2, MaxEntryBytes: int64(len(pdf)), MaxTotalBytes: 2 * int64(len(pdf))}
	if _, err := OpenZip(bytes.NewReader(data), int64(len(data)), lim); err != nil {
		t.Errorf("at the limits: %v", err)
	}
	for _, l := range []Limits{
		{MaxEntries: 1}, {MaxEntryBytes: int64(len(pdf)) - 1}, {MaxTotalBytes: 2*int64(len(pdf)) - 1},
	} {
		if _, err := OpenZip(bytes.NewReader(data), int64(len(data)), l); !errors.Is(err, ErrLimit) {
			t.Errorf("%+v: %v", l, err)
		}
	}
}

// zip64 builds a one-entry archive whose sizes, offset and counts are all
// in ZIP64 records.
func zip64(name string, data []byte) []byte {
	var buf bytes.Buffer
	e := rawEntry{name: name, data: data}
	buf.Write(localHeader(name, e))
	buf.Write(data)
	cdOff := buf.Len()
	h := centralHeader(e, 0)
	le.PutUint32(h[20:], 0xFFFFFFFF)
	le.PutUint32(h[24:], 0xFFFFFFFF)
	le.PutUint32(h[42:], 0xFFFFFFFF)
	le.PutUint16(h[30:], 28)
	extra := make([]byte, 28)
	le.PutUint16(extra, 1)
	le.PutUint16(extra[2:], 24)
	le.PutUint64(extra[4:], uint64(len(data)))
	le.PutUint64(extra[12:], uint64(len(data)))
	le.PutUint64(extra[20:], 0)
	buf.Write(h)
	buf.Write(extra)
	cdLen := buf.Len() - cdOff
	end64 := buf.Len()
	r := make([]byte, 56)
	le.PutUint32(r, sigZip64End)
	le.PutUint64(r[4:], 44)
	le.PutUint64(r[24:], 1)
	le.PutUint64(r[32:], 1)
	le.PutUint64(r[40:], uint64(cdLen))
	le.PutUint64(r[48:], uint64(cdOff))
	buf.Write(r)
	loc := make([]byte, 20)
	le.PutUint32(loc, sigZip64Loc)
	le.PutUint64(loc[8:], uint64(end64))
	le.PutUint32(loc[16:], 1)
	buf.Write(loc)
	end := endRecord(0xFFFF, 0, 0)
	le.PutUint32(end[12:], 0xFFFFFFFF)
	le.PutUint32(end[16:], 0xFFFFFFFF)
	buf.Write(end)
	return buf.Bytes()
}

func TestZip64(t *testing.T) {
	pdf := testdoc.OnePagePDF()
	data := zip64("a.pdf", pdf)
	a, err := OpenZip(bytes.NewReader(data), int64(len(data)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if e := a.Entries(); len(e) != 1 || e[0].Size != int64(len(pdf)) || e[0].Kind != PDF {
		t.Errorf("entries %v", e)
	}
	if _, err := a.Extract("a.pdf", &out); err != nil || !bytes.Equal(out.Bytes(), pdf) {
		t.Errorf("extract: %v", err)
	}
	// A ZIP64 size beyond the limits, and a ZIP64 record out of bounds.
	big := bytes.Clone(data)
	i := bytes.Index(big, []byte{1, 0, 24, 0})
	le.PutUint64(big[i+4:], 1<<40)
	if _, err := OpenZip(bytes.NewReader(big), int64(len(big)), Limits{}); !errors.Is(err, ErrLimit) {
		t.Errorf("1 TB entry: %v", err)
	}
	bad := bytes.Clone(data)
	le.PutUint64(bad[len(bad)-22-20+8:], 1<<40)
	if _, err := OpenZip(bytes.NewReader(bad), int64(len(bad)), Limits{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("ZIP64 end record out of bounds: %v", err)
	}
	bad = bytes.Clone(data)
	le.PutUint64(bad[len(bad)-22-20-56+24:], 1<<33) // records on this disk
	le.PutUint64(bad[len(bad)-22-20-56+32:], 1<<33) // records
	if _, err := OpenZip(bytes.NewReader(bad), int64(len(bad)), Limits{MaxEntries: 1 << 40}); !errors.Is(err, ErrMalformed) {
		t.Errorf("ZIP64 claiming 2^33 entries: %v", err)
	}
	if _, err := OpenZip(bytes.NewReader(bad), int64(len(bad)), Limits{}); !errors.Is(err, ErrLimit) {
		t.Errorf("ZIP64 claiming 2^33 entries: %v", err)
	}
}
