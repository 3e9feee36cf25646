package index

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/lodge-mail/lodge/internal/durable"
)

// Street source kinds.
const (
	StreetsGNAF          = "gnaf"          // a G-NAF release: ZIP or unzipped folder
	StreetsOpenAddresses = "openaddresses" // LON,LAT,NUMBER,STREET,UNIT,CITY,DISTRICT,REGION,POSTCODE,ID,HASH
	StreetsCSV           = "csv"           // a CSV of address points with named columns
)

// StreetSource is one street-level source of an index.
type StreetSource struct {
	Kind string `json:"kind"`
	Path string `json:"path"` // absolute
	// State is the state of rows that name none (an address list of one
	// city, such as Brisbane's).
	State string `json:"state,omitempty"`
	// Columns maps lodge's fields (number, street, street_type, unit,
	// locality, state, postcode, lat, lon, id) to the CSV's header names;
	// fields left out are found by their usual names.
	Columns map[string]string `json:"columns,omitempty"`
	// Complete says the list holds every street and address of the places
	// it covers, so a street or number it lacks there is unmatched. G-NAF
	// is always complete.
	Complete bool `json:"complete,omitempty"`
	// Licence and Attribution are shown by serve (an address list's own).
	Licence     string `json:"licence,omitempty"`
	Attribution string `json:"attribution,omitempty"`
}

func (ss StreetSource) name() string { return "streets-" + ss.Kind + ":" + ss.Path }

// identity stands for the source's content in the source hash: path,
// size and modification time of the file or of every file of a folder,
// and the options.
func (ss StreetSource) identity() (string, error) {
	var b strings.Builder
	err := filepath.WalkDir(ss.Path, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d;", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("street source %s: %w", ss.Path, err)
	}
	opts, _ := json.Marshal(ss)
	b.Write(opts)
	return b.String(), nil
}

// streetSourcesFile is where a data directory remembers its street sources.
const streetSourcesFile = "street-sources.json"

// LoadStreetSources returns the street sources remembered in dataDir.
func LoadStreetSources(dataDir string) ([]StreetSource, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, streetSourcesFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []StreetSource
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dataDir, streetSourcesFile), err)
	}
	return out, nil
}

// SaveStreetSources remembers srcs in dataDir (written aside, synced and
// renamed into place).
func SaveStreetSources(dataDir string, srcs []StreetSource) error {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(srcs, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(filepath.Join(dataDir, streetSourcesFile), append(b, '\n'), 0o644)
}

// AddStreetSource returns srcs with ss added: a G-NAF release replaces an
// earlier one, a list replaces the same path's.
func AddStreetSource(srcs []StreetSource, ss StreetSource) []StreetSource {
	var out []StreetSource
	for _, s := range srcs {
		if (s.Kind == StreetsGNAF && ss.Kind == StreetsGNAF) || s.Path == ss.Path {
			continue
		}
		out = append(out, s)
	}
	out = append(out, ss)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kind == StreetsGNAF && out[j].Kind != StreetsGNAF })
	return out
}
