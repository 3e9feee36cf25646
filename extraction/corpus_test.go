package extraction

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/internal/testdoc/corpus"
	"github.com/lodge-mail/lodge/internal/tests3"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/production"
)

// TestMain makes the test binary the text reader child when started as
// one, so that the tests read documents as the server does.
func TestMain(m *testing.M) {
	RunChildIfRequested()
	code := m.Run()
	tests3.Stop()
	os.Exit(code)
}

// corpusDir returns a generated corpus of n letters, shared by the test
// binaries of one machine through a cache in the temporary directory.
func corpusDir(t testing.TB, n int) (string, *corpus.Manifest) {
	t.Helper()
	dir, m, err := corpus.Cached(context.Background(), filepath.Join(os.TempDir(), "lodge-lettercorpus"), corpus.Options{Letters: n})
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// extractDoc runs the auto processor over one corpus document, as the
// extract stage does.
//
// With an object store (x's Config.Blobs) the document is put into it and
// the mailing names it by its key only: its Path names no file.
func extractDoc(t testing.TB, x *Extractor, dir string, d corpus.Document) []pipeline.Letter {
	t.Helper()
	m := &pipeline.Mailing{EPID: "C" + strings.NewReplacer(".", "_", "-", "_").Replace(d.File), Account: "DEM00001", Auto: true,
		Production: pipeline.Production{SplitPages: d.PagesPerLetter},
		Files:      []pipeline.File{{Name: d.File, Kind: d.Format, Path: filepath.Join(dir, d.File), Pages: d.Pages}}}
	if blobs := x.cfg.Blobs; blobs != nil {
		f := &m.Files[0]
		f.Blob = "blobs/" + m.EPID + "/" + d.File
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := blobs.Put(context.Background(), f.Blob, bytes.NewReader(data), int64(len(data))); err != nil {
			t.Fatal(err)
		}
		f.Path = filepath.Join(t.TempDir(), "on-another-node", d.File)
	}
	ls, err := x.Extract(context.Background(), m)
	if err != nil {
		t.Fatalf("%s: %v", d.File, err)
	}
	return ls
}

// newExtractor returns an auto processor with production's conversion of
// PostScript, both reading documents through blobs (nil: at their Path).
func newExtractor(t testing.TB, blobs blob.Store) *Extractor {
	t.Helper()
	p, err := production.New(production.Config{DataDir: t.TempDir(), Blobs: blobs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(Config{PDF: p.PDF, DocumentError: production.DocumentError, Blobs: blobs}, nil)
}

// stores are where the tests keep documents: nil, at their Path (one
// node); an object store on the local disk; S3 (a real versitygw).
var stores = []struct {
	name string
	new  func(t *testing.T) blob.Store
}{
	{"disk", func(*testing.T) blob.Store { return nil }},
	{"local", func(t *testing.T) blob.Store {
		s, err := blob.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
	{"s3", func(t *testing.T) blob.Store {
		srv := tests3.Shared(t)
		s, err := blob.NewS3(context.Background(), blob.S3Config{Bucket: tests3.NewBucket(t), Endpoint: srv.Endpoint(),
			AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey(), CacheDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

// holdWords are what a hold reason says for each class of the corpus's
// non-conforming letters.
var holdWords = map[string]string{
	corpus.HoldNoAddressBefore: "comes before the first address",
	corpus.HoldScan:            "shows only an image",
	corpus.HoldUnreadable:      "cannot be read",
	corpus.HoldWindowEdge:      "runs past the edge of the envelope window zone",
}

// checkCorpus compares what the auto processor reads in every document
// of a corpus with what the corpus says is there: every letter's pages,
// address lines, reference and channels exactly, every non-conforming
// letter held for its reason.
func checkCorpus(t *testing.T, x *Extractor, dir string, m *corpus.Manifest) (letters, pages int) {
	for _, d := range m.Documents {
		got := extractDoc(t, x, dir, d)
		pages += d.Pages
		want := d.Letters
		var lines []string
		if d.Hold != "" {
			first := d.Pages + 1
			if len(want) > 0 {
				first = want[0].FirstPage
			}
			lines = append(lines, fmt.Sprintf("1-%d held:%s", first-1, d.Hold))
		}
		for _, l := range want {
			s := fmt.Sprintf("%d-%d", l.FirstPage, l.LastPage)
			if l.Hold != "" {
				s += " held:" + l.Hold
			} else {
				s += fmt.Sprintf(" %q ref=%q email=%q fax=%q sms=%q", l.Address, l.Reference, l.Email, l.Fax, l.SMS)
			}
			lines = append(lines, s)
		}
		var gotLines []string
		for _, l := range got {
			dp := l.Documents[0]
			s := fmt.Sprintf("%d-%d", dp.PageStart+1, dp.PageEnd+1)
			if l.Status == pipeline.Held {
				class := "?" + l.HoldReason
				for c, w := range holdWords {
					if strings.Contains(l.HoldReason, w) {
						class = c
					}
				}
				s += " held:" + class
			} else {
				s += fmt.Sprintf(" %q ref=%q email=%q fax=%q sms=%q", l.Postal, l.Reference, l.Email, l.Fax, l.SMS)
			}
			gotLines = append(gotLines, s)
		}
		letters += len(want)
		if !slices.Equal(lines, gotLines) {
			t.Errorf("%s (%s, %s, %s): letters differ", d.File, d.Layout, d.Producer, d.Format)
			for i := range max(len(lines), len(gotLines)) {
				var w, g string
				if i < len(lines) {
					w = lines[i]
				}
				if i < len(gotLines) {
					g = gotLines[i]
				}
				if w != g {
					t.Errorf("  letter %d:\n    want %s\n    got  %s", i, w, g)
				}
			}
		}
	}
	return letters, pages
}

// TestCorpus reads the small corpus: every layout and producer, with
// the documents on this node's disk or only in an object store.
func TestCorpus(t *testing.T) {
	dir, m := corpusDir(t, corpus.Small)
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			letters, pages := checkCorpus(t, newExtractor(t, s.new(t)), dir, m)
			t.Logf("%d letters on %d pages in %d documents", letters, pages, len(m.Documents))
		})
	}
}

// TestFullCorpus reads the full corpus (2,000 letters, every layout in
// many variants), unless -short.
func TestFullCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	dir, m := corpusDir(t, corpus.Full)
	letters, pages := checkCorpus(t, newExtractor(t, nil), dir, m)
	t.Logf("%d letters on %d pages in %d documents", letters, pages, len(m.Documents))
}
