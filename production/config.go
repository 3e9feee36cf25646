package production

import (
	"path/filepath"
	"time"

	"github.com/lodge-mail/lodge/billing"
	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/internal/sandbox"
)

// Rect is an area of an A4 page in millimetres from its top-left corner.
type Rect struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	W float64 `json:"w"`
	H float64 `json:"h"`
}

// Union returns the smallest area holding r and o.
func (r Rect) Union(o Rect) Rect {
	x, y := min(r.X, o.X), min(r.Y, o.Y)
	return Rect{x, y, max(r.X+r.W, o.X+o.W) - x, max(r.Y+r.H, o.Y+o.H) - y}
}

// Grow returns r widened by d on every side.
func (r Rect) Grow(d float64) Rect { return Rect{r.X - d, r.Y - d, r.W + 2*d, r.H + 2*d} }

// Envelope is an envelope stock: where its address window falls on the
// first page of a letter inserted in it.
type Envelope struct {
	Name   string `json:"name"`
	Window Rect   `json:"window"`
}

// The default envelopes: Australian window envelopes. A DL takes an A4
// sheet C-folded in three; its window (95 x 38 mm, Australia Post's
// minimum for envelopes up to C5) shows the top third of the page at 20
// mm from the left and 50 mm from the top. A C4 takes the sheet flat; its
// window is 95 x 45 mm (the minimum above C5) at the same place.
var (
	DefaultDL = Envelope{Name: "DL", Window: Rect{X: 20, Y: 50, W: 95, H: 38}}
	DefaultC4 = Envelope{Name: "C4", Window: Rect{X: 20, Y: 50, W: 95, H: 45}}
)

// Config tunes production. The zero value means the documented defaults
// (folders under DataDir).
type Config struct {
	// DataDir holds the print folders and the price tables.
	DataDir string
	// HotFolder is where finished batches appear, each a folder made
	// whole by one rename (default <DataDir>/print/outbox).
	HotFolder string
	// WorkDir holds converted documents and batches being written
	// (default <DataDir>/print/work); on the same file system as
	// HotFolder.
	WorkDir string
	// DL and C4 are the envelope stocks (default DefaultDL, DefaultC4).
	DL, C4 Envelope
	// MaxDLSheets is the most sheets a DL envelope takes (default 5);
	// letters with more, or force_c4, go in a C4.
	MaxDLSheets int
	// WindowTolerance widens the window when reading the address in it
	// (default 3 mm: the sheet moves in the envelope).
	WindowTolerance float64
	// Tools bounds the converters and the text reader per run (default:
	// 1 GiB of memory; the timeout grows with the pages: ToolTimeout plus
	// 20 ms a page).
	Tools       sandbox.Limits
	ToolTimeout time.Duration // default 30 s
	// Prices prices letters (default the tables in DataDir).
	Prices *billing.Prices
	// Blobs is the object store several nodes share (nil: none, one
	// node, everything on this node's disk as before). With it, the
	// mailings' documents are read by their key (pipeline.File.Blob,
	// through DocumentPath), each batch's files are put into it before
	// Compose returns (print/<batch>/...) and read from it (Batches), and
	// the letters' PDFs for email and links live in it
	// (letters/<epid>/<idx>.pdf), so that any node serves them.
	Blobs blob.Store
	// PresignExpiry is how long a presigned URL of a batch's file lasts
	// (Batches.URL; at most blob.MaxDownloadExpiry for S3); 0, the
	// default: none, the bytes are served by lodge (a store's endpoint
	// need not be reachable from the operators' browsers).
	PresignExpiry time.Duration
}

func (c Config) withDefaults() Config {
	if c.HotFolder == "" {
		c.HotFolder = filepath.Join(c.DataDir, "print", "outbox")
	}
	if c.WorkDir == "" {
		c.WorkDir = filepath.Join(c.DataDir, "print", "work")
	}
	if c.DL.Name == "" {
		c.DL = DefaultDL
	}
	if c.C4.Name == "" {
		c.C4 = DefaultC4
	}
	if c.MaxDLSheets <= 0 {
		c.MaxDLSheets = 5
	}
	if c.WindowTolerance <= 0 {
		c.WindowTolerance = 3
	}
	if c.ToolTimeout <= 0 {
		c.ToolTimeout = 30 * time.Second
	}
	if c.Prices == nil {
		c.Prices = &billing.Prices{Dir: c.DataDir}
	}
	return c
}

func (c *Config) envelope(name string) Envelope {
	if name == c.C4.Name {
		return c.C4
	}
	return c.DL
}

// toolLimits are the bounds of one run of a converter over pages pages.
func (c *Config) toolLimits(pages int) sandbox.Limits {
	l := c.Tools
	l.Timeout = c.ToolTimeout + time.Duration(pages)*20*time.Millisecond
	return l
}

// A4 in points, and points per millimetre.
const (
	mm     = 72 / 25.4
	a4W    = 210 * mm
	a4H    = 297 * mm
	a4Tol  = 3 * mm // a page within this of A4 is A4
	fontSz = 10.0   // the address set in the window
)
