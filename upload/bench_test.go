package upload

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testref"
	"github.com/lodge-mail/lodge/pgdb"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/upload/inspect"
	"github.com/lodge-mail/lodge/upload/metadata"
)

// The statement run of the upload issue: one PDF of 20,000 pages and
// metadata with 10,000 letters of two pages each, postal addresses from
// testref.Mix. end_session of it must take at most 3 s, address checks
// included; bench/uploadbench measures that through the real binary, these
// benchmarks measure the steps in process:
//
//	go test ./upload -run '^$' -bench 'Statement' -benchtime 5x
//
// BenchmarkEndStatement times Lodger.End, end_session's lodgement step
// (page count, metadata parse and plan, every address check, the synced
// commit of the mailing and its letters), with pages counted in process
// (the server counts them in a child process: see bench/uploadbench).
// Its sub-benchmarks time the parts alone. BenchmarkLodgeStatement times
// the lodgement worker's pass over the same mailing. The verdict cache is
// off, so that every iteration checks every address.
const (
	benchPages   = 20_000
	benchLetters = 10_000
)

var benchLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// benchStatementPDF is a valid PDF of n pages in a page tree of 100 kids
// per node, every page sharing one content stream.
func benchStatementPDF(n int) []byte {
	var b bytes.Buffer
	var offs []int
	obj := func(body string) int {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offs), body)
		return len(offs)
	}
	b.WriteString("%PDF-1.7\n")
	const fanout = 100
	nodes := (n + fanout - 1) / fanout
	firstNode := 5
	firstPage := firstNode + nodes
	refs := func(from, count int) string {
		var s strings.Builder
		for i := range count {
			fmt.Fprintf(&s, "%d 0 R ", from+i)
		}
		return s.String()
	}
	obj("<</Type/Catalog/Pages 2 0 R>>")
	obj(fmt.Sprintf("<</Type/Pages/Kids[%s]/Count %d>>", refs(firstNode, nodes), n))
	obj("<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")
	text := "BT /F1 11 Tf 72 770 Td (Statement of account) Tj ET"
	obj(fmt.Sprintf("<</Length %d>>\nstream\n%s\nendstream", len(text), text))
	for i := range nodes {
		cnt := min(fanout, n-i*fanout)
		obj(fmt.Sprintf("<</Type/Pages/Parent 2 0 R/Kids[%s]/Count %d>>", refs(firstPage+i*fanout, cnt), cnt))
	}
	for i := range n {
		obj(fmt.Sprintf("<</Type/Page/Parent %d 0 R/MediaBox[0 0 595 842]/Resources<</Font<</F1 3 0 R>>>>/Contents 4 0 R>>", firstNode+i/fanout))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, xref)
	return b.Bytes()
}

// benchStatementMeta is the metadata of n letters, letter i on pages 2i
// and 2i+1 of statements.pdf; it returns the addresses too.
func benchStatementMeta(b *testing.B, n int) ([]byte, [][]string) {
	addrs, err := testref.Mix(n, 7)
	if err != nil {
		b.Fatal(err)
	}
	type letter struct {
		Postal    []string `json:"postal"`
		Reference string   `json:"reference"`
		FileName  string   `json:"file_name"`
		PageStart int      `json:"page_start"`
		PageEnd   int      `json:"page_end"`
	}
	m := struct {
		Title   string   `json:"title"`
		Letters []letter `json:"letters"`
	}{Title: "Statements"}
	for i, a := range addrs {
		m.Letters = append(m.Letters, letter{Postal: a, Reference: fmt.Sprintf("ACC-%06d", i), FileName: "statements.pdf", PageStart: 2 * i, PageEnd: 2*i + 1})
	}
	out, err := json.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	return out, addrs
}

// benchRig is a store and a Lodger over the test reference, the verdict
// cache off.
type benchRig struct {
	s    *Store
	l    *Lodger
	eng  *engine.Engine
	pdf  []byte
	meta []byte
}

func newBenchRig(b *testing.B) *benchRig {
	b.Helper()
	e, err := engine.New(testref.Index(b).Ref, engine.Config{CacheEntries: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Close)
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	r := &benchRig{s: s, eng: e, pdf: benchStatementPDF(benchPages)}
	r.meta, _ = benchStatementMeta(b, benchLetters)
	ms, err := pipeline.OpenPebble(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ms.Close() })
	r.l = NewLodger(s, e, pipeline.New(ms, nil, pipeline.Config{}, benchLog), LodgerConfig{InProcess: true, Host: "bench"}, benchLog)
	return r
}

// session uploads the statement run into a new session.
func (r *benchRig) session(b *testing.B) (Session, []File) {
	b.Helper()
	ss, err := r.s.CreateSession("ABC12345", "bench")
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []struct {
		name, ext string
		body      []byte
	}{{"statements.pdf", "pdf", r.pdf}, {"statements.json", "json", r.meta}} {
		check := func(head []byte) (string, error) { return checkContent(f.name, f.ext, head) }
		if _, err := r.s.PutFile(ss, "clerk", f.name, int64(len(f.body)), bytes.NewReader(f.body), check); err != nil {
			b.Fatal(err)
		}
	}
	files, err := r.s.Files(ss.EPID)
	if err != nil {
		b.Fatal(err)
	}
	return ss, files
}

// end runs end_session's lodgement step as the handler does, under the
// session's lock.
func (r *benchRig) end(b *testing.B, ss Session, files []File) {
	b.Helper()
	mu := r.s.lock(ss.EPID)
	mu.Lock()
	res, err := r.l.End(ss, files)
	mu.Unlock()
	if err != nil || res.Result != "ok" {
		b.Fatalf("end: %v %+v", err, res)
	}
}

func BenchmarkEndStatement(b *testing.B) {
	r := newBenchRig(b)
	b.Run("end", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			ss, files := r.session(b)
			b.StartTimer()
			r.end(b, ss, files)
		}
		b.ReportMetric(float64(benchLetters*b.N)/b.Elapsed().Seconds(), "letters/s")
	})
	b.Run("pages", func(b *testing.B) {
		b.SetBytes(int64(len(r.pdf)))
		for i := 0; i < b.N; i++ {
			n, err := inspect.Pages(inspect.PDF, bytes.NewReader(r.pdf), int64(len(r.pdf)), inspect.Limits{})
			if err != nil || n != benchPages {
				b.Fatalf("pages: %d %v", n, err)
			}
		}
	})
	b.Run("metadata", func(b *testing.B) {
		infos := metadata.Files{{Name: "statements.pdf", Kind: "pdf", Pages: benchPages}}
		for i := 0; i < b.N; i++ {
			p, probs := metadata.Parse("statements.json", r.meta, metadata.Limits{})
			if metadata.HasErrors(probs) {
				b.Fatal(probs)
			}
			plan, probs := p.Plan(infos)
			if metadata.HasErrors(probs) || len(plan) != benchLetters {
				b.Fatalf("plan: %d letters, %v", len(plan), probs)
			}
		}
	})
	b.Run("checks", func(b *testing.B) {
		_, addrs := benchStatementMeta(b, benchLetters)
		for i := 0; i < b.N; i++ {
			for _, a := range addrs {
				r.eng.Check(a, false)
			}
		}
		b.ReportMetric(float64(benchLetters*b.N)/b.Elapsed().Seconds(), "addresses/s")
	})
}

// BenchmarkPutFile: Store.PutFile of a 256 MiB document from memory, the
// PUT path without HTTP: content check, SHA-1, the write to disk with its
// background fsyncs and the final one, the record. Disk-bound: compare
// runs on the same machine only.
func BenchmarkPutFile(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	body := make([]byte, 256<<20)
	for i := range body {
		body[i] = byte(i*131 + i>>13)
	}
	copy(body, "%PDF-1.7\n")
	want := sha1Sum(body)
	ss, err := s.CreateSession("ABC12345", "bench")
	if err != nil {
		b.Fatal(err)
	}
	check := func(head []byte) (string, error) { return checkContent("big.pdf", "pdf", head) }
	b.SetBytes(int64(len(body)))
	for i := 0; i < b.N; i++ {
		f, err := s.PutFile(ss, "clerk", "big.pdf", int64(len(body)), bytes.NewReader(body), check)
		if err != nil || f.Size != int64(len(body)) || f.SHA1 != want {
			b.Fatalf("PutFile: %+v %v", f, err)
		}
	}
}

func sha1Sum(b []byte) string {
	h := sha1.Sum(b)
	return hex.EncodeToString(h[:])
}

// BenchmarkPut: the PUT of a 64 KiB document as the handler stores it
// (the session read, then Store.PutFile: content check, SHA-1, the
// durable blob, the record), by 8 clients at once, each in a session of
// its own, on each store: embedded, and one node of the shared store
// with its blobs on the local disk or in object storage (tests3). The
// ratio of files/s is the cost of sharing on one machine:
//
//	go test ./upload -run '^$' -bench 'Put$' -benchtime 2000x
//
// testpg runs PostgreSQL without fsync; LODGE_BENCH_PG, a connection
// string, runs the shared store on that database instead (one with fsync
// on, as in production; its tables are made by the migrations if
// missing, and the benchmark's sessions are left in it).
func BenchmarkPut(b *testing.B) {
	body := pdfDoc(1, 64<<10)
	check := func(head []byte) (string, error) { return checkContent("doc.pdf", "pdf", head) }
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			var s *Store
			if url := os.Getenv("LODGE_BENCH_PG"); url != "" && be.name != "embedded" {
				db, err := pgdb.Open(context.Background(), pgdb.Config{URL: url})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(db.Close)
				var blobs blob.Store
				if be.name == "postgres+s3" {
					blobs = s3Place(b, b.TempDir())
				} else if blobs, err = blob.NewLocal(b.TempDir()); err != nil {
					b.Fatal(err)
				}
				s = openShared(b, db, blobs, Options{})
			} else {
				s = benchStore(b, be)
			}
			b.SetBytes(int64(len(body)))
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ss, err := s.CreateSession("ABC12345", "bench")
				if err != nil {
					b.Error(err)
					return
				}
				for i := 0; pb.Next(); i++ {
					cur, err := s.Session(ss.EPID)
					if err == nil {
						_, err = s.PutFile(cur, "clerk", fmt.Sprintf("doc%d.pdf", i%16), int64(len(body)), bytes.NewReader(body), check)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "files/s")
		})
	}
}

// benchStore is a new store of the backend for a benchmark.
func benchStore(b *testing.B, be backend) *Store {
	b.Helper()
	dir := b.TempDir()
	switch be.name {
	case "embedded":
		s, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	case "postgres+s3":
		_, db, _ := sharedPlace(b, dir)
		return openShared(b, db, s3Place(b, dir), Options{})
	default:
		_, db, blobs := sharedPlace(b, dir)
		return openShared(b, db, blobs, Options{})
	}
}
