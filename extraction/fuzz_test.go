package extraction

import (
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/pagetext"
)

// FuzzWindowAndSplit feeds arbitrary window text (lines separated by
// "\n", pages by "\f") through readWindow and split: no panic, and every
// page in exactly one letter, in order.
func FuzzWindowAndSplit(f *testing.F) {
	f.Add("ref:1\nMR A\nKINGSTON ACT 2604\f\fMS B\n2 B ST", 0)
	f.Add("email:a@b.c\fsms:+61 412 345 678\f", 2)
	f.Add("\f\f\fA\nB", 0)
	f.Add("A\nref:1\nB\fA\nB\fx\uFFFDy\nB", 1)
	f.Fuzz(func(t *testing.T, text string, per int) {
		if per < 0 || per > 5 {
			per = 0
		}
		var pages []PageRead
		for _, pg := range strings.Split(text, "\f") {
			var pr PageRead
			for i, s := range strings.Split(pg, "\n") {
				if s = clean(s); s != "" {
					pr.Lines = append(pr.Lines, Line{Text: s, Box: pagetext.Rect{X0: 60, Y0: float64(150 + 12*i), X1: 200, Y1: float64(160 + 12*i)}})
				}
			}
			pr.Marker = strings.Contains(pg, "BEGIN")
			pages = append(pages, pr)
		}
		for _, rule := range []Rule{{}, {PagesPerLetter: per}, {Marker: "BEGIN"}} {
			found := split("f.pdf", pages, rule)
			next := 0
			for _, fd := range found {
				if fd.First != next || fd.Last < fd.First {
					t.Fatalf("rule %+v: letters %+v do not cover pages in order", rule, found)
				}
				next = fd.Last + 1
				if fd.Hold == "" && fd.Window.Problem != "" {
					t.Fatalf("a window with a problem is not held: %+v", fd)
				}
			}
			if next != len(pages) {
				t.Fatalf("rule %+v: %d of %d pages in letters", rule, next, len(pages))
			}
		}
	})
}
