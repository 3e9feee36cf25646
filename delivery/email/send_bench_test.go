package email_test

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/lodge-mail/lodge/delivery/email"
	"github.com/lodge-mail/lodge/internal/mailpittest"
)

// BenchmarkSend sends letters to Mailpit over pools of 1 and 4
// connections (4 goroutines a connection), without and with a 50 KB
// PDF: msgs/s is the rate (bench/emailbench measures the same with
// runs, CPU and memory).
func BenchmarkSend(b *testing.B) {
	mp := mailpittest.Start(b, mailpittest.Options{Max: -1})
	pdf := bytes.Repeat([]byte{0xe2, 'x', '\n', 0}, 50000/4)
	var seq atomic.Int64
	for _, attach := range []bool{false, true} {
		for _, pool := range []int{1, 4} {
			b.Run(fmt.Sprintf("pool=%d/attach=%v", pool, attach), func(b *testing.B) {
				m, err := email.New(email.Config{URL: mp.URL(), Pool: pool})
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				b.SetParallelism(4 * pool)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						i := seq.Add(1)
						msg := message(fmt.Sprintf("bench-%d", i))
						msg.HTML = "<p>Dear Jane,</p><p>your statement is attached.</p>"
						if attach {
							msg.Attachments = []email.Attachment{{Name: "statement.pdf", ContentType: "application/pdf", Data: pdf}}
						}
						if err := m.Send(context.Background(), msg); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}
