package corpus

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Sizes of corpora.
const (
	// Small is the smallest corpus: every layout and producer, a single
	// letter file of each, every non-conforming case (for fast tests).
	Small = 60
	// Full is the corpus the auto processor's targets are measured on.
	Full = 2000
	// maxStream is the most letters in one print stream.
	maxStream = 300
)

// Options choose a corpus. The same Options give the same corpus.
type Options struct {
	// Letters is the number of distinct letters (copies not counted): 0
	// means Full; at least Small.
	Letters int
	// Seed chooses the addresses, layouts and texts (0 is a seed too).
	Seed uint64
}

func (o Options) letters() int {
	if o.Letters == 0 {
		return Full
	}
	return o.Letters
}

// render says how a planned document becomes a file.
type render int

const (
	viaPDFWriter render = iota
	viaPDFBuilder
	viaPS   // our PostScript; a Ghostscript PDF follows it
	viaHTML // Chromium prints it
	viaXPS
)

// planned is a document to write: its manifest entry and its pages.
type planned struct {
	doc    Document
	pages  []page
	render render
	// trueType: the PostScript sets TrueType fonts found through
	// fontconfig rather than the standard ones.
	trueType bool
	// print: HTML documents printed together by one Chromium run and cut
	// apart with qpdf (single-letter files) share a print name.
	print string
}

// stream lays letters out into one document, numbering their pages.
func stream(file, format, producer, layout string, lead []page, ls []letter) planned {
	p := planned{doc: Document{File: file, Format: format, Producer: producer, Layout: layout, Letters: []Letter{}}}
	p.pages = append(p.pages, lead...)
	for _, lt := range ls {
		m := lt.m
		m.FirstPage = len(p.pages) + 1
		p.pages = append(p.pages, lt.pages...)
		m.LastPage = len(p.pages)
		for _, pg := range lt.pages {
			switch pg.Rotate {
			case 90, 180, 270:
				addFeature(&m, fmt.Sprintf("rotate%d", pg.Rotate))
			}
		}
		p.doc.Letters = append(p.doc.Letters, m)
	}
	p.doc.Pages = len(p.pages)
	return p
}

// share divides n letters among the stream layouts by weight, at least 4
// each, the last taking what is left.
func share(n int, weights []float64) []int {
	total := 0.0
	for _, w := range weights {
		total += w
	}
	out := make([]int, len(weights))
	used := 0
	for i, w := range weights[:len(weights)-1] {
		out[i] = max(4, int(float64(n)*w/total))
		used += out[i]
	}
	out[len(out)-1] = max(4, n-used)
	return out
}

// plan draws the whole corpus: its documents with their pages and
// manifest entries, before anything is rendered.
func plan(o Options) (_ []planned, _ int, err error) {
	defer func() {
		if r := recover(); r != nil {
			bug, ok := r.(layoutBug)
			if !ok {
				panic(r)
			}
			err = bug
		}
	}()
	n := o.letters()
	if n < Small {
		return nil, 0, fmt.Errorf("corpus: %d letters asked for, at least %d make a corpus", n, Small)
	}
	g := &gen{r: rand.New(rand.NewPCG(o.Seed, o.Seed^0x6c657474657273)), made: map[string]int{}}
	var docs []planned
	letters := 0

	// Letters in a row, each with an address other than the one before.
	run := func(st style, count int, pagesOf func() int) []letter {
		var out []letter
		var prev []string
		for range count {
			rc := g.recipient(st, prev)
			prev = rc.Address
			out = append(out, g.makeLetter(st, rc, pagesOf()))
		}
		letters += count
		return out
	}
	pages := func(lo, hi int) func() int { return func() int { return lo + g.r.IntN(hi-lo+1) } }
	// Streams cut into documents of at most maxStream letters.
	streams := func(name, format, producer, layout string, ls []letter, r render, tt bool) {
		for i := 0; len(ls) > 0; i++ {
			k := min(len(ls), maxStream)
			if len(ls) > maxStream && len(ls) < 2*maxStream {
				k = len(ls) / 2
			}
			p := stream(fmt.Sprintf("%s-%d.%s", name, i+1, format), format, producer, layout, nil, ls[:k])
			p.render, p.trueType = r, tt
			docs = append(docs, p)
			ls = ls[k:]
		}
	}

	std := []font{sans, mono}
	styles := map[string]style{
		"plain":       {layout: "plain", fonts: std, invisible: true},
		"statement":   {layout: "statement", fonts: []font{sans, sansBold, mono}, invisible: true},
		"form":        {layout: "form", fonts: []font{sans, serif, mono}, invisible: true},
		"fixed_pages": {layout: "fixed_pages", fonts: std, invisible: true},
		"rotated":     {layout: "rotated", fonts: []font{sans, serif, mono}, invisible: true},
		"postscript":  {layout: "postscript", fonts: []font{serif, sans, mono}, invisible: true},
		"truetype":    {layout: "truetype", fonts: []font{dejavu, dejavuSerif, sans, serif}, invisible: true},
		"letterhead":  {layout: "letterhead", fonts: []font{sans, serif, dejavu, dejavuSerif, mono}},
	}

	// Non-conforming documents: fixed numbers.
	ncCount := 1
	if n >= 500 {
		ncCount = 3
	}
	singles := max(1, n/100) // single-letter files per producer
	nc := 0
	for i := range ncCount {
		for _, layout := range []string{"nc_scan", "nc_unreadable", "nc_edge"} {
			lt := g.makeNonConforming(layout, nil)
			p := stream(fmt.Sprintf("%s-%d.pdf", layout, i+1), "pdf", ProducerPDFBuilder, layout, nil, []letter{lt})
			p.render = viaPDFBuilder
			if layout == "nc_edge" {
				p.doc.Producer, p.render = ProducerPDFWriter, viaPDFWriter
			}
			docs = append(docs, p)
			nc++
		}
		lead := []page{g.leadingPage()}
		if i%2 == 1 {
			lead = append(lead, g.leadingPage())
		}
		ls := run(style{layout: "plain", fonts: std, invisible: true}, 2, pages(1, 2))
		p := stream(fmt.Sprintf("nc_leading-%d.pdf", i+1), "pdf", ProducerPDFWriter, "nc_leading", lead, ls)
		p.doc.Hold, p.render = HoldNoAddressBefore, viaPDFWriter
		docs = append(docs, p)
	}
	letters += nc

	// Single-letter files of each producer.
	var plainSingles, htmlSingles []planned
	for i := range singles {
		lt := run(styles["plain"], 1, pages(1, 2))
		p := stream(fmt.Sprintf("single-plain-%d.pdf", i+1), "pdf", ProducerPDFWriter, "plain", nil, lt)
		p.render = viaPDFWriter
		plainSingles = append(plainSingles, p)

		lt = run(styles["rotated"], 1, pages(1, 2))
		rotate(g, lt)
		p = stream(fmt.Sprintf("single-rotated-%d.pdf", i+1), "pdf", ProducerPDFBuilder, "rotated", nil, lt)
		p.render = viaPDFBuilder
		docs = append(docs, p)

		lt = run(styles["postscript"], 1, pages(1, 3))
		p = stream(fmt.Sprintf("single-postscript-%d.ps", i+1), "ps", ProducerPostScript, "postscript", nil, lt)
		p.render = viaPS
		docs = append(docs, p)

		lt = run(styles["letterhead"], 1, pages(1, 3))
		p = stream(fmt.Sprintf("single-letterhead-%d.pdf", i+1), "pdf", ProducerChromium, "letterhead", nil, lt)
		p.render, p.print = viaHTML, "singles"
		htmlSingles = append(htmlSingles, p)
	}
	docs = append(docs, plainSingles...)
	docs = append(docs, htmlSingles...)

	// Streams.
	names := []string{"plain", "statement", "form", "fixed_pages", "rotated", "postscript", "truetype", "letterhead"}
	counts := share(n-letters, []float64{0.17, 0.13, 0.08, 0.04, 0.07, 0.14, 0.07, 0.30})
	var formDocs, plainDocs []planned
	for i, name := range names {
		st := styles[name]
		c := counts[i]
		switch name {
		case "plain":
			from := len(docs)
			streams("plain", "pdf", ProducerPDFWriter, name, run(st, c, pages(1, 2)), viaPDFWriter, false)
			plainDocs = docs[from:]
		case "statement":
			streams("statement", "pdf", ProducerPDFWriter, name, run(st, c, pages(1, 8)), viaPDFWriter, false)
		case "form":
			from := len(docs)
			streams("form", "pdf", ProducerPDFWriter, name, run(st, c, pages(1, 2)), viaPDFWriter, false)
			formDocs = docs[from:]
		case "fixed_pages":
			from := len(docs)
			streams("fixed", "pdf", ProducerPDFWriter, name, fixedPages(g, st, c), viaPDFWriter, false)
			letters += c
			for i := from; i < len(docs); i++ {
				docs[i].doc.PagesPerLetter = 2
			}
		case "rotated":
			ls := run(st, c, pages(1, 3))
			rotate(g, ls)
			streams("rotated", "pdf", ProducerPDFBuilder, name, ls, viaPDFBuilder, false)
		case "postscript":
			streams("postscript", "ps", ProducerPostScript, name, run(st, c, pages(1, 4)), viaPS, false)
		case "truetype":
			streams("truetype", "ps", ProducerPostScript, name, run(st, c, pages(1, 3)), viaPS, true)
		case "letterhead":
			streams("letterhead", "pdf", ProducerChromium, name, run(st, c, pages(1, 3)), viaHTML, false)
		}
	}
	if len(plainDocs) > 1 {
		plainDocs = plainDocs[:1]
	}

	// XPS copies of documents drawn by internal/pdf.
	copies := append(slices.Clone(formDocs), plainDocs...)
	copies = append(copies, plainSingles[:min(3, len(plainSingles))]...)
	for _, orig := range copies {
		c := orig
		c.doc.File = "xps-" + orig.doc.File[:len(orig.doc.File)-len(".pdf")] + ".xps"
		c.doc.Format, c.doc.Producer, c.doc.CopyOf, c.render = "xps", ProducerXPS, orig.doc.File, viaXPS
		docs = append(docs, c)
	}
	for _, d := range docs {
		ls := make([]letter, len(d.doc.Letters))
		for i := range ls {
			ls[i] = letter{pages: d.pages[d.doc.Letters[i].FirstPage-1 : d.doc.Letters[i].LastPage], m: d.doc.Letters[i]}
		}
		if err := checkPages(ls); err != nil {
			return nil, 0, err
		}
	}
	return docs, letters, nil
}

// fixedPages makes letters of two pages with the address on both, some
// consecutive letters to the same address.
func fixedPages(g *gen, st style, count int) []letter {
	var out []letter
	var prev recipient
	for i := range count {
		rc := prev
		if i == 0 || g.r.IntN(3) != 0 {
			rc = g.recipient(st, prev.Address)
		}
		prev = rc
		out = append(out, g.makeLetter(st, rc, 2))
	}
	return out
}

// rotate stores the pages of rotated letters turned: a letter's pages by
// 90, 180 or 270 degrees (or not at all; the first letters each way), a
// landscape page as portrait paper turned 90.
func rotate(g *gen, ls []letter) {
	for i := range ls {
		r := []int{0, 90, 90, 180, 270}[g.r.IntN(5)]
		if i < 4 {
			r = []int{90, 180, 270, 0}[i]
		}
		for j := range ls[i].pages {
			p := &ls[i].pages[j]
			if p.W > p.H {
				p.Rotate = 90
			} else {
				p.Rotate = r
			}
		}
	}
}
