package production

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/lodge-mail/lodge/internal/sandbox"
	"github.com/lodge-mail/lodge/pipeline"
)

// pdfOf returns the path of a PDF of a mailing's document: the upload
// itself for a PDF (DocumentPath: its path, or its copy from the object
// store), else a conversion made once in this node's work folder by a
// sandboxed converter (Ghostscript's pdfwrite for PostScript, libgxps's
// xpstopdf for XPS). A document the converter refuses gives an error for
// the letters' hold reason.
func (p *Producer) pdfOf(ctx context.Context, m *pipeline.Mailing, f pipeline.File) (string, error) {
	if f.Kind == "pdf" {
		return DocumentPath(ctx, p.cfg.Blobs, f)
	}
	dir := filepath.Join(p.cfg.WorkDir, "converted", m.EPID)
	out := filepath.Join(dir, safeName(f.Name)+".pdf")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	in, err := DocumentPath(ctx, p.cfg.Blobs, f)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	tmp := out + ".tmp"
	os.Remove(tmp)
	lim := p.cfg.toolLimits(f.Pages)
	switch f.Kind {
	case "ps":
		_, err = sandbox.Run(ctx, lim, dir, "gs", "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=pdfwrite",
			"-dAutoRotatePages=/None", "-sOutputFile="+tmp, in)
	case "xps":
		_, err = sandbox.Run(ctx, lim, dir, "xpstopdf", in, tmp)
	default:
		return "", fmt.Errorf("%s: %s documents cannot be printed", f.Name, f.Kind)
	}
	if err != nil {
		os.Remove(tmp)
		if errors.Is(err, sandbox.ErrMissing) {
			return "", err // the server's fault, not the document's: retried
		}
		return "", &docError{fmt.Sprintf("%s could not be converted to PDF for printing: %v", f.Name, err)}
	}
	if fi, err := os.Stat(tmp); err != nil || fi.Size() == 0 {
		os.Remove(tmp)
		return "", &docError{fmt.Sprintf("%s could not be converted to PDF for printing: the converter wrote nothing", f.Name)}
	}
	if err := syncFile(tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", err
	}
	return out, nil
}

// PDF returns a PDF of a mailing's document, as production prints it
// (see pdfOf): the auto processor reads PostScript through it, so that a
// document is converted once. DocumentError tells its errors that are
// the document's fault.
func (p *Producer) PDF(ctx context.Context, m *pipeline.Mailing, f pipeline.File) (string, error) {
	return p.pdfOf(ctx, m, f)
}

// DocumentError reports whether err is a problem of a customer's
// document (a converter refused it), not of the server.
func DocumentError(err error) bool {
	var d *docError
	return errors.As(err, &d)
}

// docError is a problem of a customer's document: its letters are held
// with it, rather than the stage retried.
type docError struct{ msg string }

func (e *docError) Error() string { return e.msg }

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// safeName makes a document name a file name of the work folder, unique
// per name (a hash of the name follows its readable part).
func safeName(name string) string {
	s := unsafeChars.ReplaceAllString(name, "_")
	if len(s) > 100 {
		s = s[:100]
	}
	sum := sha1.Sum([]byte(name))
	return s + "-" + hex.EncodeToString(sum[:4])
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
