package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testref"
)

// TestStreetLevel imports the hand-written G-NAF release with the real
// binary, serves it, and asks addr_check over HTTPS with curl: premise
// matches, near misses with their faults and suggestions, and the
// attribution printed at start.
func TestStreetLevel(t *testing.T) {
	root, err := testref.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	out, err := lodge(t, "", "import", "gnaf", "-quiet", "-data-dir", dataDir, filepath.Join(root, "testdata", "gnaf"))
	if err != nil || !strings.Contains(out, "street level:") {
		t.Fatalf("import gnaf: %v\n%s", err, out)
	}
	// a plain import keeps the remembered release
	if out, err := lodge(t, "", "import", "-force", "-quiet", "-data-dir", dataDir); err != nil || !strings.Contains(out, "street level:") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	in := startWithDir(t, dataDir)
	if logs := in.logs(); !strings.Contains(logs, "street level:") || !strings.Contains(logs, "Geoscape") {
		t.Errorf("serve does not show the street level and its attribution:\n%s", logs)
	}
	f := func(addr, status, granularity, fault, suggestion string) {
		t.Helper()
		code, body := in.rpc(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":` + addr + `,"detail":true}}`)
		var res struct {
			Result struct {
				Status string
				Detail struct {
					Granularity string
					Faults      []string
					Suggestion  []string
				}
			}
		}
		if err := json.Unmarshal([]byte(body), &res); err != nil || code != 200 {
			t.Fatalf("%s: %d %s", addr, code, body)
		}
		r := res.Result
		if r.Status != status || r.Detail.Granularity != granularity || strings.Join(r.Detail.Faults, ",") != fault ||
			strings.Join(r.Detail.Suggestion, " / ") != suggestion {
			t.Errorf("%s: %s", addr, body)
		}
	}
	f(`["Jo Citizen","Unit 3","72 Charles St","St Kilda VIC 3182"]`, "matched", "premise", "", "")
	f(`"Jo Citizen, 18-20 Courallie Avenue, Homebush West NSW 2140"`, "matched", "premise", "", "")
	f(`["Jo","9/72 Charles St","St Kilda VIC 3182"]`, "unmatched", "street", "UNIT_NOT_FOUND", "JO / 72 CHARLES ST / ST KILDA VIC 3182")
	f(`["Jo","455 Captian Cook Dr","Woolooware NSW 2230"]`, "unmatched", "", "STREET_NOT_FOUND", "JO / 455 CAPTAIN COOK DR / WOOLOOWARE NSW 2230")
	f(`["Jo","431 St Kilda Rd","Melbourne VIC 3000"]`, "unmatched", "premise", "ADDRESS_POSTCODE_MISMATCH", "JO / 431 ST KILDA RD / MELBOURNE VIC 3004")
}
