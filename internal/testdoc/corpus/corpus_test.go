package corpus

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/internal/testref"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if small.cache != "" {
		os.RemoveAll(small.cache)
	}
	testref.Cleanup()
	os.Exit(code)
}

// small is the small corpus, generated once per test binary through
// Cached.
var small struct {
	once  sync.Once
	cache string
	dir   string
	m     *Manifest
	err   error
}

func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"gs", "chromium", "qpdf", "pdftotext", "pdfimages", "xpstopdf"} {
		testenv.Tool(t, tool)
	}
}

func smallCorpus(t *testing.T) (string, *Manifest) {
	t.Helper()
	needTools(t)
	small.once.Do(func() {
		if small.cache, small.err = os.MkdirTemp("", "lodge-corpus-test-"); small.err != nil {
			return
		}
		small.dir, small.m, small.err = Cached(context.Background(), small.cache, Options{Letters: Small, Seed: 7})
	})
	if small.err != nil {
		t.Fatal(small.err)
	}
	return small.dir, small.m
}

// TestSmallCorpusCovers: the small corpus has every layout, format and
// producer, single-letter files and streams, and every feature the
// auto processor must handle.
func TestSmallCorpusCovers(t *testing.T) {
	_, m := smallCorpus(t)
	layouts, formats, producers, features, holds := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	singles, streams, letters := 0, 0, 0
	for _, d := range m.Documents {
		layouts[d.Layout], formats[d.Format], producers[d.Producer] = true, true, true
		if d.Hold != "" {
			holds[d.Hold] = true
		}
		if len(d.Letters) == 1 {
			singles++
		} else {
			streams++
		}
		if d.CopyOf == "" {
			letters += len(d.Letters)
		}
		for _, l := range d.Letters {
			for _, f := range l.Features {
				features[f] = true
			}
			if l.Hold != "" {
				holds[l.Hold] = true
			}
			if l.Reference != "" {
				features["reference"] = true
			}
		}
	}
	if letters != m.Letters || letters != Small {
		t.Errorf("%d letters in the documents, manifest says %d, asked for %d", letters, m.Letters, Small)
	}
	for _, l := range Layouts {
		if !layouts[l] {
			t.Errorf("no document of layout %s", l)
		}
	}
	for _, want := range [][]string{{"pdf", "ps", "xps"}} {
		for _, f := range want {
			if !formats[f] {
				t.Errorf("no document in format %s", f)
			}
		}
	}
	for _, p := range []string{ProducerPDFWriter, ProducerPDFBuilder, ProducerGhostscript, ProducerPostScript, ProducerChromium, ProducerXPS} {
		if !producers[p] {
			t.Errorf("no document from %s", p)
		}
	}
	for _, f := range []string{"reference", "ref_white", "ref_invisible", "ref_visible", "channels", "repeat_address", "landscape_page",
		"rotate90", "rotate180", "rotate270", "channels_hidden", "form", "nested_form", "logo", "columns", "return_address", "info_block", "offset"} {
		if !features[f] {
			t.Errorf("no letter with feature %s", f)
		}
	}
	for _, h := range []string{HoldNoAddressBefore, HoldScan, HoldUnreadable, HoldWindowEdge} {
		if !holds[h] {
			t.Errorf("no case of hold %s", h)
		}
	}
	if singles < 4 || streams < 8 {
		t.Errorf("%d single-letter files and %d streams", singles, streams)
	}
}

// TestSecondReader proves the manifest true with another reader: poppler's
// pdftotext -bbox-layout on every PDF, on Ghostscript's conversion of
// every PostScript file and on xpstopdf's of every XPS file.
func TestSecondReader(t *testing.T) {
	dir, m := smallCorpus(t)
	checkCorpus(t, dir, m)
}

// TestFullCorpus checks a corpus made by bench/lettercorpus when
// LODGE_LETTERCORPUS names its directory (it takes a minute or two).
func TestFullCorpus(t *testing.T) {
	dir := os.Getenv("LODGE_LETTERCORPUS")
	if dir == "" {
		t.Skip("LODGE_LETTERCORPUS names no corpus to check")
	}
	needTools(t)
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkCorpus(t, dir, m)
	checkVerdicts(t, m)
}

func checkCorpus(t *testing.T, dir string, m *Manifest) {
	scratch := t.TempDir()
	jobs := make(chan Document)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range jobs {
				checkDocument(t, dir, scratch, d)
			}
		}()
	}
	for _, d := range m.Documents {
		jobs <- d
	}
	close(jobs)
	wg.Wait()
}

// word is a word pdftotext found, its box in points.
type word struct {
	x0, y0, x1, y1 float64
	s              string
}

// readWords runs pdftotext -bbox-layout and returns each page's words.
func readWords(path string) ([][]word, error) {
	out, err := exec.Command("pdftotext", "-q", "-bbox-layout", path, "-").Output()
	if err != nil {
		return nil, fmt.Errorf("pdftotext %s: %w", path, err)
	}
	d := xml.NewDecoder(bytes.NewReader(out))
	d.Strict = false
	var pages [][]word
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return pages, nil
		}
		if err != nil {
			return nil, fmt.Errorf("pdftotext %s: %w", path, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "page":
			pages = append(pages, []word{})
		case "word":
			var w word
			for _, a := range se.Attr {
				v, _ := strconv.ParseFloat(a.Value, 64)
				switch a.Name.Local {
				case "xMin":
					w.x0 = v
				case "yMin":
					w.y0 = v
				case "xMax":
					w.x1 = v
				case "yMax":
					w.y1 = v
				}
			}
			var s string
			if err := d.DecodeElement(&s, &se); err != nil {
				return nil, err
			}
			w.s = s
			pages[len(pages)-1] = append(pages[len(pages)-1], w)
		}
	}
}

func (w word) box() Rect { return Rect{w.x0, w.y0, w.x1, w.y1} }

// lines groups words into lines by baseline, top to bottom, left to
// right, joined by one space.
func lines(ws []word) ([]string, [][]word) {
	ws = slices.Clone(ws)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].y1 < ws[j].y1 })
	var groups [][]word
	for _, w := range ws {
		n := len(groups)
		if n > 0 {
			last := groups[n-1][0]
			if abs(w.y1-last.y1) < 0.4*(last.y1-last.y0) {
				groups[n-1] = append(groups[n-1], w)
				continue
			}
		}
		groups = append(groups, []word{w})
	}
	var out []string
	for _, g := range groups {
		sort.SliceStable(g, func(i, j int) bool { return g[i].x0 < g[j].x0 })
		var s []string
		for _, w := range g {
			s = append(s, w.s)
		}
		out = append(out, strings.Join(s, " "))
	}
	return out, groups
}

// inZone returns the words that touch zone z.
func inZone(ws []word, z Rect) []word {
	var out []word
	for _, w := range ws {
		if w.box().intersects(z) {
			out = append(out, w)
		}
	}
	return out
}

// readable returns a PDF of the document for pdftotext: itself, or its
// conversion as production makes it.
func readable(dir, scratch string, d Document) (string, error) {
	src := filepath.Join(dir, d.File)
	out := filepath.Join(scratch, d.File+".pdf")
	var cmd *exec.Cmd
	switch d.Format {
	case "pdf":
		return src, nil
	case "ps":
		cmd = exec.Command("gs", "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=pdfwrite", "-dAutoRotatePages=/None", "-sOutputFile="+out, src)
	case "xps":
		cmd = exec.Command("xpstopdf", src, out)
	default:
		return "", fmt.Errorf("format %q", d.Format)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %v: %s", cmd, err, b)
	}
	return out, nil
}

func checkDocument(t *testing.T, dir, scratch string, d Document) {
	path, err := readable(dir, scratch, d)
	if err != nil {
		t.Error(err)
		return
	}
	pages, err := readWords(path)
	if err != nil {
		t.Error(err)
		return
	}
	if d.Format == "xps" {
		// xpstopdf drops what is painted fully transparent: read those
		// Glyphs from the pages themselves.
		hidden, err := transparentGlyphs(filepath.Join(dir, d.File))
		if err != nil {
			t.Error(err)
			return
		}
		for p, ws := range hidden {
			if p < len(pages) {
				pages[p] = append(pages[p], ws...)
			}
		}
	}
	if len(pages) != d.Pages {
		t.Errorf("%s: pdftotext reads %d pages, the manifest says %d", d.File, len(pages), d.Pages)
		return
	}
	errorf := func(page int, format string, args ...any) {
		t.Helper()
		t.Errorf("%s page %d: %s", d.File, page, fmt.Sprintf(format, args...))
	}
	// Pages before the first letter, and the letters' pages: every page
	// in exactly one letter, in order.
	next := 1
	if len(d.Letters) == 0 {
		t.Errorf("%s: no letters", d.File)
		return
	}
	if first := d.Letters[0].FirstPage; first > 1 {
		if d.Hold != HoldNoAddressBefore {
			t.Errorf("%s: pages before the first letter and no hold", d.File)
		}
		for p := 1; p < first; p++ {
			if got, _ := lines(inZone(pages[p-1], ZoneC4)); len(got) > 0 {
				errorf(p, "a page before the first letter shows %q in the zone", got)
			}
		}
		next = first
	} else if d.Hold == HoldNoAddressBefore {
		t.Errorf("%s: held for pages before the first letter and there are none", d.File)
	}
	var prevWindow []string
	for i, l := range d.Letters {
		if l.FirstPage != next || l.LastPage < l.FirstPage {
			t.Errorf("%s letter %d: pages %d-%d, expected to start at %d", d.File, i+1, l.FirstPage, l.LastPage, next)
			return
		}
		next = l.LastPage + 1
		if d.PagesPerLetter > 0 && l.LastPage-l.FirstPage+1 != d.PagesPerLetter {
			t.Errorf("%s letter %d: %d pages, the profile %d", d.File, i+1, l.LastPage-l.FirstPage+1, d.PagesPerLetter)
		}
		first := pages[l.FirstPage-1]
		got, groups := lines(inZone(first, ZoneC4))
		switch l.Hold {
		case "":
			if want := l.WindowLines(); !slices.Equal(got, want) {
				errorf(l.FirstPage, "the zone shows\n%q\nthe manifest says\n%q", got, want)
			}
			for _, g := range groups {
				for _, w := range g {
					if !w.box().inside(Rect{Zone.X0 - 0.01, Zone.Y0 - 0.01, Zone.X1 + 0.01, Zone.Y1 + 0.01}) {
						errorf(l.FirstPage, "%q at %.1f,%.1f-%.1f,%.1f mm is not wholly inside the DL zone", w.s, w.x0/MM, w.y0/MM, w.x1/MM, w.y1/MM)
					}
				}
			}
			if d.PagesPerLetter == 0 && i > 0 && slices.Equal(l.Address, d.Letters[i-1].Address) {
				errorf(l.FirstPage, "the letter has the address of the letter before it")
			}
		case HoldScan:
			if len(got) > 0 {
				errorf(l.FirstPage, "a scan's window shows text %q", got)
			}
			if n := imagesOn(t, path, l.FirstPage); n == 0 {
				errorf(l.FirstPage, "a scan's page has no image")
			}
		case HoldUnreadable:
			if len(got) != len(l.Address) {
				errorf(l.FirstPage, "the unreadable window shows %d lines (%q), it has %d", len(got), got, len(l.Address))
			}
			for k := range min(len(got), len(l.Address)) {
				if strings.Contains(got[k], l.Address[k]) || strings.Contains(got[k], strings.Fields(l.Address[k])[0]) {
					errorf(l.FirstPage, "the unreadable line %q reads as %q", l.Address[k], got[k])
				}
			}
		case HoldWindowEdge:
			// Read whole (whatever the zone), the lines are the address;
			// each starts past the tolerance and crosses into the zone.
			band := Rect{0, Zone.Y0, Zone.X1, Zone.Y1}
			all, groups := lines(inZone(first, band))
			if !slices.Equal(all, l.Address) {
				errorf(l.FirstPage, "the window band shows %q, the address is %q", all, l.Address)
			}
			for _, g := range groups {
				if g[0].x0 > Zone.X0-3*MM || g[len(g)-1].x1 < Zone.X0+3*MM {
					errorf(l.FirstPage, "line %q does not cross the zone's left edge by more than the tolerance (%.1f-%.1f mm)", g[0].s, g[0].x0/MM, g[len(g)-1].x1/MM)
				}
			}
		default:
			t.Errorf("%s letter %d: hold %q", d.File, i+1, l.Hold)
		}
		// A letter starts where the window changes.
		if l.Hold == "" && d.PagesPerLetter == 0 && slices.Equal(addressOf(got, l), prevWindow) {
			errorf(l.FirstPage, "the window shows the same address as the page before")
		}
		prevWindow = addressOf(got, l)
		for p := l.FirstPage + 1; p <= l.LastPage; p++ {
			cont, _ := lines(inZone(pages[p-1], ZoneC4))
			if len(cont) > 0 && !slices.Equal(cont, l.Address) {
				errorf(p, "a continuation page shows %q in the zone (the letter's address: %q)", cont, l.Address)
			}
			if len(cont) > 0 {
				prevWindow = cont
			}
		}
	}
	if next != d.Pages+1 {
		t.Errorf("%s: the letters end on page %d of %d", d.File, next-1, d.Pages)
	}
}

// transparentGlyphs returns, by page (0-based), the Glyphs elements of
// an XPS package painted with a fully transparent fill: their text as one
// word whose box is estimated from the origin and size, through the Canvas
// transforms.
func transparentGlyphs(path string) (map[int][]word, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	parts := map[string]*zip.File{}
	for _, f := range zr.File {
		parts[f.Name] = f
	}
	read := func(name string) ([]byte, error) {
		f, ok := parts[strings.TrimPrefix(name, "/")]
		if !ok {
			return nil, fmt.Errorf("%s: no part %s", path, name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	fdoc, err := read("Documents/1/FixedDocument.fdoc")
	if err != nil {
		return nil, err
	}
	var doc struct {
		Pages []struct {
			Source string `xml:"Source,attr"`
		} `xml:"PageContent"`
	}
	if err := xml.Unmarshal(fdoc, &doc); err != nil {
		return nil, err
	}
	type matrix [6]float64 // m11 m12 m21 m22 dx dy
	apply := func(m matrix, x, y float64) (float64, float64) {
		return m[0]*x + m[2]*y + m[4], m[1]*x + m[3]*y + m[5]
	}
	then := func(child, parent matrix) matrix { // child first, then parent
		x0, y0 := apply(parent, child[4], child[5])
		return matrix{parent[0]*child[0] + parent[2]*child[1], parent[1]*child[0] + parent[3]*child[1],
			parent[0]*child[2] + parent[2]*child[3], parent[1]*child[2] + parent[3]*child[3], x0, y0}
	}
	parse := func(s string) matrix {
		var m matrix
		for i, f := range strings.Split(s, ",") {
			if i < 6 {
				m[i], _ = strconv.ParseFloat(strings.TrimSpace(f), 64)
			}
		}
		return m
	}
	out := map[int][]word{}
	for i, pc := range doc.Pages {
		src := pc.Source
		if !strings.HasPrefix(src, "/") {
			src = "Documents/1/" + src
		}
		data, err := read(src)
		if err != nil {
			return nil, err
		}
		stack := []matrix{{0.75, 0, 0, 0.75, 0, 0}} // XPS units (1/96 inch) to points
		dec := xml.NewDecoder(bytes.NewReader(data))
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			switch e := tok.(type) {
			case xml.StartElement:
				attr := map[string]string{}
				for _, a := range e.Attr {
					attr[a.Name.Local] = a.Value
				}
				switch e.Name.Local {
				case "Canvas":
					m := matrix{1, 0, 0, 1, 0, 0}
					if rt, ok := attr["RenderTransform"]; ok {
						m = parse(rt)
					}
					stack = append(stack, then(m, stack[len(stack)-1]))
				case "Glyphs":
					fill := attr["Fill"]
					if len(fill) != 9 || !strings.HasPrefix(fill, "#00") {
						continue
					}
					m := stack[len(stack)-1]
					if rt, ok := attr["RenderTransform"]; ok {
						m = then(parse(rt), m)
					}
					ox, _ := strconv.ParseFloat(attr["OriginX"], 64)
					oy, _ := strconv.ParseFloat(attr["OriginY"], 64)
					em, _ := strconv.ParseFloat(attr["FontRenderingEmSize"], 64)
					x, y := apply(m, ox, oy)
					size := em * m[3]
					text := strings.TrimPrefix(attr["UnicodeString"], "{}")
					out[i] = append(out[i], word{x, y - 0.8*size, x + 0.5*size*float64(len(text)), y + 0.2*size, text})
				}
			case xml.EndElement:
				if e.Name.Local == "Canvas" {
					stack = stack[:len(stack)-1]
				}
			}
		}
	}
	return out, nil
}

// addressOf drops the channel lines of what a window shows.
func addressOf(window []string, l Letter) []string {
	return window[min(len(window), len(l.WindowLines())-len(l.Address)):]
}

// imagesOn counts the images pdfimages lists on a page.
func imagesOn(t *testing.T, path string, page int) int {
	out, err := exec.Command("pdfimages", "-list", "-f", strconv.Itoa(page), "-l", strconv.Itoa(page), path).Output()
	if err != nil {
		t.Errorf("pdfimages %s: %v", path, err)
		return 0
	}
	return max(0, len(strings.Split(strings.TrimSpace(string(out)), "\n"))-2)
}

// TestVerdicts: the engine, on the default reference data, answers for
// every address of the small corpus what the manifest says; and for every
// place the address forms the generator uses.
func TestVerdicts(t *testing.T) {
	_, m := smallCorpus(t)
	checkVerdicts(t, m)
	e, err := engine.New(testref.Index(t).Ref, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	f := func(lines []string, want string) {
		t.Helper()
		if got := e.Check(lines, false).Status.String(); got != want {
			t.Errorf("%q: %s, want %s", lines, got, want)
		}
	}
	for _, p := range places {
		tail := p.name + " " + p.state + " " + p.postcode
		f([]string{"Jo Citizen", "12 Smith St", tail}, "matched")
		f([]string{"Jo Citizen", "12 Smith St", strings.ToUpper(tail)}, "matched")
		f([]string{"Acme Pty Ltd", "Attn: Jo Citizen", "4/12 Smith St", p.name + ", " + p.state + " " + p.postcode}, "matched")
		f([]string{"Jo Citizen", "PO Box 12", tail, "AUSTRALIA"}, "matched")
		f([]string{"Jo Citizen", "12 Smith St", misspelt(p.name) + " " + p.state + " " + p.postcode}, "unmatched")
		f([]string{"Jo Citizen", "12 Smith St", strings.ToUpper(misspelt(p.name)) + " " + p.state + " " + p.postcode}, "unmatched")
		f([]string{"Jo Citizen", tail}, "invalid")
	}
	for _, a := range abroad {
		f(append([]string{"Jo Citizen"}, a...), "international")
	}
}

func checkVerdicts(t *testing.T, m *Manifest) {
	e, err := engine.New(testref.Index(t).Ref, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, d := range m.Documents {
		for i, l := range d.Letters {
			if len(l.Address) == 0 {
				continue
			}
			if got := e.Check(l.Address, false).Status.String(); got != l.Verdict {
				t.Errorf("%s letter %d: %q is %s, the manifest says %s", d.File, i+1, l.Address, got, l.Verdict)
			}
		}
	}
}

// TestDeterministic: the same Options make the same manifest and the same
// bytes for everything drawn in Go (XPS aside: its font parts have random
// names); another seed makes another corpus.
func TestDeterministic(t *testing.T) {
	needTools(t)
	a, err := build(Options{Letters: Small, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := build(Options{Letters: Small, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ma, _ := json.Marshal(a.manifest)
	mb, _ := json.Marshal(b.manifest)
	if !bytes.Equal(ma, mb) {
		t.Error("two manifests of the same options differ")
	}
	if a.key != b.key {
		t.Errorf("cache keys %s and %s for the same options", a.key, b.key)
	}
	if !slices.Equal(a.order, b.order) {
		t.Fatalf("files %q and %q", a.order, b.order)
	}
	for _, name := range a.order {
		if !strings.HasSuffix(name, ".xps") && !bytes.Equal(a.files[name], b.files[name]) {
			t.Errorf("%s differs between two builds", name)
		}
	}
	for i := range a.prints {
		if !bytes.Equal(a.prints[i].html, b.prints[i].html) {
			t.Errorf("the HTML of %s differs between two builds", a.prints[i].out)
		}
	}
	c, err := build(Options{Letters: Small, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if c.key == a.key {
		t.Error("another seed, the same cache key")
	}
}

// TestSameBytes: generated again, the small corpus has the same bytes in
// every file but the XPS ones (their font parts have random names).
func TestSameBytes(t *testing.T) {
	dir, _ := smallCorpus(t)
	again := t.TempDir()
	if _, err := Generate(context.Background(), again, Options{Letters: Small, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".xps") {
			continue
		}
		a, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(again, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two generations", e.Name())
		}
	}
}

// TestCachedReuses: a second Cached call finds the corpus the first made
// (the manifest is not written again).
func TestCachedReuses(t *testing.T) {
	dir, _ := smallCorpus(t)
	st, err := os.Stat(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir2, m2, err := Cached(context.Background(), small.cache, Options{Letters: Small, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	st2, err := os.Stat(filepath.Join(dir2, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if dir2 != dir || !st2.ModTime().Equal(st.ModTime()) || m2.Letters != Small {
		t.Errorf("second call: %s (manifest %v), first %s (%v)", dir2, st2.ModTime(), dir, st.ModTime())
	}
	ents, _ := os.ReadDir(small.cache)
	if len(ents) != 1 {
		t.Errorf("the cache holds %d entries, want the one corpus", len(ents))
	}
}

// TestRefusals: what Generate refuses, with the reason.
func TestRefusals(t *testing.T) {
	needTools(t)
	f := func(dir string, o Options, want string) {
		t.Helper()
		_, err := Generate(context.Background(), dir, o)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Generate(%s, %+v): %v, want an error saying %q", dir, o, err, want)
		}
	}
	f(t.TempDir(), Options{Letters: Small - 1}, "at least 60")
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	f(full, Options{Letters: Small}, "is not empty")
}
