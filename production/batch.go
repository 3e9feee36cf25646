package production

import (
	"bufio"
	"encoding/csv"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/internal/csvsafe"
	"github.com/lodge-mail/lodge/internal/durable"
	"github.com/lodge-mail/lodge/pipeline"
)

// The files of a batch folder.
const (
	BatchPDF      = "batch.pdf"      // every sheet of the batch, in print order
	ManifestJSON  = "manifest.json"  // a row per letter, with the batch's settings
	ManifestCSV   = "manifest.csv"   // the same rows for spreadsheets and inserters
	LodgementJSON = "lodgement.json" // the article counts a postal lodgement needs
)

// ManifestRow is one letter of a batch.
type ManifestRow struct {
	Letter     int     `json:"letter"` // its index in its mailing
	EPID       string  `json:"epid"`
	Reference  string  `json:"reference"`
	FirstSheet int     `json:"first_sheet"` // 1-based, in batch.pdf's order
	Sheets     int     `json:"sheets"`
	Pages      int     `json:"pages"` // printed pages, cover sheet included, blank backs not
	Envelope   string  `json:"envelope"`
	Postage    string  `json:"postage"`
	Postcode   string  `json:"postcode"`
	Price      float64 `json:"price"` // dollars
}

// Manifest is manifest.json.
type Manifest struct {
	Batch    string        `json:"batch"`
	Account  string        `json:"account"`
	EPID     string        `json:"epid"`
	Created  time.Time     `json:"created"`
	Envelope string        `json:"envelope"`
	Postage  string        `json:"postage"`
	Colour   bool          `json:"colour"`
	Duplex   bool          `json:"duplex"`
	Stock    string        `json:"stock,omitempty"`
	Sheets   int           `json:"sheets"`
	Pages    int           `json:"pages"`
	Letters  []ManifestRow `json:"letters"`
}

// Article weights, in grams: an 80 gsm A4 sheet, and the envelopes.
const (
	sheetGrams = 5
	dlGrams    = 5
	c4Grams    = 15
)

// LodgementLine counts the articles of one postage class, size and
// weight band.
type LodgementLine struct {
	Postage  string `json:"postage"`  // regular or priority
	Size     string `json:"size"`     // small letter (DL) or large letter (C4)
	Weight   string `json:"weight"`   // Australia Post's weight band
	Articles int    `json:"articles"` // letters
	Grams    int    `json:"grams"`    // their estimated weight together
	Price    int64  `json:"price_cents"`
}

// Lodgement is lodgement.json: what the print room hands the postal
// service with the batch.
type Lodgement struct {
	Batch    string          `json:"batch"`
	Account  string          `json:"account"`
	Articles int             `json:"articles"`
	Lines    []LodgementLine `json:"lines"`
	// Postcodes counts articles per postcode, in sort order (the batch is
	// sorted by postcode).
	Postcodes []PostcodeCount `json:"postcodes"`
}

// PostcodeCount is the number of articles for one postcode.
type PostcodeCount struct {
	Postcode string `json:"postcode"`
	Articles int    `json:"articles"`
}

// weightBand names Australia Post's letter weight band of an article.
func weightBand(envelope string, grams int) string {
	if envelope != "C4" {
		return "up to 250 g"
	}
	switch {
	case grams <= 125:
		return "up to 125 g"
	case grams <= 250:
		return "125 to 250 g"
	default:
		return "250 to 500 g"
	}
}

func sizeName(envelope string) string {
	if envelope == "C4" {
		return "large letter"
	}
	return "small letter"
}

// manifest makes a batch's manifest and lodgement summary.
func manifest(m *pipeline.Mailing, b *pipeline.Batch, letters []pipeline.Letter) (Manifest, Lodgement) {
	man := Manifest{Batch: b.ID, Account: b.Account, EPID: b.EPID, Created: b.Created, Envelope: b.Envelope, Postage: b.Postage,
		Colour: b.Colour, Duplex: b.Duplex, Stock: b.Stock, Letters: make([]ManifestRow, 0, len(letters))}
	lod := Lodgement{Batch: b.ID, Account: b.Account}
	lines := map[[3]string]*LodgementLine{}
	var keys [][3]string
	sheet := 1
	for _, l := range letters {
		man.Letters = append(man.Letters, ManifestRow{Letter: l.Idx, EPID: l.EPID, Reference: l.Reference, FirstSheet: sheet,
			Sheets: l.Sheets, Pages: l.Pages, Envelope: l.Envelope, Postage: l.Postage, Postcode: l.Postcode, Price: pipeline.Dollars(l.Price)})
		sheet += l.Sheets
		man.Sheets += l.Sheets
		man.Pages += l.Pages
		grams := l.Sheets * sheetGrams
		if l.Envelope == "C4" {
			grams += c4Grams
		} else {
			grams += dlGrams
		}
		k := [3]string{l.Postage, sizeName(l.Envelope), weightBand(l.Envelope, grams)}
		line := lines[k]
		if line == nil {
			line = &LodgementLine{Postage: k[0], Size: k[1], Weight: k[2]}
			lines[k] = line
			keys = append(keys, k)
		}
		line.Articles++
		line.Grams += grams
		line.Price += l.Price
		lod.Articles++
		if n := len(lod.Postcodes); n > 0 && lod.Postcodes[n-1].Postcode == l.Postcode {
			lod.Postcodes[n-1].Articles++
		} else {
			lod.Postcodes = append(lod.Postcodes, PostcodeCount{l.Postcode, 1})
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		for x := range 3 {
			if keys[i][x] != keys[j][x] {
				return keys[i][x] < keys[j][x]
			}
		}
		return false
	})
	for _, k := range keys {
		lod.Lines = append(lod.Lines, *lines[k])
	}
	return man, lod
}

// handOver writes a batch folder and moves it into the hot folder whole:
// the files are written in a folder of the work folder, each synced, the
// folder synced, renamed into the hot folder and the hot folder synced. A
// batch already in the hot folder is left as it is (a rename is all or
// nothing, so it is complete). writePDF writes batch.pdf to the path it
// is given.
func (p *Producer) handOver(b *pipeline.Batch, man Manifest, lod Lodgement, writePDF func(path string) error) (string, error) {
	final := filepath.Join(p.cfg.HotFolder, b.ID)
	if _, err := os.Stat(final); err == nil {
		return final, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	tmp := filepath.Join(p.cfg.WorkDir, "batches", b.ID)
	if err := os.RemoveAll(tmp); err != nil { // what a crash left
		return "", err
	}
	if err := os.MkdirAll(tmp, 0o750); err != nil {
		return "", err
	}
	if err := writePDF(filepath.Join(tmp, BatchPDF)); err != nil {
		return "", err
	}
	if err := syncFile(filepath.Join(tmp, BatchPDF)); err != nil {
		return "", err
	}
	mj, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return "", err
	}
	lj, err := json.MarshalIndent(lod, "", "  ")
	if err != nil {
		return "", err
	}
	for name, data := range map[string][]byte{ManifestJSON: append(mj, '\n'), LodgementJSON: append(lj, '\n')} {
		if err := durable.WriteFile(filepath.Join(tmp, name), data, 0o640); err != nil {
			return "", err
		}
	}
	if err := writeCSV(filepath.Join(tmp, ManifestCSV), man); err != nil {
		return "", err
	}
	if err := durable.SyncDir(tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	if err := durable.SyncDir(p.cfg.HotFolder); err != nil {
		return "", err
	}
	return final, nil
}

func writeCSV(path string, man Manifest) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	w := csv.NewWriter(bw)
	w.Write([]string{"letter", "epid", "reference", "first_sheet", "sheets", "pages", "envelope", "postage", "postcode", "price"})
	for _, r := range man.Letters {
		w.Write([]string{strconv.Itoa(r.Letter), r.EPID, csvsafe.Cell(r.Reference), strconv.Itoa(r.FirstSheet), strconv.Itoa(r.Sheets),
			strconv.Itoa(r.Pages), r.Envelope, r.Postage, r.Postcode, strconv.FormatFloat(r.Price, 'f', 2, 64)})
	}
	w.Flush()
	if err := errors.Join(w.Error(), bw.Flush()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
