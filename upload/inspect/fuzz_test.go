package inspect

import (
	"github.com/lodge-mail/lodge/internal/testenv"

	"github.com/lodge-mail/lodge/internal/testdoc"

	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzSniff: Sniff never panics, looks at no more than SniffLen bytes,
// and CheckType agrees with it.
func FuzzSniff(f *testing.F) {
	for _, s := range []string{"%PDF-1.7", "%!PS-Adobe-3.0", "PK\x03\x04", "PK\x05\x06", "{}", "[", "<?xml", "<a", "\xEF\xBB\xBF{",
		"\xC5\xD0\xD3\xC6", "\x1b%-12345X@PJL\r\n%!PS", "junk %PDF-", "\xFF\xFE<\x00", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		k := Sniff(head)
		if len(head) > SniffLen {
			if k2 := Sniff(head[:SniffLen]); k2 != k {
				t.Fatalf("Sniff looked past SniffLen: %s vs %s", k, k2)
			}
		}
		ext := string(k)
		if k == Unknown {
			ext = "pdf"
		}
		got, err := CheckType("file."+ext, head)
		switch {
		case k == Unknown && err == nil:
			t.Fatalf("CheckType accepted unknown content as %s", got)
		case k != Unknown && (err != nil || got != k):
			t.Fatalf("Sniff says %s, CheckType says %s, %v", k, got, err)
		case err != nil && !errors.Is(err, ErrType):
			t.Fatalf("CheckType error %v is not ErrType", err)
		}
	})
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// FuzzZip: any bytes as a ZIP. OpenZip and extracting every entry never
// panic, never produce more than the entry declared, and stay within the
// limits; an archive that opens lists only entries that pass the name
// checks.
func FuzzZip(f *testing.F) {
	pdf := testdoc.OnePagePDF()
	for _, seed := range [][]byte{
		zipOf(f, "a.pdf", string(pdf), "m.json", "{}"),
		twoPageXPS(f),
		rawZip(rawEntry{name: "a.pdf", data: pdf}),
		rawZip(rawEntry{name: "../a.pdf", data: pdf}),
		rawZip(rawEntry{name: "a.pdf", data: pdf, flags: 1}),
		rawZip(rawEntry{name: "a.pdf", data: pdf}, rawEntry{name: "b.pdf", data: pdf, cdOnly: true, offset: 1}),
		[]byte("PK\x05\x06" + string(make([]byte, 18))),
	} {
		f.Add(seed)
	}
	lim := Limits{MaxEntries: 20, MaxEntryBytes: 1 << 20, MaxTotalBytes: 2 << 20, MaxRatio: 50}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, pkg := range []bool{false, true} {
			a, err := openZip(bytes.NewReader(data), int64(len(data)), lim, pkg)
			if err != nil {
				if len(categoriesOf(err)) == 0 {
					t.Fatalf("error %v has no category", err)
				}
				continue
			}
			var total int64
			for _, e := range a.entries {
				if e.Size > lim.MaxEntryBytes {
					t.Fatalf("entry %q of %d bytes passed", e.Name, e.Size)
				}
				if err := checkName(e.Name, pkg); err != nil {
					t.Fatalf("entry %q passed: %v", e.Name, err)
				}
				var w countWriter
				n, err := a.Extract(e.Name, &w)
				if n != w.n || n > e.Size || err == nil && n != e.Size {
					t.Fatalf("entry %q: %d bytes written of %d declared, %v", e.Name, n, e.Size, err)
				}
				total += n
			}
			if total > lim.MaxTotalBytes {
				t.Fatalf("%d bytes extracted", total)
			}
		}
	})
}

var fuzzLimits = Limits{MaxPages: 1000, MaxPDFObjects: 10000, MaxDepth: 64, Timeout: 5 * time.Second, MaxEntries: 50, MaxEntryBytes: 1 << 20}

func checkCount(t *testing.T, n int, err error) {
	t.Helper()
	switch {
	case err != nil && n != 0:
		t.Fatalf("%d pages and an error %v", n, err)
	case err == nil && (n < 1 || n > fuzzLimits.MaxPages):
		t.Fatalf("%d pages", n)
	case err != nil && len(categoriesOf(err)) == 0:
		t.Fatalf("error %v has no category", err)
	}
}

func FuzzPDFPages(f *testing.F) {
	for _, seed := range [][]byte{testdoc.OnePagePDF(), testdoc.ThreePagePDF(), testdoc.XrefStreamPDF(), testdoc.IncrementalPDF(),
		testdoc.PDFWith("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R] >>"),
		bytes.Replace(testdoc.OnePagePDF(), []byte("startxref"), []byte("startxreg"), 1),
		[]byte("%PDF-1.4\n1 0 obj << /Pages 2 0 R >> endobj 2 0 obj << /Kids [3 0 R] >> endobj 3 0 obj << >> endobj trailer << /Root 1 0 R >>"),
	} {
		f.Add(seed)
	}
	for _, name := range []string{"o40", "o128aes", "o256", "u128rc4", "u256r5"} {
		b, err := os.ReadFile(filepath.Join(encryptedDir, name+".pdf"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, c := range hostileEncrypt {
		f.Add(c.pdf())
	}
	testenv.LimitMinimization(f, "2000x")
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := pages(PDF, bytes.NewReader(data), int64(len(data)), fuzzLimits)
		checkCount(t, n, err)
	})
}

// FuzzPSPages: the DSC comments read as a hint and the reading of
// Ghostscript's output never panic and stay in their bounds. (Ghostscript
// itself runs in TestPostScript: running it per input would fuzz it, not
// this package.)
func FuzzPSPages(f *testing.F) {
	for _, s := range []string{psTwoPages, psAtEnd, "%!PS-Adobe-3.0 EPSF-3.0\n", "%!\n%%Page: 1 1\r\n%%Page: 2 2\r",
		"%!PS-Adobe-3.0\n%%BeginDocument\n%%Page: 1 1\n%%EndDocument\n%%Page: 1 1\n", "%!PS\n%%BeginBinary: 5\n%%Page: 1 1\n",
		"T page 595 842\nT page 612 792\nT error undefined foo\n", "T page 1e308 -1e308\r\nT page NaN Inf\n"} {
		f.Add([]byte(s))
	}
	testenv.LimitMinimization(f, "2000x")
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := psDSC(bytes.NewReader(data), int64(len(data)), fuzzLimits.WithDefaults(), newDeadline(time.Minute))
		if err != nil || h.pages == 0 || h.pages < -1 {
			t.Fatalf("DSC hint %+v, %v", h, err)
		}
		r := parseGhostscript(data, "T", fuzzLimits.MaxPages)
		if r.doc.Pages > fuzzLimits.MaxPages+1 || r.doc.NotA4Pages > r.doc.Pages || len(r.doc.NotA4) > MaxSizeRuns {
			t.Fatalf("parsed %+v", r.doc)
		}
		for i, run := range r.doc.NotA4 {
			if run.First > run.Last || run.Last >= r.doc.Pages || i > 0 && run.First <= r.doc.NotA4[i-1].Last || run.Width < 0 || run.Height < 0 {
				t.Fatalf("runs %+v of %d pages", r.doc.NotA4, r.doc.Pages)
			}
		}
	})
}

// FuzzXPSPages: any bytes as an XPS package, and the same bytes read as
// parts ("name\x00content\x00name\x00content...") stored in a ZIP with
// their CRCs right, so that mutations reach the XML behind the archive's
// checksums. The seeds are small on purpose: the fuzzer minimises every new
// input it finds before going on, and with packages of kilobytes that took
// a whole one-minute run (5 executions).
func FuzzXPSPages(f *testing.F) {
	for _, s := range []string{
		"a.fdseq\x00<DocumentReference Source=\"b.fdoc\"/>\x00b.fdoc\x00<PageContent/><PageContent/>",
		"_rels/.rels\x00<Relationship Type=\"x/fixedrepresentation\" Target=\"/s.fdseq\"/>\x00s.fdseq\x00" +
			"<DocumentReference Source=\"d/d.fdoc\"/><DocumentReference Source=\"/d/d.fdoc#x\"/>\x00d/d.fdoc\x00<PageContent Source=\"p.fpage\"/>",
		"a.fdseq\x00\xFF\xFE<\x00D\x00o\x00c\x00u\x00m\x00e\x00n\x00t\x00R\x00e\x00f\x00e\x00r\x00e\x00n\x00c\x00e\x00/\x00>\x00",
	} {
		f.Add([]byte(s))
		f.Add(partsZip([]byte(s)))
	}
	testenv.LimitMinimization(f, "2000x")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, pkg := range [][]byte{data, partsZip(data)} {
			n, err := pages(XPS, bytes.NewReader(pkg), int64(len(pkg)), fuzzLimits)
			checkCount(t, n, err)
			_ = ZipIsXPS(bytes.NewReader(pkg), int64(len(pkg)))
		}
	})
}

// partsZip stores parts given as "name\x00content\x00name\x00content..."
// (at most 16) in a ZIP.
func partsZip(data []byte) []byte {
	f := bytes.SplitN(data, []byte{0}, 33)
	var es []rawEntry
	for i := 0; i+1 < len(f) && len(es) < 16; i += 2 {
		es = append(es, rawEntry{name: string(f[i]), data: f[i+1]})
	}
	return rawZip(es...)
}
