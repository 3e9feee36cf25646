package engine_test

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testref"
)

// TestGoldenAddressrSample: every real G-NAF address of the sample is
// matched, in its single-line form split on commas as clients send it.
func TestGoldenAddressrSample(t *testing.T) {
	e := newEngine(t, false)
	dir, err := testref.DataDir()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "addressr-sample", "sample.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sample []struct {
		SLA string `json:"sla"`
	}
	if err := json.Unmarshal(b, &sample); err != nil {
		t.Fatal(err)
	}
	if len(sample) < 150 {
		t.Fatalf("sample has %d addresses, want 150", len(sample))
	}
	for _, a := range sample {
		lines := append([]string{"THE OCCUPIER"}, strings.Split(a.SLA, ",")...)
		r := e.Check(lines, true)
		if r.Status != engine.StatusMatched {
			t.Errorf("%q: %s %q %+v", a.SLA, r.Status, r.Message, r.Detail)
		}
	}
}

// TestGoldenEveryLocality: every locality of the G-NAF list, written the
// usual way under a recipient and a street line, is matched.
func TestGoldenEveryLocality(t *testing.T) {
	e := newEngine(t, false)
	dir, err := testref.DataDir()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "gnaf-localities", "localities-au.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, row := range rows[1:] {
		lines := []string{"Jo Citizen", "12 Example St", row[0] + " " + row[1] + " " + row[2]}
		if r := e.Check(lines, false); r.Status != engine.StatusMatched {
			failed++
			if failed <= 20 {
				t.Errorf("%q: %s %q %+v", lines, r.Status, r.Message, e.Check(lines, true).Detail)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d localities not matched", failed, len(rows)-1)
	}
}
