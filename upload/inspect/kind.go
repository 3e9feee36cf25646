package inspect

import (
	"bytes"
	"strings"

	"github.com/lodge-mail/lodge/internal/pdf"
)

// Kind is a file type, as told by content.
type Kind string

// The kinds. Their values are the canonical file extensions.
const (
	PDF        Kind = "pdf"
	PostScript Kind = "ps"
	XPS        Kind = "xps"
	JSON       Kind = "json"
	XML        Kind = "xml"
	ZIP        Kind = "zip"
	Unknown    Kind = "unknown"
)

func (k Kind) label() string {
	switch k {
	case PDF:
		return "PDF"
	case PostScript:
		return "PostScript"
	case XPS:
		return "XPS"
	case JSON:
		return "JSON"
	case XML:
		return "XML"
	case ZIP:
		return "ZIP"
	}
	return "no recognised type"
}

// SniffLen is how many leading bytes Sniff looks at; passing fewer is
// fine, passing more changes nothing.
const SniffLen = 2048

// pdfHeaderWindow: like Acrobat, a %PDF- header may follow up to 1024
// bytes of junk (mail-merge prefixes, HTTP leftovers); the PDF reader
// finds it there too.
const pdfHeaderWindow = pdf.HeaderWindow

// Sniff tells a file's kind from its first bytes (up to SniffLen):
//
//   - PDF: "%PDF-" at the start, or within the first 1024 bytes after
//     junk when nothing else matched the start;
//   - PostScript: "%!PS" (after an optional Ctrl-D or a PJL job header),
//     or the DOS EPS binary header C5 D0 D3 C6;
//   - ZIP: a local file header "PK\x03\x04" or the end record of an empty
//     archive "PK\x05\x06". XPS documents are ZIP packages: Sniff says
//     ZIP, and ZipIsXPS tells them apart;
//   - JSON: first non-space byte "{" or "[", after an optional UTF-8 BOM;
//   - XML: "<?xml", "<!--", "<!DOCTYPE" or "<" and a name start, after an
//     optional BOM (UTF-8 or UTF-16) and white space; in UTF-16 (a BOM, or
//     '<' or white space in two bytes, one of them zero), the same in its
//     characters, and after a UTF-16 BOM any '<'.
//
// Anything else is Unknown.
func Sniff(head []byte) Kind {
	if len(head) > SniffLen {
		head = head[:SniffLen]
	}
	switch {
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return PDF
	case isPostScript(head):
		return PostScript
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return ZIP
	}
	if k := sniffText(head); k != Unknown {
		return k
	}
	w := head
	if len(w) > pdfHeaderWindow+5 {
		w = w[:pdfHeaderWindow+5]
	}
	if bytes.Contains(w, []byte("%PDF-")) {
		return PDF
	}
	return Unknown
}

func isPostScript(head []byte) bool {
	if bytes.HasPrefix(head, []byte{0xC5, 0xD0, 0xD3, 0xC6}) {
		return true
	}
	h := bytes.TrimPrefix(head, []byte{0x04})
	// A printer job: the Universal Exit Language, PJL lines, then the
	// PostScript.
	if rest, ok := bytes.CutPrefix(h, []byte("\x1b%-12345X")); ok {
		for {
			rest = bytes.TrimLeft(rest, "\r\n")
			if !bytes.HasPrefix(rest, []byte("@PJL")) {
				break
			}
			i := bytes.IndexAny(rest, "\r\n")
			if i < 0 {
				return false
			}
			rest = rest[i:]
		}
		h = rest
	}
	return bytes.HasPrefix(h, []byte("%!PS"))
}

func sniffText(head []byte) Kind {
	switch {
	case bytes.HasPrefix(head, []byte("\xEF\xBB\xBF")):
		head = head[3:]
	case len(head) >= 2 && (head[0] == 0xFF && head[1] == 0xFE || head[0] == 0xFE && head[1] == 0xFF):
		return sniffUTF16(head[2:], head[0] == 0xFE, true)
	case len(head) >= 2 && head[1] == 0 && isUTF16Start(head[0]):
		// UTF-16LE without a byte order mark (XML 1.0 appendix F: its
		// declaration names the encoding)
		return sniffUTF16(head, false, false)
	case len(head) >= 2 && head[0] == 0 && isUTF16Start(head[1]):
		return sniffUTF16(head, true, false)
	}
	head = bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 {
		return Unknown
	}
	switch head[0] {
	case '{', '[':
		return JSON
	case '<':
		if len(head) < 2 {
			return Unknown
		}
		c := head[1]
		if c == '?' && bytes.HasPrefix(head, []byte("<?xml")) ||
			c == '!' && (bytes.HasPrefix(head, []byte("<!--")) || bytes.HasPrefix(head, []byte("<!DOCTYPE"))) ||
			c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' || c >= 0x80 {
			return XML
		}
	}
	return Unknown
}

func isUTF16Start(c byte) bool { return c == '<' || c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// sniffUTF16 sniffs UTF-16 text as XML or Unknown (JSON must be UTF-8):
// its ASCII characters as bytes, any other character as 0x80. After a
// byte order mark a '<' first (after white space) is enough.
func sniffUTF16(b []byte, bigEndian, bom bool) Kind {
	narrow := make([]byte, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		hi, lo := b[i+1], b[i]
		if bigEndian {
			hi, lo = lo, hi
		}
		if hi != 0 || lo >= 0x80 {
			lo = 0x80
		}
		narrow = append(narrow, lo)
	}
	if t := bytes.TrimLeft(narrow, " \t\r\n"); bom && len(t) > 0 && t[0] == '<' || sniffText(narrow) == XML {
		return XML
	}
	return Unknown
}

// Accepted lists the accepted extensions, in the order messages name them.
var Accepted = []string{"pdf", "ps", "xps", "json", "xml", "zip"}

// extension returns the lower-cased extension of the last element of
// name, without the dot ("" when there is none).
func extension(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || i == len(name)-1 {
		return ""
	}
	return strings.ToLower(name[i+1:])
}

// KindForExtension gives the kind an accepted extension promises: pdf, ps,
// xps, json, xml or zip, in any case.
func KindForExtension(name string) (Kind, bool) {
	switch ext := extension(name); ext {
	case "pdf", "ps", "xps", "json", "xml", "zip":
		return Kind(ext), true
	}
	return Unknown, false
}

// CheckType checks a file's name against its first bytes (up to SniffLen):
// the extension must be accepted and the content must be of the kind the
// extension says. It returns that kind. A .xps file passes when its content
// is a ZIP; whether the ZIP is an XPS package is for ZipIsXPS (or Pages) to
// say, which need the whole file.
func CheckType(name string, head []byte) (Kind, error) {
	ext := extension(name)
	if ext == "" {
		return Unknown, newErr([]error{ErrType, ErrNoExtension},
			"%q has no extension (accepted: %s)", name, strings.Join(Accepted, ", "))
	}
	want, ok := KindForExtension(name)
	if !ok {
		return Unknown, typeErr("%q: files of type .%s are not accepted (accepted: %s)", name, ext, strings.Join(Accepted, ", "))
	}
	if len(head) == 0 {
		return Unknown, typeErr("%q is empty", name)
	}
	got := Sniff(head)
	if want == XPS && got == ZIP {
		return XPS, nil
	}
	if got != want {
		return Unknown, typeErr("%q: the extension says %s but the content is %s", name, want.label(), got.label())
	}
	return want, nil
}
