package upload

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lodge-mail/lodge/upload/inspect"
)

// pageSizeWarnings tells, for end_session's warnings, which pages of a
// document are not A4 (spec section 1: letters are printed on A4): one
// warning per size, its pages numbered from 0 as metadata numbers them.
// The mailing is accepted; the pages are scaled.
//
//	letter.pdf: all 3 pages are US Letter (216 x 279 mm), not A4: they will be scaled to A4
//	mixed.pdf: pages 1-2 are US Letter (216 x 279 mm), not A4: they will be scaled to A4 (5 pages, numbered 0 to 4, as page_start and page_end)
func pageSizeWarnings(name string, d inspect.Document) []string {
	if d.NotA4Pages == 0 || d.Pages == 0 {
		return nil
	}
	type group struct {
		size   string
		ranges []string
		pages  int
	}
	var groups []*group
	bySize := map[[2]int]*group{}
	listed := 0
	for _, r := range d.NotA4 {
		g := bySize[[2]int{r.Width, r.Height}]
		if g == nil {
			size := fmt.Sprintf("%d x %d mm", r.Width, r.Height)
			if paper := r.SizeName(); paper != "" {
				size = paper + " (" + size + ")"
			}
			g = &group{size: size}
			bySize[[2]int{r.Width, r.Height}] = g
			groups = append(groups, g)
		}
		rng := strconv.Itoa(r.First)
		if r.Last > r.First {
			rng += "-" + strconv.Itoa(r.Last)
		}
		g.ranges = append(g.ranges, rng)
		g.pages += r.Last - r.First + 1
		listed += r.Last - r.First + 1
	}
	numbering := fmt.Sprintf(" (%d pages, numbered 0 to %d, as page_start and page_end)", d.Pages, d.Pages-1)
	if d.Pages == 1 {
		numbering = ""
	}
	var out []string
	for _, g := range groups {
		switch {
		case g.pages == d.Pages && d.Pages == 1:
			out = append(out, fmt.Sprintf("%s: its page is %s, not A4: it will be scaled to A4", name, g.size))
		case g.pages == d.Pages:
			out = append(out, fmt.Sprintf("%s: all %d pages are %s, not A4: they will be scaled to A4", name, d.Pages, g.size))
		case g.pages == 1:
			out = append(out, fmt.Sprintf("%s: page %s is %s, not A4: it will be scaled to A4%s", name, g.ranges[0], g.size, numbering))
		default:
			out = append(out, fmt.Sprintf("%s: pages %s are %s, not A4: they will be scaled to A4%s", name, strings.Join(g.ranges, ", "), g.size, numbering))
		}
	}
	if more := d.NotA4Pages - listed; more > 0 {
		out = append(out, fmt.Sprintf("%s: %d more pages after page %d are not A4 either: they will be scaled to A4%s",
			name, more, d.NotA4[len(d.NotA4)-1].Last, numbering))
	}
	return out
}
