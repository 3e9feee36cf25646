package corpus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// MM is a millimetre in points.
const MM = 72 / 25.4

// Rect is an area of a displayed page in points from its top-left corner.
type Rect struct{ X0, Y0, X1, Y1 float64 }

// Tolerance is production's default window tolerance (3 mm) in points.
const Tolerance = 3 * MM

// The zones a reader looks in: production's default DL and C4 windows
// widened by Tolerance.
var (
	Zone   = Rect{(20 - 3) * MM, (50 - 3) * MM, (115 + 3) * MM, (88 + 3) * MM}
	ZoneC4 = Rect{(20 - 3) * MM, (50 - 3) * MM, (115 + 3) * MM, (95 + 3) * MM}
)

// Expected hold reasons, by class, of non-conforming documents and letters.
const (
	// HoldNoAddressBefore: the document starts with pages whose window
	// holds no address (the document, not a letter, is refused).
	HoldNoAddressBefore = "no_address_before"
	// HoldScan: the window of the letter's first page shows an image and
	// no text.
	HoldScan = "scan"
	// HoldUnreadable: the window holds text whose glyphs map to no
	// characters (a font without ToUnicode, glyph names that mean nothing).
	HoldUnreadable = "unreadable"
	// HoldWindowEdge: the address crosses the zone's edge by more than the
	// tolerance (the reader sees part of it).
	HoldWindowEdge = "window_edge"
)

// Producers, as Document.Producer names them.
const (
	ProducerPDFWriter   = "internal/pdf"       // pdf.Writer
	ProducerPDFBuilder  = "testdoc.PDFBuilder" // objects written by hand
	ProducerGhostscript = "ghostscript"        // gs -sDEVICE=pdfwrite from our PostScript
	ProducerPostScript  = "postscript"         // the PostScript itself
	ProducerChromium    = "chromium"           // headless Chromium printing our HTML
	ProducerXPS         = "internal/xps"       // xps.Writer
)

// Manifest is manifest.json: what every document of a corpus holds.
type Manifest struct {
	Seed uint64 `json:"seed"`
	// Letters is the number of distinct letters (copies not counted).
	Letters   int        `json:"letters"`
	Documents []Document `json:"documents"`
}

// Document is one file of the corpus.
type Document struct {
	File     string `json:"file"`     // name in the corpus directory
	Format   string `json:"format"`   // pdf, ps or xps
	Producer string `json:"producer"` // one of the Producer constants
	Layout   string `json:"layout"`   // one of Layouts
	Pages    int    `json:"pages"`
	// CopyOf names the document this one copies page for page (the
	// PostScript a PDF was made from, the PDF an XPS copy was drawn as):
	// the same letters on the same pages.
	CopyOf string `json:"copy_of,omitempty"`
	// PagesPerLetter, when set, is the profile setting that splits the
	// document: every letter has that many pages and consecutive letters
	// may have the same address.
	PagesPerLetter int `json:"pages_per_letter,omitempty"`
	// Hold is the expected outcome for the whole document when it is not
	// conforming (HoldNoAddressBefore); Letters then lists the letters
	// after the offending pages.
	Hold    string   `json:"hold,omitempty"`
	Letters []Letter `json:"letters"`
}

// Letter is one letter of a document, as a correct reader finds it.
type Letter struct {
	FirstPage int `json:"first_page"` // 1-based
	LastPage  int `json:"last_page"`
	// Address is the postal lines in the window, exactly as printed, top
	// to bottom (the channel lines excluded). For a letter held as
	// unreadable or past the window's edge, the lines as drawn (what a
	// person correcting it would type); empty for a scan.
	Address   []string `json:"address"`
	Reference string   `json:"reference,omitempty"`
	Email     string   `json:"email,omitempty"`
	Fax       string   `json:"fax,omitempty"`
	SMS       string   `json:"sms,omitempty"`
	Layout    string   `json:"layout"`
	// Verdict is the engine's answer for Address on the default reference
	// data: matched, unmatched, invalid or international.
	Verdict string `json:"verdict,omitempty"`
	// Hold is the expected hold reason class of a non-conforming letter
	// (the Hold constants).
	Hold string `json:"hold,omitempty"`
	// Features says what is special about the letter: "ref_white",
	// "ref_invisible" (render mode 3, or transparent in XPS), "ref_visible",
	// "channels", "channels_hidden" (white, render mode 3 or transparent),
	// "repeat_address" (continuation pages
	// repeat it), "landscape_page", "rotate90", "rotate180", "rotate270",
	// "form", "nested_form", "logo", "columns", "return_address",
	// "info_block", "offset" (the block outside the window but within the
	// tolerance).
	Features []string `json:"features,omitempty"`
	// Font is the font family the window text is set in.
	Font string `json:"font"`
	// Block is where the window text's lines are set: the first
	// baseline's origin and the font size, in points (displayed page).
	BlockX    float64 `json:"block_x"`
	BlockY    float64 `json:"block_y"`
	BlockSize float64 `json:"block_size"`
}

// WindowLines returns the lines the letter's window shows, top to bottom:
// the channel lines, then the postal lines.
func (l *Letter) WindowLines() []string {
	var out []string
	if l.Reference != "" {
		out = append(out, "ref:"+l.Reference)
	}
	if l.Email != "" {
		out = append(out, "email:"+l.Email)
	}
	if l.Fax != "" {
		out = append(out, "fax:"+l.Fax)
	}
	if l.SMS != "" {
		out = append(out, "sms:"+l.SMS)
	}
	return append(out, l.Address...)
}

// Load reads dir/manifest.json.
func Load(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "manifest.json"), err)
	}
	return &m, nil
}
