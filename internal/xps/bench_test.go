package xps

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/pagetext"
)

// window is the envelope window zone of the test letters: a DL window
// 20 mm from the left, 45 mm from the top, 90 × 30 mm (in points).
var window = pagetext.Rect{X0: 56.7, Y0: 127.6, X1: 311.8, Y1: 212.6}

var bodyWords = strings.Fields(`thank you for your continued business with us this statement shows
the charges for the period and the payments received please pay the amount due by the date
shown below if you have already paid please disregard this notice our office hours are
nine to five on weekdays and you can reach us by telephone or email at any time`)

// letters writes n typical letter pages: a reference line in white, an
// address in the window, a date, a salutation, 40 lines of body text
// (about 75 characters each) and a footer, in DejaVu Sans and Serif.
func letters(t testing.TB, n int) []byte {
	sans, serif := dejaVu(t, "DejaVuSans.ttf"), dejaVu(t, "DejaVuSerif.ttf")
	return build(t, false, func(w *Writer) {
		k := 0
		for i := 0; i < n; i++ {
			p := w.Page(595.28, 841.89)
			p.Text(400, 60, 14, sans, "Example Utilities Pty Ltd", TextOptions{})
			p.Text(62, 140, 8, sans, fmt.Sprintf("ref:ACC-%06d", i), TextOptions{Colour: "#FFFFFFFF"})
			for j, l := range []string{fmt.Sprintf("Customer Number %d", i), "Unit 4", "72 Charles Street", "PARRAMATTA NSW 2150"} {
				p.Text(62, 154+float64(j)*12, 10, sans, l, TextOptions{})
			}
			p.Text(400, 240, 10, serif, "24 November 2026", TextOptions{})
			p.Text(72, 270, 10, serif, fmt.Sprintf("Dear Customer %d,", i), TextOptions{})
			for j := 0; j < 40; j++ {
				var line strings.Builder
				for line.Len() < 75 {
					if line.Len() > 0 {
						line.WriteByte(' ')
					}
					line.WriteString(bodyWords[k%len(bodyWords)])
					k += 7
				}
				p.Text(72, 290+float64(j)*12.5, 10, serif, line.String(), TextOptions{})
			}
			p.Text(72, 800, 8, sans, "Example Utilities Pty Ltd ABN 12 345 678 901 · GPO Box 1 Sydney NSW 2001", TextOptions{})
		}
	})
}

// BenchmarkPageText reads typical letter pages (letters) with the window
// zone (the auto processor's fast path) and without one; pages/s is per
// core. Run: go test -run '^$' -bench PageText -cpu 1 ./internal/xps
func BenchmarkPageText(b *testing.B) {
	const n = 100
	data := letters(b, n)
	for _, zoned := range []bool{true, false} {
		name := "zone"
		var zone *pagetext.Rect
		if zoned {
			zone = &window
		} else {
			name = "whole"
		}
		b.Run(name, func(b *testing.B) {
			d, err := open(data, Limits{MaxTotalBytes: 1 << 62})
			if err != nil {
				b.Fatal(err)
			}
			var p pagetext.Page
			start := time.Now()
			i := 0
			for b.Loop() {
				if err := d.PageText(i%n, zone, &p); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(i)/time.Since(start).Seconds(), "pages/s")
		})
	}
}
