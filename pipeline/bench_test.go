package pipeline

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/pgdb"
	"github.com/lodge-mail/lodge/rpc"
)

// BenchmarkGetMailingFirstPage: get_mailing's first page (100 letters, with
// their events) of a statement run of 10,000 letters that went through
// check and batching. Target: at most 50 ms.
//
//	go test ./pipeline -run X -bench GetMailing
func BenchmarkGetMailingFirstPage(b *testing.B) {
	s, err := OpenPebble(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	mr := New(s, nil, Config{}, nil)
	const n = 10_000
	ls := make([]Letter, n)
	for i := range ls {
		ls[i] = Letter{Idx: i, Reference: fmt.Sprintf("INV-%06d", i), Channels: []string{"postal"},
			Postal:    []string{fmt.Sprintf("Customer %d", i), fmt.Sprintf("%d Example St", i%250+1), "SYDNEY NSW 2000"},
			Address:   &Verdict{Status: "matched", Nation: "AUS"},
			Documents: []DocPart{{File: "statements.pdf", PageStart: 2 * i, PageEnd: 2*i + 1}}}
	}
	if err := mr.Submit(Mailing{EPID: "E1", Account: "ABC12345", Title: "Statements"}, ls); err != nil {
		b.Fatal(err)
	}
	// the events check and batching add
	now := time.Now()
	err = s.Update([]string{"E1"}, func(tx Tx) error {
		all, err := tx.Letters("E1")
		if err != nil {
			return err
		}
		for _, l := range all {
			l.Checked, l.Pages, l.Sheets, l.Envelope, l.Postage, l.Price = true, 2, 1, "DL", "regular", 191
			l.Add(now, "Checked", "2 pages on 1 sheets, DL envelope, regular post")
			l.SetStatus(now, Processing, "print batch 20261123-E1-01")
			l.Add(now, "Released", "to the print room: 20261123-E1-01")
			tx.PutLetter(l)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	params := []byte(`{"account":"ABC12345","session_id":"E1"}`)
	p := rpc.Principal{Account: "ABC12345"}
	var out []byte
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var code int
		out, code, _ = mr.rpcMailing(out[:0], params, p)
		if code != 0 {
			b.Fatal(code)
		}
	}
	b.ReportMetric(float64(len(out)), "bytes")
}

// BenchmarkStore compares the stores' Submit (a mailing of 10 letters
// and its first job), Update (one letter of a 1,000-letter mailing read
// and put back with another status) and Claim+DoneJob, one at a time.
// Both are durable: Pebble syncs every commit, and the PostgreSQL server
// started here runs with fsync on (the tests' shared one does not).
//
//	go test ./pipeline -run X -bench Store -benchtime 2s
func BenchmarkStore(b *testing.B) {
	var (
		once   sync.Once
		server *testpg.Server
		err    error
	)
	b.Cleanup(func() {
		if server != nil {
			server.Close()
		}
	})
	kinds := []struct {
		name string
		open func(b *testing.B) Store
	}{
		{"pebble", func(b *testing.B) Store {
			s, err := OpenPebble(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
		{"postgres", func(b *testing.B) Store {
			once.Do(func() { server, err = testpg.StartWith("fsync=on") })
			if err != nil {
				b.Skipf("postgres: %v", err)
			}
			name, err := server.CreateDatabase()
			if err != nil {
				b.Fatal(err)
			}
			db, err := pgdb.Open(context.Background(), pgdb.Config{URL: server.URL(name)})
			if err != nil {
				b.Fatal(err)
			}
			s, err := OpenPostgres(db, PostgresOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close(); db.Close(); server.DropDatabase(name) })
			return s
		}},
	}
	for _, k := range kinds {
		b.Run("Submit/"+k.name, func(b *testing.B) {
			s := k.open(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				epid := fmt.Sprintf("E%08d", i)
				if err := s.Submit(mailing(epid, "A", t0), letters(epid, "A", 10), []Job{{Kind: JobCheck, Key: epid, Due: t0}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, k := range kinds {
		b.Run("Update/"+k.name, func(b *testing.B) {
			s := k.open(b)
			if err := s.Submit(mailing("E1", "A", t0), letters("E1", "A", 1000), nil); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				err := s.Update([]string{"E1"}, func(tx Tx) error {
					l, err := tx.Letter("E1", i%1000)
					if err != nil {
						return err
					}
					l.Status = map[bool]string{true: Held, false: Received}[l.Status == Received]
					tx.PutLetter(l)
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, k := range kinds {
		b.Run("ClaimDone/"+k.name, func(b *testing.B) {
			s := k.open(b)
			jobs := make([]Job, b.N)
			for i := range jobs {
				jobs[i] = Job{Kind: JobCheck, Key: fmt.Sprintf("E%08d", i), Due: t0}
			}
			if err := s.Submit(mailing("E", "A", t0), nil, jobs); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j, ok, err := s.Claim([]string{JobCheck}, t0)
				if !ok || err != nil {
					b.Fatalf("claim %d: %v %v", i, ok, err)
				}
				if err := s.Update(nil, func(tx Tx) error { tx.DoneJob(j); return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
