package corpus

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/lodge-mail/lodge/internal/pdf"
)

// version is part of the cache key: bump it when what is drawn changes
// in a way the hashed inputs do not show (the XPS drawing, whose bytes
// are not hashed because its font parts have random names).
const version = "corpus-1"

// built is a corpus ready to be written: files made in Go, the jobs the
// tools run, and the manifest.
type built struct {
	files    map[string][]byte // name in the corpus → content
	order    []string          // files in a stable order
	gs       []gsJob
	prints   []printJob
	manifest Manifest
	key      string // hash of everything above and of the tools
}

// gsJob converts a PostScript file of the corpus to PDF.
type gsJob struct{ ps, pdf string }

// printJob prints an HTML file with Chromium; cuts, when set, are the
// single-letter files cut out of the print with qpdf (pages first..last).
type printJob struct {
	html  []byte
	out   string // the PDF, in the corpus (or a scratch file when cut)
	pages int
	cuts  []cut
}

type cut struct {
	file        string
	first, last int
}

// build plans the corpus and draws everything drawn in Go.
func build(o Options) (*built, error) {
	docs, letters, err := plan(o)
	if err != nil {
		return nil, err
	}
	b := &built{files: map[string][]byte{}, manifest: Manifest{Seed: o.Seed, Letters: letters}}
	add := func(name string, data []byte) {
		b.files[name] = data
		b.order = append(b.order, name)
	}
	var singles printJob // the single-letter HTML files, printed together
	var singlesPages []page
	for _, d := range docs {
		var data []byte
		var err error
		switch d.render {
		case viaPDFWriter:
			data, err = renderPDFWriter(d.pages)
		case viaPDFBuilder:
			data, err = renderPDFBuilder(d.pages)
		case viaXPS:
			data, err = renderXPS(d.pages)
		case viaPS:
			data, err = renderPS(d.pages, d.trueType)
		case viaHTML:
			if d.print != "" {
				first := singles.pages + 1
				singles.pages += len(d.pages)
				singles.cuts = append(singles.cuts, cut{d.doc.File, first, singles.pages})
				singlesPages = append(singlesPages, d.pages...)
			} else {
				var h []byte
				if h, err = renderHTML(d.pages); err == nil {
					b.prints = append(b.prints, printJob{html: h, out: d.doc.File, pages: len(d.pages)})
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("corpus: %s: %w", d.doc.File, err)
		}
		if data != nil {
			add(d.doc.File, data)
		}
		b.manifest.Documents = append(b.manifest.Documents, d.doc)
		if d.render == viaPS {
			c := d.doc
			c.File = strings.TrimSuffix(d.doc.File, ".ps") + ".pdf"
			c.Format, c.Producer, c.CopyOf = "pdf", ProducerGhostscript, d.doc.File
			b.manifest.Documents = append(b.manifest.Documents, c)
			b.gs = append(b.gs, gsJob{ps: d.doc.File, pdf: c.File})
		}
	}
	if len(singles.cuts) > 0 {
		h, err := renderHTML(singlesPages)
		if err != nil {
			return nil, fmt.Errorf("corpus: single letters: %w", err)
		}
		singles.html, singles.out = h, ".singles.pdf"
		b.prints = append(b.prints, singles)
	}
	m, err := json.MarshalIndent(&b.manifest, "", " ")
	if err != nil {
		return nil, err
	}
	tools, err := toolIdentity()
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	put := func(name string, data []byte) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(data)))
		h.Write([]byte(name))
		h.Write(n[:])
		h.Write(data)
	}
	put("version", []byte(version))
	put("tools", []byte(tools))
	put("manifest", m)
	for _, name := range b.order {
		if !strings.HasSuffix(name, ".xps") {
			put(name, b.files[name])
		}
	}
	for _, p := range b.prints {
		put(p.out, p.html)
	}
	b.key = hex.EncodeToString(h.Sum(nil))[:20]
	return b, nil
}

// toolIdentity names the tools and fonts the corpus is made with, by path,
// size and modification time: another version makes another corpus.
func toolIdentity() (string, error) {
	var b strings.Builder
	for _, tool := range []string{"gs", "chromium", "qpdf"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			return "", fmt.Errorf("corpus: %s is needed (Debian packages ghostscript, chromium, qpdf): %w", tool, err)
		}
		p, _ = filepath.EvalSymlinks(p)
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s %d %d\n", p, st.Size(), st.ModTime().UnixNano())
	}
	for f := font(0); f < fontCount; f++ {
		if _, ok := fontFiles[f]; !ok {
			continue
		}
		p, err := fontPath(f)
		if err != nil {
			return "", err
		}
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s %d %d\n", p, st.Size(), st.ModTime().UnixNano())
	}
	return b.String(), nil
}

// Generate writes the corpus o into dir (created; it must not exist or be
// empty) and returns its manifest, which it writes last as manifest.json.
func Generate(ctx context.Context, dir string, o Options) (*Manifest, error) {
	b, err := build(o)
	if err != nil {
		return nil, err
	}
	if err := b.write(ctx, dir); err != nil {
		return nil, err
	}
	return &b.manifest, nil
}

// Cached returns the directory of corpus o under cacheDir, generating it
// the first time: corpora are kept by a hash of their content (the
// documents drawn in Go, the PostScript and HTML the tools are given, the
// manifest, the tools' and fonts' identities), so a change to any of them
// makes a new one. Concurrent callers (test binaries of several packages)
// may generate the same corpus at once; one of them wins, whole.
func Cached(ctx context.Context, cacheDir string, o Options) (string, *Manifest, error) {
	b, err := build(o)
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(cacheDir, fmt.Sprintf("corpus-%d-%d-%s", o.letters(), o.Seed, b.key))
	if m, err := Load(dir); err == nil {
		return dir, m, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", nil, err
	}
	tmp, err := os.MkdirTemp(cacheDir, ".tmp-corpus-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(tmp)
	if err := b.write(ctx, tmp); err != nil {
		return "", nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another caller finished first: theirs is the same corpus.
		if m, lerr := Load(dir); lerr == nil {
			return dir, m, nil
		}
		return "", nil, err
	}
	return dir, &b.manifest, nil
}

// write writes the files, runs the tools (on every core) and writes the
// manifest last.
func (b *built) write(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if ents, err := os.ReadDir(dir); err != nil {
		return err
	} else if len(ents) > 0 {
		return fmt.Errorf("corpus: %s is not empty", dir)
	}
	for _, name := range b.order {
		if err := os.WriteFile(filepath.Join(dir, name), b.files[name], 0o644); err != nil {
			return err
		}
	}
	scratch, err := os.MkdirTemp("", "lodge-corpus-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)

	// Chromium prints first (the longest jobs), then the Ghostscript runs.
	var jobs []func() error
	for i, p := range b.prints {
		jobs = append(jobs, func() error { return printHTML(ctx, dir, scratch, i, p) })
	}
	for _, j := range b.gs {
		jobs = append(jobs, func() error {
			// Production's conversion, without the date and random
			// identifier, so that the same PostScript gives the same PDF.
			return run(ctx, dir, "gs", "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=pdfwrite",
				"-dAutoRotatePages=/None", "-dOmitInfoDate", "-dOmitID", "-dOmitXMP", "-sOutputFile="+j.pdf, j.ps)
		})
	}
	if err := parallel(ctx, runtime.NumCPU(), jobs); err != nil {
		return err
	}
	// Every document has the pages the manifest says (a Chromium page
	// that overflowed would make two).
	for _, d := range b.manifest.Documents {
		if d.Format != "pdf" {
			continue
		}
		n, err := pdfPages(filepath.Join(dir, d.File))
		if err != nil {
			return fmt.Errorf("corpus: %s: %w", d.File, err)
		}
		if n != d.Pages {
			return fmt.Errorf("corpus: %s has %d pages, the plan %d", d.File, n, d.Pages)
		}
	}
	m, err := json.MarshalIndent(&b.manifest, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "manifest.json"), append(m, '\n'), 0o644)
}

// printHTML prints one HTML file with headless Chromium, and cuts the
// single-letter files out of the print with qpdf.
func printHTML(ctx context.Context, dir, scratch string, i int, p printJob) error {
	html := filepath.Join(scratch, fmt.Sprintf("print-%d.html", i))
	if err := os.WriteFile(html, p.html, 0o644); err != nil {
		return err
	}
	for _, im := range []image{logoImage, scanImage} {
		_, png, _ := imageData(im)
		if err := os.WriteFile(filepath.Join(scratch, imageFile(im)), png, 0o644); err != nil {
			return err
		}
	}
	profile := filepath.Join(scratch, fmt.Sprintf("profile-%d", i))
	out := filepath.Join(dir, p.out)
	if len(p.cuts) > 0 {
		out = filepath.Join(scratch, fmt.Sprintf("print-%d.pdf", i))
	}
	if err := run(ctx, scratch, "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+profile, "--no-pdf-header-footer", "--print-to-pdf="+out, "file://"+html); err != nil {
		return err
	}
	if err := fixDates(out); err != nil {
		return err
	}
	if n, err := pdfPages(out); err != nil {
		return fmt.Errorf("corpus: Chromium's print: %w", err)
	} else if n != p.pages {
		return fmt.Errorf("corpus: Chromium printed %d pages, the plan %d", n, p.pages)
	}
	for _, c := range p.cuts {
		if err := run(ctx, dir, "qpdf", "--deterministic-id", "--empty", "--pages", out, fmt.Sprintf("%d-%d", c.first, c.last), "--", c.file); err != nil {
			return err
		}
	}
	return nil
}

// chromiumDate is the creation and modification date Chromium writes in
// its PDFs' information dictionary.
var chromiumDate = regexp.MustCompile(`/(CreationDate|ModDate) ?\(D:[0-9]{14}`)

// fixDates sets the dates of a Chromium PDF to 1 January 2026, digit for
// digit (the cross-reference offsets stay true): the same HTML then gives
// the same bytes.
func fixDates(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	data = chromiumDate.ReplaceAllFunc(data, func(m []byte) []byte {
		return append(m[:len(m)-14], "20260101000000"...)
	})
	return os.WriteFile(path, data, 0o644)
}

// pdfPages counts a PDF's pages with internal/pdf's reader.
func pdfPages(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	r, err := pdf.Open(bytes.NewReader(data), int64(len(data)), pdf.Limits{})
	if err != nil {
		return 0, err
	}
	return r.NumPages(), nil
}

// run runs a tool in dir, its output kept for the error.
func run(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := out.String()
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		return fmt.Errorf("corpus: %s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return nil
}

// parallel runs jobs on n workers and returns the first error.
func parallel(ctx context.Context, n int, jobs []func() error) error {
	ch := make(chan func() error)
	errs := make(chan error, len(jobs))
	var wg sync.WaitGroup
	for range max(1, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				errs <- j()
			}
		}()
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		ch <- j
	}
	close(ch)
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		if err != nil {
			all = append(all, err)
		}
	}
	if err := ctx.Err(); err != nil {
		all = append(all, err)
	}
	return errors.Join(all...)
}
