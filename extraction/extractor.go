package extraction

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/internal/pagetext"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/production"
)

// Config tunes the auto processor. The zero value means the documented
// defaults.
type Config struct {
	// Zone is where a page's address is read, in millimetres from the
	// top-left corner of the page as displayed (default: the union of
	// production's DL and C4 windows widened by Tolerance on every
	// side: x 17 to 118 mm, y 47 to 98 mm).
	Zone production.Rect
	// Tolerance widens the default zone (default 3 mm: the sheet moves
	// in the envelope, and producers place text a little differently).
	Tolerance float64
	// Timeout bounds the reading of one document: Timeout plus 10 ms a
	// page (default 30 s).
	Timeout time.Duration
	// Memory bounds the reader child's address space beyond what it has
	// at start (default 512 MiB).
	Memory int64
	// PDF returns a PDF of a document that is not one (PostScript), as
	// production converts it for printing (production.Producer.PDF); nil
	// holds such documents' letters.
	PDF func(ctx context.Context, m *pipeline.Mailing, f pipeline.File) (string, error)
	// DocumentError tells a PDF error that is the document's fault (its
	// letters are held) from one of the server's (the stage is retried).
	DocumentError func(error) bool
	// Blobs is the object store several nodes share (production's
	// Config.Blobs): a document with a key there (pipeline.File.Blob) is
	// read from this node's copy of it (production.DocumentPath). Nil:
	// documents are read at File.Path, as on one node.
	Blobs   blob.Store
	Metrics *metrics.Set
}

func (c Config) withDefaults() Config {
	if c.Tolerance <= 0 {
		c.Tolerance = 3
	}
	if c.Zone.W <= 0 || c.Zone.H <= 0 {
		c.Zone = production.DefaultDL.Window.Union(production.DefaultC4.Window).Grow(c.Tolerance)
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.Memory <= 0 {
		c.Memory = 512 << 20
	}
	if c.DocumentError == nil {
		c.DocumentError = func(error) bool { return false }
	}
	return c
}

// Extractor is the auto processor: it implements pipeline.Extractor.
type Extractor struct {
	cfg                 Config
	log                 *slog.Logger
	pages, docs, failed *metrics.Counter
	seconds             *metrics.FloatCounter
	peakRSS             atomic.Int64
}

// PeakRSS returns the largest peak resident memory of a reader child so
// far, in bytes (also the metric lodge_extract_reader_peak_rss_bytes).
func (x *Extractor) PeakRSS() int64 { return x.peakRSS.Load() }

func (x *Extractor) noteRSS(rss int64) {
	for {
		old := x.peakRSS.Load()
		if rss <= old || x.peakRSS.CompareAndSwap(old, rss) {
			return
		}
	}
}

// New returns an auto processor.
func New(cfg Config, log *slog.Logger) *Extractor {
	if log == nil {
		log = slog.Default()
	}
	cfg = cfg.withDefaults()
	set := cfg.Metrics
	if set == nil {
		set = metrics.NewSet()
	}
	x := &Extractor{
		cfg: cfg, log: log,
		pages:   set.GetOrCreateCounter(`lodge_extract_pages_total`),
		docs:    set.GetOrCreateCounter(`lodge_extract_documents_total`),
		failed:  set.GetOrCreateCounter(`lodge_extract_documents_unreadable_total`),
		seconds: set.GetOrCreateFloatCounter(`lodge_extract_seconds_total`),
	}
	set.GetOrCreateGauge(`lodge_extract_reader_peak_rss_bytes`, func() float64 { return float64(x.peakRSS.Load()) })
	return x
}

const pt = 72 / 25.4 // points per millimetre

// Extract reads the letters out of every letter document of an auto
// mailing (its documents other than attachments and the background), in
// the order they were uploaded.
func (x *Extractor) Extract(ctx context.Context, m *pipeline.Mailing) ([]pipeline.Letter, error) {
	var settings struct {
		Attachments []string `json:"attachments"`
	}
	if len(m.Settings) > 0 {
		json.Unmarshal(m.Settings, &settings)
	}
	var attach []pipeline.DocPart
	for _, name := range settings.Attachments {
		attach = append(attach, pipeline.DocPart{File: name, PageStart: 0, PageEnd: -1, Attachment: true})
	}
	rule := Rule{PagesPerLetter: m.Production.SplitPages, Marker: m.Production.SplitMarker}
	var out []pipeline.Letter
	for _, f := range m.Files {
		if slices.Contains(settings.Attachments, f.Name) || f.Name == m.Production.Background {
			continue
		}
		found, err := x.document(ctx, m, f, rule)
		if err != nil {
			return nil, err
		}
		for _, fd := range found {
			out = append(out, letterOf(f.Name, fd, attach))
		}
	}
	return out, nil
}

// document reads one document's letters; a document that cannot be read
// at all is one letter, held with the reason.
func (x *Extractor) document(ctx context.Context, m *pipeline.Mailing, f pipeline.File, rule Rule) ([]Found, error) {
	whole := func(msg string) []Found {
		x.failed.Inc()
		return []Found{{First: 0, Last: max(f.Pages-1, 0), Hold: fmt.Sprintf("%s could not be read for letters: %s", f.Name, msg)}}
	}
	kind, path := f.Kind, ""
	switch kind {
	case "pdf", "xps":
		p, err := production.DocumentPath(ctx, x.cfg.Blobs, f)
		if err != nil {
			if production.DocumentError(err) {
				return whole(err.Error()), nil
			}
			return nil, err
		}
		path = p
	case "ps":
		if x.cfg.PDF == nil {
			return whole("PostScript is read through its PDF conversion, which this server does not make"), nil
		}
		p, err := x.cfg.PDF(ctx, m, f)
		if err != nil {
			if x.cfg.DocumentError(err) {
				return whole(err.Error()), nil
			}
			return nil, err
		}
		kind, path = "pdf", p
	default:
		return nil, nil // not a document letters are read from
	}
	z := x.cfg.Zone
	req := request{
		Zone:    pagetext.Rect{X0: z.X * pt, Y0: z.Y * pt, X1: (z.X + z.W) * pt, Y1: (z.Y + z.H) * pt},
		Marker:  rule.Marker,
		Timeout: x.cfg.Timeout + time.Duration(f.Pages)*10*time.Millisecond,
		Memory:  x.cfg.Memory,
	}
	start := time.Now()
	pages, rss, err := readPages(ctx, kind, path, req, f.Pages)
	x.seconds.Add(time.Since(start).Seconds())
	x.noteRSS(rss)
	x.docs.Inc()
	var de *docError
	switch {
	case errors.As(err, &de):
		return whole(de.msg), nil
	case err != nil:
		return nil, err
	}
	x.pages.Add(len(pages))
	found := split(f.Name, pages, rule)
	x.log.Info("letters read", "epid", m.EPID, "document", f.Name, "pages", len(pages), "letters", len(found),
		"took", time.Since(start).Round(time.Millisecond), "reader_rss_mb", rss>>20)
	return found, nil
}

// letterOf makes a pipeline letter of a found one.
func letterOf(doc string, fd Found, attach []pipeline.DocPart) pipeline.Letter {
	w := fd.Window
	l := pipeline.Letter{
		Reference: w.Reference,
		Postal:    w.Postal,
		Email:     w.Email, SMS: w.SMS, Fax: w.Fax,
		Documents: append([]pipeline.DocPart{{File: doc, PageStart: fd.First, PageEnd: fd.Last}}, attach...),
	}
	// The primary channel, as spec 2.4 chooses it when a letter names
	// none: sms, fax, email, postal.
	for _, c := range []struct {
		name string
		set  bool
	}{{"sms", w.SMS != ""}, {"fax", w.Fax != ""}, {"email", w.Email != ""}, {"postal", len(w.Postal) > 0}} {
		if c.set {
			l.Channels = append(l.Channels, c.name)
		}
	}
	for _, r := range w.Masks {
		l.Masks = append(l.Masks, pipeline.Area{X: r.X0 / pt, Y: r.Y0 / pt, W: (r.X1 - r.X0) / pt, H: (r.Y1 - r.Y0) / pt})
	}
	if fd.Hold != "" {
		if len(l.Channels) == 0 {
			l.Channels = []string{"postal"} // correct_letter gives it its address
		}
		l.HoldFor(time.Time{}, pipeline.HoldAddress, fd.Hold+" (correct_letter gives the letter its address; or cancel it)")
	}
	return l
}
