package pipeline

import (
	"fmt"
	"testing"
	"time"

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
