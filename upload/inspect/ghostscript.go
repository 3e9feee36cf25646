package inspect

import (
	"github.com/lodge-mail/lodge/internal/deadline"

	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lodge-mail/lodge/internal/sandbox"
)

// PostScript pages are counted by running the document in Ghostscript
// (internal/sandbox: a clean environment, a process group killed at the
// deadline, address space and CPU limits) with the null page device,
// A4 as the paper of pages that ask for none, and an EndPage procedure
// that prints one line per page it outputs, with the page's size:
//
//	<token> page 595.0 842.0
//
// The document runs inside "stopped", so that an error in it is reported
// on the same channel ("<token> error undefined foo") and Ghostscript
// exits normally. The token is random for each run, so that what the
// document prints itself is not taken for a page.

// ghostscriptProgram is the PostScript run before (and around) the
// document, given by Ghostscript's -c; %[1]s is the token. Everything is
// bound to operators, so that a document redefining names cannot change
// what it does.
const ghostscriptProgram = `<< /EndPage { exch pop dup 2 ne { (%[1]s page ) print currentpagedevice /PageSize get aload pop exch 64 string cvs print ( ) print 64 string cvs print (\n) print flush } if 2 ne } bind >> setpagedevice ` +
	`{ LODGEFILE run } stopped { { (%[1]s error ) print $error /errorname get 64 string cvs print ( ) print $error /command get 128 string cvs print (\n) print flush } stopped pop } if`

// gsLineMax: output lines longer than this are cut (only ours matter).
const gsLineMax = 512

func psPages(r io.ReaderAt, size int64, lim Limits, dl *deadline.Deadline) (Document, error) {
	hint, err := psDSC(r, size, lim, dl)
	if err != nil {
		return Document{}, err
	}
	path, done, err := filePath(r, size)
	if err != nil {
		return Document{}, err
	}
	defer done()
	return runGhostscript(path, hint, lim, dl)
}

// filePath returns the name of the file r reads, or of a temporary copy
// when r is not a file.
func filePath(r io.ReaderAt, size int64) (string, func(), error) {
	if f, ok := r.(*os.File); ok {
		if abs, err := filepath.Abs(f.Name()); err == nil {
			if st, err := os.Stat(abs); err == nil && st.Size() == size {
				return abs, func() {}, nil
			}
		}
	}
	tmp, err := os.CreateTemp("", "lodge-inspect-*.ps")
	if err != nil {
		return "", nil, fmt.Errorf("document could not be inspected: %w", err)
	}
	done := func() { tmp.Close(); os.Remove(tmp.Name()) }
	if _, err := io.Copy(tmp, io.NewSectionReader(r, 0, size)); err != nil {
		done()
		return "", nil, fmt.Errorf("document could not be inspected: %w", err)
	}
	return tmp.Name(), done, nil
}

func runGhostscript(path string, hint dscHint, lim Limits, dl *deadline.Deadline) (Document, error) {
	ctx, cancel := context.WithDeadline(context.Background(), dl.At())
	defer cancel()
	release, err := AcquireChild(ctx, lim)
	if err != nil {
		if ctx.Err() != nil {
			return Document{}, limitErr("inspection took longer than %v", lim.Timeout)
		}
		return Document{}, err
	}
	defer release()
	var tok [8]byte
	rand.Read(tok[:])
	token := "LODGE-" + hex.EncodeToString(tok[:])
	out, err := sandbox.Run(ctx, sandbox.Limits{
		Timeout:  time.Until(dl.At()),
		Memory:   lim.MaxMemory,
		FileSize: 16 << 20, // the null device writes nothing
		Output:   (lim.MaxPages + 2) * 128,
	}, filepath.Dir(path), lim.Ghostscript,
		"-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-dNOPROMPT", "-sDEVICE=nullpage", "-sPAPERSIZE=a4",
		"-sLODGEFILE="+path, "--permit-file-read="+path,
		"-c", fmt.Sprintf(ghostscriptProgram, token))
	if err != nil {
		return Document{}, ghostscriptErr(err, hint, lim)
	}
	res := parseGhostscript(out, token, lim.MaxPages)
	switch {
	case res.doc.Pages > lim.MaxPages:
		return Document{}, limitErr("PostScript prints more than %d pages", lim.MaxPages)
	case res.errName == "VMerror":
		return Document{}, limitErr("PostScript needs more memory than Ghostscript has (/VMerror in %s after %s)", res.errCommand, pagesSoFar(res.doc.Pages))
	case res.errName != "":
		return Document{}, malformed("PostScript error /%s in %s after %s: it cannot be printed", res.errName, res.errCommand, pagesSoFar(res.doc.Pages))
	case res.doc.Pages == 0:
		if h := hint.String(); h != "" {
			return Document{}, malformed("PostScript prints no page (%s)", h)
		}
		return Document{}, malformed("PostScript prints no page")
	}
	return res.doc, nil
}

func pagesSoFar(n int) string {
	switch n {
	case 0:
		return "no page"
	case 1:
		return "1 page"
	}
	return strconv.Itoa(n) + " pages"
}

// ghostscriptErr turns a failed run into an error of this package.
func ghostscriptErr(err error, hint dscHint, lim Limits) error {
	note := ""
	if h := hint.String(); h != "" {
		note = "; " + h
	}
	switch {
	case errors.Is(err, sandbox.ErrMissing):
		return newErr([]error{ErrNoGhostscript}, "PostScript pages are counted with Ghostscript, which this server lacks: the operator must install it (Debian package ghostscript; %v)", err)
	case errors.Is(err, sandbox.ErrTimeout):
		return limitErr("PostScript did not finish within %v: a program that never ends? (%v%s)", lim.Timeout, err, note)
	case errors.Is(err, sandbox.ErrLimit):
		return limitErr("PostScript needed more than %d MiB of memory or was stopped (%v)", lim.MaxMemory>>20, err)
	case errors.Is(err, context.DeadlineExceeded):
		return limitErr("inspection took longer than %v", lim.Timeout)
	}
	return malformed("PostScript could not be interpreted (%v%s)", err, note)
}

type gsResult struct {
	doc                 Document
	errName, errCommand string
}

// parseGhostscript reads what the program printed: the lines that start
// with token (pages and an error), anything else ignored. It counts up to
// max+1 pages.
func parseGhostscript(out []byte, token string, max int) gsResult {
	var res gsResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 4096), gsLineMax)
	sc.Split(scanLinesCut)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), token+" ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		switch {
		case len(f) == 0:
		case f[0] == "page":
			if res.doc.Pages > max {
				continue
			}
			var w, h float64
			if len(f) == 3 {
				w, _ = strconv.ParseFloat(f[1], 64)
				h, _ = strconv.ParseFloat(f[2], 64)
			}
			res.doc.addPage(res.doc.Pages, w, h)
			res.doc.Pages++
		case f[0] == "error" && res.errName == "":
			res.errName, res.errCommand = "unknown", "--unknown--"
			if len(f) > 1 {
				res.errName = printable(f[1])
			}
			if len(f) > 2 {
				res.errCommand = printable(strings.Join(f[2:], " "))
			}
		}
	}
	return res
}

// scanLinesCut is bufio.ScanLines that cuts lines longer than the
// buffer instead of failing.
func scanLinesCut(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, bytes.TrimSuffix(data[:i], []byte{'\r'}), nil
	}
	if len(data) >= gsLineMax || atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// printable keeps a name from the document fit for a message: at most 64
// bytes, printable ASCII.
func printable(s string) string {
	b := []byte(s[:min(len(s), 64)])
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}
