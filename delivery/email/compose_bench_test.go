package email

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkCompose measures writing one letter (text, HTML, a
// List-Unsubscribe header) without and with a 50 KB PDF attached: the
// sender's own CPU per message, apart from the network and the server.
func BenchmarkCompose(b *testing.B) {
	pdf := bytes.Repeat([]byte{0xe2, 'x', '\n', 0}, 50000/4)
	for _, attach := range []bool{false, true} {
		b.Run(fmt.Sprintf("attach=%v", attach), func(b *testing.B) {
			m := Message{MessageID: "L1.2@lodge.example", From: "Acme Billing <billing@acme.example>",
				To: "Customer <c@example.com>", Subject: "Your statement — November",
				Text: "Dear customer,\n\nyour statement is ready.\n", HTML: "<p>Dear customer,</p><p>your statement is ready.</p>",
				ReturnPath: "bounce+L1.2@bounces.lodge.example", Headers: map[string]string{"List-Unsubscribe": "<https://lodge.example/u/1>"}}
			if attach {
				m.Attachments = []Attachment{{Name: "statement.pdf", ContentType: "application/pdf", Data: pdf}}
			}
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if _, err := compose(&m, nil, DKIM{}, &buf); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(buf.Len()))
		})
	}
}
