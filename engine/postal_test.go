package engine_test

import (
	"slices"
	"testing"

	"github.com/lodge-mail/lodge/engine"
)

// TestPostalService: a postal delivery address is matched where the
// locality offers the service; GPO boxes are at the capitals' General Post
// Offices only.
func TestPostalService(t *testing.T) {
	e := newEngine(t, false)
	f, _ := verdictCase(t, e)
	m, u := "matched", "unmatched"
	f(m, "AUS", "", "Jo Citizen", "GPO Box 12", "Sydney NSW 2001")
	f(m, "AUS", "", "Jo Citizen", "GPO Box 12", "Melbourne VIC 3001")
	f(u, "AUS", "", "Jo Citizen", "GPO Box 12", "St Kilda VIC 3182")
	f(u, "AUS", "", "Jo Citizen", "G.P.O. Box 12", "Parramatta NSW 2150")
	f(m, "AUS", "", "Jo Citizen", "PO Box 12", "St Kilda VIC 3182")
	r := e.Check([]string{"Jo Citizen", "GPO Box 12", "St Kilda VIC 3182"}, true)
	if !slices.Contains(r.Detail.Faults, engine.FaultPostalService) || r.Detail.PostalType != "GPO BOX" {
		t.Errorf("GPO box at St Kilda: %+v", r.Detail)
	}
}
