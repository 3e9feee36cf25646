package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/data"
	"github.com/lodge-mail/lodge/engine"
)

// The tables of this file hold the classes of addresses that issue 13
// found judged against ../shared/docs/address-check.md: each class is one
// test, one line per case. The localities, states and postcodes are real
// triples of ../shared/data (G-NAF's locality list or GeoNames AU.txt);
// the street and premise tables at the end are built here, in the form
// bench/gnafgen writes them.

// suggestCase returns f(status, last, lines...): the verdict is status
// (through verdictCase's checks: detail, one string and lines agree) and,
// when last is not "", the suggestion's last line is last. An unmatched
// address never has a message.
func suggestCase(t *testing.T, e *engine.Engine) func(status, last string, lines ...string) {
	vf, _ := verdictCase(t, e)
	return func(status, last string, lines ...string) {
		t.Helper()
		vf(status, "AUS", "", lines...)
		if last == "" {
			return
		}
		d := e.Check(lines, true).Detail
		if d == nil || len(d.Suggestion) == 0 || d.Suggestion[len(d.Suggestion)-1] != last {
			t.Errorf("%q: suggestion %q, want one ending %q (detail %+v)", lines, d.Suggestion, last, d)
		}
	}
}

// TestClassStreetAndLocalityOnOneLine (class 1): the street and the
// locality on one line, the street not starting with a bare number: a unit
// word, a building before the unit and number, or no number at all.
// Correct ones are matched; a misspelt locality or one that does not fit
// the postcode is unmatched with the corrected address, never invalid for
// lack of a street line.
func TestClassStreetAndLocalityOnOneLine(t *testing.T) {
	e := newEngine(t, false)
	f := suggestCase(t, e)
	m, u := "matched", "unmatched"

	// correct: unit, flat, suite, shop, apartment and level words first
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Unit 2 10 Jones St Melbourne VIC 3000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Unit 2, 10 Jones St Melbourne VIC 3000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "U2 10 Jones St Melbourne VIC 3000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Flat 3 22 Smith St Fitzroy VIC 3065")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Suite 5 100 George St Sydney NSW 2000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Suite 5 Level 3 100 George St Sydney NSW 2000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Shop 4 1 High St Penrith NSW 2750")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Apt 7 12 Beach Rd Bondi NSW 2026")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Apartment 1203 Level 12 431 St Kilda Rd Melbourne VIC 3004")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Level 4 99 Macquarie St Hobart TAS 7000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Ground Floor 1 King William St Adelaide SA 5000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Villa 3 5 Ocean Pde Glenelg SA 5045")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Townhouse 9 14 Market St Fremantle WA 6160")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Unit 1-19 25 Smith St Fitzroy VIC 3065")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Lot 16 Aerodrome Rd Applethorpe QLD 4378")
	// a building or complex before the unit and number
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Riverside Tower 10 Jones St Melbourne VIC 3000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Riverside Tower Unit 5 10 Jones St Melbourne VIC 3000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Chatswood Chase Shop 12 345 Victoria Ave Chatswood NSW 2067")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Sunset Villas Villa 2 8 Esplanade Manly NSW 2095")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Box Hill Central Shop 3 1 Main St Box Hill VIC 3128")
	// no number at all
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Jones St Melbourne VIC 3000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Furzer St Phillip ACT 2606")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Lonsdale St Braddon ACT 2612")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Miller St North Sydney NSW 2060")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Brunswick St Fortitude Valley QLD 4006")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Cavill Ave Surfers Paradise QLD 4217")
	// misspelt locality: unmatched, the corrected address suggested
	f(u, "MELBOURNE VIC 3000", "Jo Citizen", "Acme Pty Ltd", "Unit 2 10 Jones St Melborne VIC 3000")
	f(u, "FITZROY VIC 3065", "Jo Citizen", "Acme Pty Ltd", "Flat 3 22 Smith St Fitzroi VIC 3065")
	f(u, "SYDNEY NSW 2000", "Jo Citizen", "Acme Pty Ltd", "Suite 5 100 George St Sydnee NSW 2000")
	f(u, "PENRITH NSW 2750", "Jo Citizen", "Acme Pty Ltd", "Shop 4 1 High St Penrth NSW 2750")
	f(u, "BONDI NSW 2026", "Jo Citizen", "Acme Pty Ltd", "Apt 7 12 Beach Rd Bondii NSW 2026")
	f(u, "HOBART TAS 7000", "Jo Citizen", "Acme Pty Ltd", "Level 4 99 Macquarie St Hobbart TAS 7000")
	f(u, "ADELAIDE SA 5000", "Jo Citizen", "Acme Pty Ltd", "Ground Floor 1 King William St Adelaid SA 5000")
	f(u, "MELBOURNE VIC 3000", "Jo Citizen", "Acme Pty Ltd", "Riverside Tower Unit 5 10 Jones St Melborne VIC 3000")
	f(u, "MELBOURNE VIC 3000", "Jo Citizen", "Acme Pty Ltd", "Jones St Melborne VIC 3000")
	f(u, "PHILLIP ACT 2606", "Jo Citizen", "Acme Pty Ltd", "Furzer St Philip ACT 2606")
	f(u, "CHATSWOOD NSW 2067", "Jo Citizen", "Acme Pty Ltd", "Chatswood Chase Shop 12 345 Victoria Ave Chatswod NSW 2067")
	f(u, "GLENELG SA 5045", "Jo Citizen", "Acme Pty Ltd", "Villa 3 5 Ocean Pde Glenleg SA 5045")
	// a locality that does not fit the postcode: unmatched, with its own
	f(u, "FITZROY VIC 3065", "Jo Citizen", "Acme Pty Ltd", "Flat 3 22 Smith St Fitzroy VIC 3000")
	f(u, "PENRITH NSW 2750", "Jo Citizen", "Acme Pty Ltd", "Shop 4 1 High St Penrith NSW 2000")
	f(u, "BONDI NSW 2026", "Jo Citizen", "Acme Pty Ltd", "Apt 7 12 Beach Rd Bondi NSW 2000")
	f(u, "GEELONG VIC 3220", "Jo Citizen", "Acme Pty Ltd", "Unit 2 10 Moorabool St Geelong VIC 3000")
	f(u, "PHILLIP ACT 2606", "Jo Citizen", "Acme Pty Ltd", "Furzer St Phillip ACT 2600")
	f(u, "ST KILDA VIC 3182", "Jo Citizen", "Acme Pty Ltd", "Riverside Tower Unit 5 10 Fitzroy St St Kilda VIC 3000")
	f(u, "CAMMERAY NSW 2062", "Jo Citizen", "Acme Pty Ltd", "Miller St Cammeray NSW 2000")

	// the second pass's probes: Brisbane's streets, other states, the unit,
	// level and building words before the number, misspelt or at another
	// postcode
	f(m, "", "Jo", "Acme", "Unit 4 22 Zig Zag St Red Hill QLD 4059")
	f(m, "", "Jo", "Acme", "U 4 22 Zig Zag Street Red Hill QLD 4059")
	f(m, "", "Jo", "Acme", "Unit 4/22 Zig Zag St Red Hill QLD 4059")
	f(m, "", "Jo", "Acme", "Flat 2 5 Little Jane St West End QLD 4101")
	f(m, "", "Jo", "Acme", "Suite 301 10 Skyring Tce Newstead QLD 4006")
	f(m, "", "Jo", "Acme", "Suite 301, Level 3, 10 Skyring Terrace Newstead QLD 4006")
	f(m, "", "Jo", "Acme", "Shop 2 100 Water St Spring Hill QLD 4000")
	f(m, "", "Jo", "Acme", "Level 2 14 Clifton St Petrie Terrace QLD 4000")
	f(m, "", "Jo", "Acme", "Unit 7 14 Clifton Street Petrie Terrace QLD 4000")
	f(m, "", "Jo", "Acme", "Shop 5 400 Newmarket Rd Newmarket QLD 4051")
	f(m, "", "Jo", "Acme", "Lvl 12 300 Adelaide St Brisbane City QLD 4000")
	f(m, "", "Jo", "Acme", "L12 300 Adelaide St Brisbane City QLD 4000")
	f(m, "", "Jo", "Acme", "Level 12, 300 Adelaide Street, Brisbane City QLD 4000")
	f(m, "", "Jo", "Acme", "Apartment 5 12 Blackall Tce East Brisbane QLD 4169")
	f(m, "", "Jo", "Acme", "Apt 5 12 Norfolk Rd South Brisbane QLD 4101")
	f(m, "", "Jo", "Acme", "Unit 3 9 Jones St Auchenflower QLD 4066")
	f(m, "", "Jo", "Acme", "Office 4 20 School St Fortitude Valley QLD 4006")
	f(m, "", "Jo", "Acme", "Room 12 20 David St Tennyson QLD 4105")
	f(m, "", "Jo", "Acme", "Duplex 2 3 Castle St Fairfield QLD 4103")
	f(m, "", "Jo", "Acme", "Warehouse 3 100 Lytton Rd Morningside QLD 4170")
	f(m, "", "Jo", "Acme", "Factory 7 40 Aeroplane St Cannon Hill QLD 4170")
	f(m, "", "Jo", "Acme", "Unit 2 10 Kitchener St Sherwood QLD 4075")
	f(m, "", "Jo", "Acme", "Kiosk 1 2 Glen St South Brisbane QLD 4101")
	f(m, "", "Jo", "Acme", "Unit 10 15 Lisburn St East Brisbane QLD 4169")
	f(m, "", "Jo", "Acme", "Shop 1 Lower Ground 15 Albert St Brisbane City QLD 4000")
	f(m, "", "Jo", "Acme", "Penthouse 1 15 Albert St Brisbane City QLD 4000")
	f(m, "", "Jo", "Acme", "Unit 2 10 The Drive Bardon QLD 4065")
	f(m, "", "Jo", "Acme", "Unit 5 12 Smith St Collingwood VIC 3066")
	f(m, "", "Jo", "Acme", "Flat 1 100 Chapel St South Yarra VIC 3141")
	f(m, "", "Jo", "Acme", "Suite 2 50 Bridge Rd Richmond VIC 3121")
	f(m, "", "Jo", "Acme", "Shop 3 88 Oxford St Paddington NSW 2021")
	f(m, "", "Jo", "Acme", "Unit 12 4 Pacific Hwy St Leonards NSW 2065")
	f(m, "", "Jo", "Acme", "Level 5 123 Pitt St Sydney NSW 2000")
	f(m, "", "Jo", "Acme", "Suite 1.02 123 Pitt St Sydney NSW 2000")
	f(m, "", "Jo", "Acme", "Unit 1A 5 Beach St Coogee NSW 2034")
	f(m, "", "Jo", "Acme", "Unit 3 11 Marine Pde Southport QLD 4215")
	f(m, "", "Jo", "Acme", "Shop 6 1 Hay St Perth WA 6000")
	f(m, "", "Jo", "Acme", "Unit 2 7 Stirling Hwy Nedlands WA 6009")
	f(m, "", "Jo", "Acme", "Flat 4 19 Davey St Hobart TAS 7000")
	f(m, "", "Jo", "Acme", "Unit 3 8 Smith St Darwin City NT 0800")
	f(m, "", "Jo", "Acme", "Unit 6 2 Northbourne Ave Braddon ACT 2612")
	f(m, "", "Jo", "Acme", "Unit 1 15 Rundle St Kent Town SA 5067")
	f(m, "", "Jo", "Acme", "Unit 14 2 Main St Mount Barker SA 5251")
	f(m, "", "Jo", "Acme", "Unit 14 2 Main St Mt Barker SA 5251")
	f(m, "", "Jo", "Acme", "Shop 2 1 Main St St Marys NSW 2760")
	f(m, "", "Jo", "Acme", "Unit 4 6 High St Saint Kilda VIC 3182")
	f(m, "", "Jo", "Acme", "Kings Row Unit 3 22 Zig Zag St Red Hill QLD 4059")
	f(m, "", "Jo", "Acme", "The Oaks Apartments Unit 9 12 Blackall Tce East Brisbane QLD 4169")
	f(m, "", "Jo", "Acme", "Riverside Centre Level 10 123 Eagle St Brisbane City QLD 4000")
	f(m, "", "Jo", "Acme", "Westfield Chermside Shop 200 395 Hamilton Rd Chermside QLD 4032")
	f(m, "", "Jo", "Acme", "Tower 2 Level 5 101 Grafton St Bondi Junction NSW 2022")
	f(m, "", "Jo", "Acme", "Block B Unit 3 10 Smith St Fitzroy VIC 3065")
	f(m, "", "Jo", "Acme", "Harbour View Apartments 5 12 Beach Rd Bondi NSW 2026")
	f(m, "", "Jo", "Acme", "Bondi Junction Plaza Shop 4 500 Oxford St Bondi Junction NSW 2022")
	f(m, "", "Jo", "Acme", "Zig Zag St Red Hill QLD 4059")
	f(m, "", "Jo", "Acme", "Skyring Terrace Newstead QLD 4006")
	f(m, "", "Jo", "Acme", "Clifton St Petrie Terrace QLD 4000")
	f(m, "", "Jo", "Acme", "Newmarket Rd Newmarket QLD 4051")
	f(m, "", "Jo", "Acme", "The Drive Bardon QLD 4065")
	f(m, "", "Jo", "Acme", "Chapel St South Yarra VIC 3141")
	f(m, "", "Jo", "Acme", "Stirling Hwy Nedlands WA 6009")
	f(u, "RED HILL QLD 4059", "Jo", "Acme", "Unit 4 22 Zig Zag St Red Hil QLD 4059")
	f(u, "WEST END QLD 4101", "Jo", "Acme", "Flat 2 5 Little Jane St Westend QLD 4101")
	f(u, "NEWSTEAD QLD 4006", "Jo", "Acme", "Suite 301 10 Skyring Tce Newsted QLD 4006")
	f(u, "PETRIE TERRACE QLD 4000", "Jo", "Acme", "Unit 7 14 Clifton Street Petrie Terace QLD 4000")
	f(u, "BRISBANE CITY QLD 4000", "Jo", "Acme", "Level 12 300 Adelaide St Brisbane Cty QLD 4000")
	f(u, "COLLINGWOOD VIC 3066", "Jo", "Acme", "Unit 5 12 Smith St Colingwood VIC 3066")
	f(u, "ST LEONARDS NSW 2065", "Jo", "Acme", "Unit 12 4 Pacific Hwy St Leonard NSW 2065")
	f(u, "PADDINGTON NSW 2021", "Jo", "Acme", "Shop 3 88 Oxford St Paddinton NSW 2021")
	f(u, "HOBART TAS 7000", "Jo", "Acme", "Flat 4 19 Davey St Hobart TAS 7050")
	f(u, "NEDLANDS WA 6009", "Jo", "Acme", "Unit 2 7 Stirling Hwy Nedlands WA 6000")
	f(u, "", "Jo", "Acme", "Unit 4 22 Zig Zag St Red Hill QLD 4000")
	f(u, "RED HILL QLD 4059", "Jo", "Acme", "Kings Row Unit 3 22 Zig Zag St Red Hil QLD 4059")
	f(u, "RED HILL QLD 4059", "Jo", "Acme", "Zig Zag St Redhill QLD 4059")
	f(u, "SOUTH YARRA VIC 3141", "Jo", "Acme", "Chapel St South Yara VIC 3141")
	f(u, "BRADDON ACT 2612", "Jo", "Acme", "Unit 6 2 Northbourne Ave Bradon ACT 2612")
	f(u, "KENT TOWN SA 5067", "Jo", "Acme", "Unit 1 15 Rundle St Kent Twn SA 5067")
	// never "no street or postal delivery line" for these
	for _, lines := range [][]string{
		{"Jo", "Acme", "Unit 2 10 Jones St Melborne VIC 3000"},
		{"Jo", "Acme", "Flat 3 22 Smith St Fitzroi VIC 3065"},
		{"Jo", "Acme", "Jones St Melborne VIC 3000"},
		{"Jo", "Acme", "Riverside Tower Unit 5 10 Jones St Melborne VIC 3000"},
	} {
		if r := e.Check(lines, false); strings.Contains(r.Message, "no street") {
			t.Errorf("%q: %s %q", lines, r.Status, r.Message)
		}
	}
}

// TestClassLocalityEndsStreetLine (class 2): the locality at the end of
// the street's line, the state and postcode alone on the next line.
func TestClassLocalityEndsStreetLine(t *testing.T) {
	e := newEngine(t, false)
	f := suggestCase(t, e)
	m, u, inv := "matched", "unmatched", "invalid"

	f(m, "", "Jo Citizen", "10 Jones St Melbourne", "VIC 3000")
	f(m, "", "Jo Citizen", "10 Jones St Melbourne", "VIC", "3000")
	f(m, "", "Jo Citizen", "10 Jones St Melbourne", "3000 VIC")
	f(m, "", "Jo Citizen", "10 Jones St Melbourne", "Victoria 3000")
	f(m, "", "Jo Citizen", "Unit 2 10 Jones St Melbourne", "VIC 3000")
	f(m, "", "Jo Citizen", "3/72 Charles St St Kilda", "VIC 3182")
	f(m, "", "Jo Citizen", "Jones St Melbourne", "VIC 3000")
	f(m, "", "Jo Citizen", "1 Church St Parramatta", "NSW 2150")
	f(m, "", "Jo Citizen", "100 George St Sydney", "NSW 2000")
	f(m, "", "Jo Citizen", "100 Miller St North Sydney", "NSW 2060")
	f(m, "", "Jo Citizen", "1 Queen St Brisbane City", "QLD 4000")
	f(m, "", "Jo Citizen", "12 Cavill Ave Surfers Paradise", "QLD 4217")
	f(m, "", "Jo Citizen", "1 King William St Adelaide", "SA 5000")
	f(m, "", "Jo Citizen", "25 St Georges Tce Perth", "WA 6000")
	f(m, "", "Jo Citizen", "14 Market St Fremantle", "WA 6160")
	f(m, "", "Jo Citizen", "99 Macquarie St Hobart", "TAS 7000")
	f(m, "", "Jo Citizen", "10 Brisbane St Launceston", "TAS 7250")
	f(m, "", "Jo Citizen", "1 Mitchell St Darwin City", "NT 0800")
	f(m, "", "Jo Citizen", "10 Todd St Alice Springs", "NT 0870")
	f(m, "", "Jo Citizen", "10 Lonsdale St Braddon", "ACT 2612")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "PO Box 12 Melbourne", "VIC 3000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "10 Jones St Melbourne", "VIC 3000")
	f(m, "", "Jo Citizen", "10 Main St Box Hill", "VIC 3128")
	f(m, "", "Jo Citizen", "10 Smith St Lane Cove", "NSW 2066")
	f(m, "", "Jo Citizen", "10 Smith St Ultimo", "NSW 2007")
	// misspelt, or not at that postcode: unmatched with the suggestion
	f(u, "MELBOURNE VIC 3000", "Jo Citizen", "10 Jones St Melborne", "VIC 3000")
	f(u, "PARRAMATTA NSW 2150", "Jo Citizen", "1 Church St Paramatta", "NSW 2150")
	f(u, "FREMANTLE WA 6160", "Jo Citizen", "14 Market St Freemantle", "WA 6160")
	f(u, "LAUNCESTON TAS 7250", "Jo Citizen", "10 Brisbane St Launceston", "TAS 7000")
	f(u, "ALICE SPRINGS NT 0870", "Jo Citizen", "10 Todd St Alice Spring", "NT 0870")
	f(u, "BRADDON ACT 2612", "Jo Citizen", "10 Lonsdale St Bradon", "ACT 2612")
	f(u, "FITZROY VIC 3065", "Jo Citizen", "Unit 2 22 Smith St Fitzroy", "VIC 3000")
	// the second pass's probes
	f(m, "", "Jo", "22 Zig Zag St Red Hill", "QLD 4059")
	f(m, "", "Jo", "22 Zig Zag Street Red Hill", "Qld 4059")
	f(m, "", "Jo", "22 Zig Zag St, Red Hill", "QLD, 4059")
	f(m, "", "Jo", "22 Zig Zag St Red Hill", "Queensland 4059")
	f(m, "", "Jo", "22 Zig Zag St Red Hill", "4059 QLD")
	f(m, "", "Jo", "22 Zig Zag St Red Hill", "QLD", "4059")
	f(m, "", "Jo", "Unit 4 22 Zig Zag St Red Hill", "QLD 4059")
	f(m, "", "Jo", "4/22 Zig Zag St Red Hill", "QLD 4059")
	f(m, "", "Jo", "14 Clifton St Petrie Terrace", "QLD 4000")
	f(m, "", "Jo", "300 Adelaide St Brisbane City", "QLD 4000")
	f(m, "", "Jo", "10 Skyring Tce Newstead", "QLD 4006")
	f(m, "", "Jo", "400 Newmarket Rd Newmarket", "QLD 4051")
	f(m, "", "Jo", "5 Little Jane St West End", "QLD 4101")
	f(m, "", "Jo", "12 Norfolk Rd South Brisbane", "QLD 4101")
	f(m, "", "Jo", "12 Blackall Tce East Brisbane", "QLD 4169")
	f(m, "", "Jo", "10 The Drive Bardon", "QLD 4065")
	f(m, "", "Jo", "100 Water St Spring Hill", "QLD 4000")
	f(m, "", "Jo", "Acme Pty Ltd", "9 Jones St Auchenflower", "QLD 4066")
	f(m, "", "Jo", "Acme Pty Ltd", "Level 3 20 School St Fortitude Valley", "QLD 4006")
	f(m, "", "Jo", "1 Chapel St South Yarra", "VIC 3141")
	f(m, "", "Jo", "1 Bridge Rd Richmond", "Vic 3121")
	f(m, "", "Jo", "88 Oxford St Paddington", "NSW 2021")
	f(m, "", "Jo", "88 Oxford St Bondi Junction", "NSW 2022")
	f(m, "", "Jo", "4 Pacific Hwy St Leonards", "NSW 2065")
	f(m, "", "Jo", "4 Pacific Hwy Saint Leonards", "NSW 2065")
	f(m, "", "Jo", "5 Beach St Coogee", "NSW 2034")
	f(m, "", "Jo", "7 Stirling Hwy Nedlands", "WA 6009")
	f(m, "", "Jo", "19 Davey St Hobart", "Tasmania 7000")
	f(m, "", "Jo", "2 Main St Mount Barker", "SA 5251")
	f(m, "", "Jo", "2 Main St Mt Barker", "SA 5251")
	f(m, "", "Jo", "1 Smith St Port Melbourne", "VIC 3207")
	f(m, "", "Jo", "1 Bay Rd Sandringham", "VIC 3191")
	f(m, "", "Jo", "1 Main Rd Glen Osmond", "SA 5064")
	f(m, "", "Jo", "1 Nepean Hwy Mount Martha", "VIC 3934")
	f(m, "", "Jo", "1 High St Kew East", "VIC 3102")
	f(m, "", "Jo", "1 Church St Hawthorn East", "VIC 3123")
	f(m, "", "Jo", "3 Ocean St Narrabeen", "NSW 2101")
	f(m, "", "Jo", "PO Box 45 Red Hill", "QLD 4059")
	f(m, "", "Jo", "Locked Bag 3 Fortitude Valley", "QLD 4006")
	f(m, "", "Jo", "GPO Box 1 Brisbane", "QLD 4001")
	f(m, "", "Jo", "Zig Zag St Red Hill", "QLD 4059")
	f(u, "RED HILL QLD 4059", "Jo", "22 Zig Zag St Red Hil", "QLD 4059")
	f(u, "PETRIE TERRACE QLD 4000", "Jo", "14 Clifton St Petrie Terace", "QLD 4000")
	f(u, "NEWSTEAD QLD 4006", "Jo", "10 Skyring Tce Newstaed", "QLD 4006")
	f(u, "SOUTH YARRA VIC 3141", "Jo", "1 Chapel St South Yara", "VIC 3141")
	f(u, "ST LEONARDS NSW 2065", "Jo", "4 Pacific Hwy St Leonards", "NSW 2000")
	f(u, "HOBART TAS 7000", "Jo", "19 Davey St Hobart", "TAS 7050")
	f(u, "MOUNT BARKER SA 5251", "Jo", "2 Main St Mount Barkr", "SA 5251")
	f(u, "MOUNT MARTHA VIC 3934", "Jo", "1 Nepean Hwy Mount Marta", "VIC 3934")
	f(inv, "", "Jo", "22 Zig Zag St Red Hill", "NSW 4059")
	f(inv, "", "Jo", "22 Zig Zag St Red Hill", "QLD")
	// still read as before: the locality alone between street and state
	f(m, "", "Jo Citizen", "10 Jones St", "Melbourne", "VIC 3000")
	f(u, "MELBOURNE VIC 3000", "Jo Citizen", "10 Jones St", "Melborne", "VIC 3000")
	// a state and postcode of another state stay invalid
	f(inv, "", "Jo Citizen", "10 Jones St Melbourne", "NSW 3000")
}

// TestClassBoxNamesWithStreetWords (class 3): GeoNames' names of large
// volume receivers and post offices that hold a street word ("ST KILDA
// ROAD MELBOURNE" 3004, "PALLAS STREET MARYBOROUGH" 4650) do not swallow
// the street of an ordinary address at that postcode.
func TestClassBoxNamesWithStreetWords(t *testing.T) {
	e := newEngine(t, false)
	f := suggestCase(t, e)
	m, u, inv := "matched", "unmatched", "invalid"

	f(m, "", "Jo Citizen", "Acme Pty Ltd", "431 St Kilda Rd Melbourne VIC 3004")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "431 St Kilda Road Melbourne VIC 3004")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Level 12 431 St Kilda Road Melbourne VIC 3004")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "St Kilda Road Melbourne VIC 3004")
	f(m, "", "Jo Citizen", "431 St Kilda Road Melbourne", "VIC 3004")
	f(m, "", "Jo Citizen", "St Kilda Road Melbourne", "VIC 3004")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "12 Pallas Street Maryborough QLD 4650")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Pallas Street Maryborough QLD 4650")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Unit 1 12 Pallas St Maryborough QLD 4650")
	f(m, "", "Jo Citizen", "12 Pallas Street Maryborough", "QLD 4650")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "12 Missenden Road Camperdown NSW 2050")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Missenden Road Camperdown NSW 2050")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "100 Adelaide Street Brisbane City QLD 4000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Adelaide Street Brisbane City QLD 4000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "10 Nathan Street Brighton QLD 4017")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "5 Were Street Brighton VIC 3186")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Were Street Brighton VIC 3186")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "8 Booran Road Glen Huntly VIC 3163")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "20 Wattletree Road Malvern East VIC 3145")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Tunstall Square Doncaster East VIC 3109")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "5 Blenheim Road North Ryde NSW 2113")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "Shop 12 Warringah Mall Brookvale NSW 2100")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "1 Main Rd Stroud Road NSW 2415")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "2 King St Raymond Terrace NSW 2324")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "2 King St Lane Cove North NSW 2066")
	// the second pass's probes: GeoNames' box and receiver names beside
	// the streets of their places (COLLINS STREET EAST 8003, CIVIC SQUARE
	// 2608, WARRINGAH MALL 2100, CHERMSIDE CENTRE 4032, ...)
	f(m, "", "Jo", "Acme", "10 Collins St East Melbourne VIC 3002")
	f(m, "", "Jo", "10 Collins St", "East Melbourne VIC 3002")
	f(m, "", "Jo", "Acme", "100 Collins Street Melbourne VIC 3000")
	f(m, "", "Jo", "Acme", "100 St Georges Tce Perth WA 6000")
	f(m, "", "Jo", "Acme", "St Georges Terrace Perth WA 6000")
	f(m, "", "Jo", "Acme", "10 Wellington St East Perth WA 6004")
	f(m, "", "Jo", "Acme", "5 Civic Square Canberra ACT 2600")
	f(m, "", "Jo", "Acme", "1 Warringah Mall Brookvale NSW 2100")
	f(m, "", "Jo", "Acme", "Shop 5 Warringah Mall Brookvale NSW 2100")
	f(m, "", "Jo", "Acme", "10 Macquarie St Sydney NSW 2000")
	f(m, "", "Jo", "Acme", "10 Herring Rd Macquarie Park NSW 2113")
	f(m, "", "Jo", "Acme", "10 Plaza Pde Maroochydore QLD 4558")
	f(m, "", "Jo", "Acme", "100 Market St Sydney NSW 2000")
	f(m, "", "Jo", "Acme", "1 Australia Square Sydney NSW 2000")
	f(m, "", "Jo", "Acme", "10 Raymond Tce Raymond Terrace NSW 2324")
	f(m, "", "Jo", "Acme", "10 William St Raymond Terrace NSW 2324")
	f(m, "", "Jo", "Acme", "10 Adelaide St Raymond Terrace NSW 2324")
	f(m, "", "Jo", "Acme", "10 Hamilton Rd Chermside QLD 4032")
	f(m, "", "Jo", "Acme", "10 Moggill Rd Indooroopilly QLD 4068")
	f(m, "", "Jo", "Acme", "10 Station Rd Indooroopilly QLD 4068")
	f(m, "", "Jo", "Acme", "10 Brookside Dr Mitchelton QLD 4053")
	f(m, "", "Jo", "Acme", "10 Collins St Hobart TAS 7000")
	f(m, "", "Jo", "Acme", "10 Cloisters Sq Perth WA 6000")
	f(m, "", "Jo", "Acme", "10 Kippax Pl Holt ACT 2615")
	f(m, "", "Jo", "Acme", "10 Were St Brighton VIC 3186")
	f(m, "", "Jo", "Acme", "10 Were Street Brighton East VIC 3187")
	f(m, "", "Jo", "Acme", "10 Booran Rd Caulfield East VIC 3145")
	f(m, "", "Jo", "Acme", "10 Tunstall Sq Doncaster East VIC 3109")
	f(m, "", "Jo", "Acme", "10 Mildura Centre Plaza Mildura VIC 3500")
	f(m, "", "Jo", "Acme", "10 Langtree Ave Mildura VIC 3500")
	f(m, "", "Jo", "Acme", "10 Wattletree Rd Armadale VIC 3143")
	f(m, "", "Jo", "Acme", "5 Erina Fair Erina NSW 2250")
	f(m, "", "Jo", "Acme", "10 Terrigal Dr Erina NSW 2250")
	f(m, "", "Jo", "Acme", "10 Penrith Plaza Penrith NSW 2750")
	f(m, "", "Jo", "Acme", "10 Coffs Harbour Plaza Coffs Harbour NSW 2450")
	f(m, "", "Jo", "Acme", "10 Harbour Dr Coffs Harbour NSW 2450")
	f(m, "", "Jo", "Acme", "10 Anzac Pde Kensington NSW 2033")
	f(m, "", "Jo", "Acme", "10 City Rd Darlington NSW 2008")
	f(m, "", "Jo", "Acme", "10 Lake St Clair Rd Derwent Bridge TAS 7140")
	f(m, "", "Jo", "Acme", "10 Mount St John Rd Mount Louisa QLD 4814")
	f(m, "", "Jo", "Acme", "10 Queen St North St Marys NSW 2760")
	f(m, "", "Jo", "10 Queen St", "North St Marys NSW 2760")
	f(m, "", "Jo", "Acme", "10 Queen St St Marys NSW 2760")
	f(u, "EAST MELBOURNE VIC 3002", "Jo", "Acme", "10 Collins St East Melborne VIC 3002")
	f(u, "EAST PERTH WA 6004", "Jo", "Acme", "10 Wellington St East Pert WA 6004")
	// written on separate lines they always were read right
	f(m, "", "Jo Citizen", "431 St Kilda Road", "Melbourne VIC 3004")
	f(m, "", "Jo Citizen", "12 Pallas Street", "Maryborough QLD 4650")
	// the locality misspelt: the street is still the street
	f(u, "MELBOURNE VIC 3004", "Jo Citizen", "Acme Pty Ltd", "431 St Kilda Road Melborne VIC 3004")
	f(u, "MARYBOROUGH QLD 4650", "Jo Citizen", "Acme Pty Ltd", "12 Pallas Street Maryborogh QLD 4650")
	f(u, "CAMPERDOWN NSW 2050", "Jo Citizen", "Acme Pty Ltd", "12 Missenden Road Camperdwon NSW 2050")
	// the box name on its own with no street is no delivery address
	f(inv, "", "Jo Citizen", "Acme Pty Ltd", "Raymond Terrace NSW 2324")
	f(inv, "", "Jo Citizen", "Acme Pty Ltd", "Stroud Road NSW 2415")
	f(inv, "", "Jo Citizen", "Acme Pty Ltd", "Box Hill South VIC 3128")
	f(inv, "", "Jo Citizen", "Acme Pty Ltd", "Lane Cove West NSW 2066")
	// the detail reads the street as the street
	d := e.Check([]string{"Jo", "Acme", "431 St Kilda Road Melbourne VIC 3004"}, true).Detail
	if d.StreetName != "ST KILDA" || d.NumberFirst != "431" || d.Locality != "MELBOURNE" {
		t.Errorf("St Kilda Road: street %q number %q locality %q", d.StreetName, d.NumberFirst, d.Locality)
	}
	d = e.Check([]string{"Jo", "Acme", "Pallas Street Maryborough QLD 4650"}, true).Detail
	if d.StreetName != "PALLAS" || d.Locality != "MARYBOROUGH" {
		t.Errorf("Pallas Street: street %q locality %q", d.StreetName, d.Locality)
	}
}

// classStreetEngine builds an engine whose reference holds the given real
// localities with a complete street level of the given address points,
// each written "[BUILDING, ][UNIT n, ][LEVEL, ]NUMBER|LOT n STREET TYPE,
// LOCALITY STATE POSTCODE" as bench/gnafgen writes them.
type classPoint struct {
	building, flat, level, lot, number, street, typ, locality, state, postcode string
}

func classStreetEngine(t *testing.T, pts []classPoint) *engine.Engine {
	t.Helper()
	rb := engine.NewReferenceBuilder()
	sb := engine.NewStreetsBuilder()
	for i, p := range pts {
		st, _ := engine.StateByAbbr(p.state)
		pc, _ := engine.ParsePostcode(p.postcode)
		if _, err := rb.AddLocality(engine.Locality{Name: p.locality, State: st, Postcode: pc, Sources: engine.SourceGNAF}); err != nil {
			t.Fatal(err)
		}
		g := sb.Group("test:"+p.locality+"|"+p.state, true)
		if err := sb.Link(g, p.locality, p.state, p.postcode); err != nil {
			t.Fatal(err)
		}
		id, err := sb.Street(g, p.street, p.typ, "", "")
		if err != nil {
			t.Fatal(err)
		}
		ps := engine.PointSpec{NumberFirst: p.number, Lot: p.lot, Building: p.building, Postcode: p.postcode, PID: fmt.Sprintf("GATEST%06d", i+1)}
		if p.flat != "" {
			ps.FlatNumber = p.flat
		}
		if p.level != "" {
			ps.LevelType = p.level
		}
		if err := sb.Point(id, ps); err != nil {
			t.Fatal(err)
		}
	}
	return attachedEngine(t, rb, sb.Build())
}

// TestClassBuildingAndLotOnStreetLine (class 8): a building's name and a
// lot (or a number) on the street line, a comma between them as
// bench/gnafgen writes them ("CONDAMINE HOMESTEAD, LOT 68 ESSEX RD"), is
// matched at premise level like the rest; so is a shop on the ground
// floor whose street name is also a unit word ("SHOP 1, GROUND, 35 WARD
// ST").
func TestClassBuildingAndLotOnStreetLine(t *testing.T) {
	pts := []classPoint{
		{building: "CONDAMINE HOMESTEAD", lot: "68", street: "ESSEX", typ: "ROAD", locality: "HAT HEAD", state: "NSW", postcode: "2440"},
		{building: "ALBURY VINEYARD", lot: "255", street: "TOORONGA", typ: "STREET", locality: "HAT HEAD", state: "NSW", postcode: "2440"},
		{building: "CLARE GLEN", lot: "46", street: "TOOWOOMBA", typ: "LANE", locality: "LITTLE HARTLEY", state: "NSW", postcode: "2790"},
		{building: "KURRAJONG PARK", lot: "95", street: "PLUM", typ: "COURT", locality: "CUDAL", state: "NSW", postcode: "2864"},
		{building: "KIALLA DOWNS", lot: "185", street: "EUCALYPTUS", typ: "ROAD", locality: "KRAMBACH", state: "NSW", postcode: "2429"},
		{building: "DELHI VALE", lot: "123", street: "COOPERS CROSSING", typ: "ROAD", locality: "ORIENT POINT", state: "NSW", postcode: "2540"},
		{building: "SHREWSBURY HOMESTEAD", lot: "139", street: "WICKHAM", typ: "STREET", locality: "WHITTON", state: "NSW", postcode: "2705"},
		{building: "GUNDAGAI VINEYARD", lot: "57", street: "BEACH", typ: "STREET", locality: "BOREE CREEK", state: "NSW", postcode: "2652"},
		{building: "ILLAWARRA VINEYARD", lot: "183", street: "STURT", typ: "HIGHWAY", locality: "ARAKOON", state: "NSW", postcode: "2431"},
		{building: "MURRAY STATION", number: "1450", street: "GRAMPIANS", typ: "ROAD", locality: "HALLS GAP", state: "VIC", postcode: "3381"},
		{flat: "1", level: "G", number: "14", street: "BARRETT", typ: "STREET", locality: "BRADDON", state: "ACT", postcode: "2612"},
		{flat: "1", level: "G", number: "35", street: "WARD", typ: "STREET", locality: "KELLYVILLE", state: "NSW", postcode: "2155"},
		{flat: "5", number: "23", street: "HALL", typ: "ROAD", locality: "WOY WOY", state: "NSW", postcode: "2256"},
		{flat: "2", level: "G", number: "11", street: "FACTORY", typ: "COURT", locality: "WARRNAMBOOL", state: "VIC", postcode: "3280"},
	}
	e := classStreetEngine(t, pts)
	f := func(status string, gran engine.Granularity, lines ...string) {
		t.Helper()
		r := e.Check(lines, true)
		if r.Status.String() != status || (gran != "" && r.Detail.Granularity != gran) {
			t.Errorf("%q: %s %s %v, want %s %s (detail %+v)", lines, r.Status, r.Detail.Granularity, r.Detail.Faults, status, gran, r.Detail)
		}
		if q := e.Check(lines, false); q.Status != r.Status {
			t.Errorf("%q: %s without detail, %s with", lines, q.Status, r.Status)
		}
	}
	m, u, P := "matched", "unmatched", engine.GranularityPremise

	f(m, P, "Jo Citizen", "CONDAMINE HOMESTEAD, LOT 68 ESSEX RD", "HAT HEAD NSW 2440")
	f(m, P, "Jo Citizen", "Condamine Homestead, Lot 68 Essex Road", "Hat Head NSW 2440")
	f(m, P, "Jo Citizen", "CONDAMINE HOMESTEAD LOT 68 ESSEX RD", "HAT HEAD NSW 2440")
	f(m, P, "Jo Citizen", "CONDAMINE HOMESTEAD", "LOT 68 ESSEX RD", "HAT HEAD NSW 2440")
	f(m, P, "Jo Citizen", "Acme", "CONDAMINE HOMESTEAD, LOT 68 ESSEX RD HAT HEAD NSW 2440")
	f(m, P, "Jo Citizen", "CONDAMINE HOMESTEAD, LOT 68 ESSEX RD HAT HEAD", "NSW 2440")
	f(m, P, "Jo Citizen", "ALBURY VINEYARD, LOT 255 TOORONGA ST", "HAT HEAD NSW 2440")
	f(m, P, "Jo Citizen", "CLARE GLEN, LOT 46 TOOWOOMBA LANE", "LITTLE HARTLEY NSW 2790")
	f(m, P, "Jo Citizen", "KURRAJONG PARK, LOT 95 PLUM CT", "CUDAL NSW 2864")
	f(m, P, "Jo Citizen", "KIALLA DOWNS, LOT 185 EUCALYPTUS RD", "KRAMBACH NSW 2429")
	f(m, P, "Jo Citizen", "DELHI VALE, LOT 123 COOPERS CROSSING RD", "ORIENT POINT NSW 2540")
	f(m, P, "Jo Citizen", "SHREWSBURY HOMESTEAD, LOT 139 WICKHAM ST", "WHITTON NSW 2705")
	f(m, P, "Jo Citizen", "GUNDAGAI VINEYARD, LOT 57 BEACH ST", "BOREE CREEK NSW 2652")
	f(m, P, "Jo Citizen", "ILLAWARRA VINEYARD, LOT 183 STURT HWY", "ARAKOON NSW 2431")
	f(m, P, "Jo Citizen", "LOT 183 STURT HWY", "ARAKOON NSW 2431")
	f(m, P, "Jo Citizen", "MURRAY STATION, 1450 GRAMPIANS RD", "HALLS GAP VIC 3381")
	f(m, P, "Jo Citizen", "SHOP 1, GROUND, 14 BARRETT ST", "BRADDON ACT 2612")
	f(m, P, "Jo Citizen", "SHOP 1 GROUND 14 BARRETT ST", "BRADDON ACT 2612")
	f(m, P, "Jo Citizen", "Acme", "SHOP 1 GROUND 14 BARRETT ST BRADDON ACT 2612")
	f(m, P, "Jo Citizen", "SHOP 1, GROUND, 35 WARD ST", "KELLYVILLE NSW 2155")
	f(m, P, "Jo Citizen", "SHOP 2, GROUND, 11 FACTORY CT", "WARRNAMBOOL VIC 3280")
	f(m, P, "Jo Citizen", "UNIT 5, 23 HALL RD", "WOY WOY NSW 2256")
	f(m, P, "Jo Citizen", "Acme", "UNIT 5 23 HALL RD WOY WOY NSW 2256")
	// what is not there stays unmatched
	f(u, "", "Jo Citizen", "CONDAMINE HOMESTEAD, LOT 69 ESSEX RD", "HAT HEAD NSW 2440")
	f(u, "", "Jo Citizen", "CONDAMINE HOMESTEAD, LOT 68 ESSEX ST", "HAT HEAD NSW 2440")
	f(u, "", "Jo Citizen", "SHOP 1, GROUND, 15 BARRETT ST", "BRADDON ACT 2612")
	f(u, "", "Jo Citizen", "UNIT 6, 23 HALL RD", "WOY WOY NSW 2256")

	// the building is reported, the lot read as the lot
	d := e.Check([]string{"Jo", "CONDAMINE HOMESTEAD, LOT 68 ESSEX RD", "HAT HEAD NSW 2440"}, true).Detail
	if d.Building != "CONDAMINE HOMESTEAD" || d.Lot != "68" || d.StreetName != "ESSEX" || d.ReferenceID != "GATEST000001" {
		t.Errorf("building %q lot %q street %q reference %q", d.Building, d.Lot, d.StreetName, d.ReferenceID)
	}
	d = e.Check([]string{"Jo", "SHOP 1, GROUND, 14 BARRETT ST", "BRADDON ACT 2612"}, true).Detail
	if d.LevelType != "G" || d.LevelNumber != "" || d.NumberFirst != "14" || !slices.Equal([]string{d.FlatType, d.FlatNumber}, []string{"SHOP", "1"}) {
		t.Errorf("ground floor shop: level %q %q number %q flat %q %q", d.LevelType, d.LevelNumber, d.NumberFirst, d.FlatType, d.FlatNumber)
	}
}

// TestClassRunTogetherPostalWords (class 7): postal delivery types written
// run together, hyphenated or with the number glued on read as they do
// with spaces.
func TestClassRunTogetherPostalWords(t *testing.T) {
	e := newEngine(t, false)
	f := suggestCase(t, e)
	m, u, inv := "matched", "unmatched", "invalid"

	f(m, "", "Jo Citizen", "POBox 123", "Sydney NSW 2000")
	f(m, "", "Jo Citizen", "POBOX 123", "Sydney NSW 2000")
	f(m, "", "Jo Citizen", "pobox 123", "Sydney NSW 2000")
	f(m, "", "Jo Citizen", "POBox123", "Sydney NSW 2000")
	f(m, "", "Jo Citizen", "PO Box123", "Sydney NSW 2000")
	f(m, "", "Jo Citizen", "P.O.Box 123", "Sydney NSW 2000")
	f(m, "", "Jo Citizen", "PO-Box 123", "Sydney NSW 2000")
	f(m, "", "Jo Citizen", "POB123", "Sydney NSW 2000")
	f(m, "", "Jo Citizen", "PostOfficeBox 123", "Sydney NSW 2000")
	f(m, "", "Jo Citizen", "POBox 42", "Hobart TAS 7000")
	f(m, "", "Jo Citizen", "POBox 42", "Darwin NT 0800")
	f(m, "", "Jo Citizen", "POBox 7000", "Hobart TAS 7000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "POBox 123 Sydney NSW 2000")
	f(m, "", "Jo Citizen", "Lockedbag 5", "Parramatta NSW 2150")
	f(m, "", "Jo Citizen", "LockedBag 5", "Parramatta NSW 2150")
	f(m, "", "Jo Citizen", "LOCKEDBAG5", "Parramatta NSW 2150")
	f(m, "", "Jo Citizen", "Locked-Bag 5", "Parramatta NSW 2150")
	f(m, "", "Jo Citizen", "Locked Bag5", "Parramatta NSW 2150")
	f(m, "", "Jo Citizen", "LockedMailBag 5", "Parramatta NSW 2150")
	f(m, "", "Jo Citizen", "LMB5", "Parramatta NSW 2150")
	f(m, "", "Jo Citizen", "GPOBox 1234", "Sydney NSW 2001")
	f(m, "", "Jo Citizen", "GPOBox1234", "Sydney NSW 2001")
	f(m, "", "Jo Citizen", "GPO Box1234", "Melbourne VIC 3001")
	f(m, "", "Jo Citizen", "GPOBOX 2500", "Brisbane QLD 4001")
	f(m, "", "Jo Citizen", "GPOBox 1000", "Adelaide SA 5001")
	f(m, "", "Jo Citizen", "GPOBox 9", "Hobart TAS 7001")
	f(m, "", "Jo Citizen", "PrivateBag 7", "Alice Springs NT 0870")
	f(m, "", "Jo Citizen", "Private-Bag 7", "Alice Springs NT 0870")
	f(m, "", "Jo Citizen", "PMB7", "Alice Springs NT 0870")
	f(m, "", "Jo Citizen", "PrivateMailBag 7", "Alice Springs NT 0870")
	f(m, "", "Jo Citizen", "RMB1234", "Mansfield VIC 3722")
	f(m, "", "Jo Citizen", "RSD12", "Mansfield VIC 3722")
	f(m, "", "Jo Citizen", "CMB5", "Mansfield VIC 3722")
	// dotted initials, "NO" before the number, "BOX" and "P/O BOX" alone
	// (before: invalid, "no street or postal delivery line")
	f(m, "", "Jo Citizen", "P.O.B. 45", "Red Hill QLD 4059")
	f(m, "", "Jo Citizen", "P/O Box 45", "Red Hill QLD 4059")
	f(m, "", "Jo Citizen", "PO Box No. 45", "Red Hill QLD 4059")
	f(m, "", "Jo Citizen", "PO Box Number 45", "Red Hill QLD 4059")
	f(m, "", "Jo Citizen", "Box 45", "Red Hill QLD 4059")
	f(m, "", "Jo Citizen", "Box45", "Red Hill QLD 4059")
	f(m, "", "Jo Citizen", "Locked Bag No 3", "Fortitude Valley QLD 4006")
	f(m, "", "Jo Citizen", "L.M.B. 3", "Fortitude Valley QLD 4006")
	f(m, "", "Jo Citizen", "P.M.B. 2", "Katherine NT 0851")
	f(m, "", "Jo Citizen", "R.M.B. 123", "Mansfield VIC 3722")
	f(m, "", "Jo Citizen", "R.S.D. 12", "Mansfield VIC 3722")
	f(m, "", "Jo Citizen", "C.M.B. 5", "Mansfield VIC 3722")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "R.M.B. 123 Mansfield VIC 3722")
	// and what read right before
	f(m, "", "Jo Citizen", "PObox 45", "Red Hill QLD 4059")
	f(m, "", "Jo Citizen", "P.O. Box 45", "Red Hill QLD 4059")
	f(m, "", "Jo Citizen", "POBox45 Red Hill", "QLD 4059")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "POBox 45, Red Hill, QLD, 4059")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "LockedBag 3 Fortitude Valley QLD 4006")
	f(m, "", "Jo Citizen", "G.P.O. Box 1", "Brisbane QLD 4001")
	f(m, "", "Jo Citizen", "GPOBOX1", "Brisbane QLD 4001")
	f(m, "", "Jo Citizen", "GPO Box 1, Brisbane", "QLD 4001")
	f(m, "", "Jo Citizen", "PrivateMailBag2", "Katherine NT 0851")
	f(m, "", "Jo Citizen", "RMB123 Mount Buller Rd", "Mansfield VIC 3722")
	f(m, "", "Jo Citizen", "CarePO", "Mansfield VIC 3722")
	f(m, "", "Jo Citizen", "Community Mail Bag 5", "Mansfield VIC 3722")
	f(m, "", "Jo Citizen", "Mail Service 1234", "Toowoomba QLD 4350")
	f(u, "RED HILL QLD 4059", "Jo Citizen", "POBox 45", "Red Hil QLD 4059")
	f(u, "", "Jo Citizen", "GPOBox 1", "Red Hill QLD 4059")
	f(inv, "", "Jo Citizen", "LockedBag 3", "Fortitude Valley NSW 4006")
	// a place named BOX keeps its name
	f(m, "", "Jo Citizen", "10 Station St", "Box Hill VIC 3128")
	f(m, "", "Jo Citizen", "PO Box 10", "Box Hill VIC 3128")
	// GPO boxes are only at the General Post Offices, run together or not
	f(u, "", "Jo Citizen", "GPOBox 1234", "Parramatta NSW 2150")
	// and a glued box still needs its state and postcode
	f(inv, "", "Jo Citizen", "POBox 123", "Sydney NSW")
	for _, l := range []string{"POBox 123", "POBOX123", "PO Box123", "P.O.Box 123", "PO-Box 123", "POB123"} {
		d := e.Check([]string{"Jo", l, "Sydney NSW 2000"}, true).Detail
		if d.PostalType != "PO BOX" || d.PostalNumber != "123" || d.Granularity != engine.GranularityPostal {
			t.Errorf("%q: postal %q %q granularity %q", l, d.PostalType, d.PostalNumber, d.Granularity)
		}
	}
	for _, l := range []string{"P.O.B. 123", "P/O Box 123", "PO Box No. 123", "Box 123", "Box123"} {
		d := e.Check([]string{"Jo", l, "Sydney NSW 2000"}, true).Detail
		if d.PostalType != "PO BOX" || d.PostalNumber != "123" || d.Granularity != engine.GranularityPostal {
			t.Errorf("%q: postal %q %q granularity %q", l, d.PostalType, d.PostalNumber, d.Granularity)
		}
	}
	if d := e.Check([]string{"Jo", "R.M.B. 12", "Mansfield VIC 3722"}, true).Detail; d.PostalType != "RMB" || d.PostalNumber != "12" {
		t.Errorf("R.M.B. 12: postal %q %q", d.PostalType, d.PostalNumber)
	}
	if d := e.Check([]string{"Jo", "LOCKEDBAG5", "Parramatta NSW 2150"}, true).Detail; d.PostalType != "LOCKED BAG" || d.PostalNumber != "5" {
		t.Errorf("LOCKEDBAG5: postal %q %q", d.PostalType, d.PostalNumber)
	}
}

// TestClassMessagesThatMislead (class 6): a street number is never read as
// the postcode when a four-digit one stands beside the state, an address
// written with its state and postcode first says so, and a foreign postal
// code or New Zealand place is named as such rather than given an
// Australian state.
func TestClassMessagesThatMislead(t *testing.T) {
	e := newEngine(t, false)
	vf, _ := verdictCase(t, e)
	f := func(status, msg string, lines ...string) {
		t.Helper()
		vf(status, "AUS", msg, lines...)
		if r := e.Check(lines, false); strings.Contains(r.Message, "postcode 12 ") || strings.Contains(r.Message, "postcode 1 ") {
			t.Errorf("%q: a street number read as the postcode: %q", lines, r.Message)
		}
	}
	m, u, inv := "matched", "unmatched", "invalid"

	// postcode and state first, the street after them, on one line
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "2000 NSW 12 George St Sydney")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "NSW 2000 12 George St Sydney")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "3000 VIC 12 Jones St Melbourne")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "VIC 3000 12 Jones St Melbourne")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "4000 QLD 1 Queen St Brisbane City")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "5000 SA 1 King William St Adelaide")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "6000 WA 25 St Georges Tce Perth")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "7000 TAS 99 Macquarie St Hobart")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "2612 ACT 10 Lonsdale St Braddon")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "0870 NT 10 Todd St Alice Springs")
	f(m, "", "Jo Citizen", "2000 NSW", "12 George St Sydney")
	f(m, "", "Jo Citizen", "NSW 2000", "12 George St Sydney")
	f(u, "", "Jo Citizen", "Acme Pty Ltd", "2000 NSW 12 George St Sydny")
	f(inv, "postcode 2000 is in NSW, not VIC", "Jo Citizen", "Acme Pty Ltd", "2000 VIC 12 George St Sydney")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "4000 QLD Level 12 300 Adelaide St Brisbane City")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "QLD 4000 Unit 2 300 Adelaide St Brisbane City")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "3141 VIC 1/12 Chapel St South Yarra")
	f(m, "", "Jo Citizen", "4059 QLD", "22 Zig Zag St", "Red Hill")
	// the state first and no postcode: the number after the state is the
	// street's (before: "postcode 12 is not 4 digits", "unexpected text
	// after the postcode: SYDNEY is not a country")
	f(inv, "no postcode", "Jo Citizen", "Acme Pty Ltd", "NSW 12 George St Sydney")
	f(inv, "no postcode", "Jo Citizen", "Acme Pty Ltd", "VIC 1 Jones St Melbourne")
	f(inv, "no postcode", "Jo Citizen", "Acme Pty Ltd", "Queensland 22 Zig Zag St Red Hill")
	f(inv, "no state and postcode", "Jo Citizen", "NSW 12 George St", "Sydney")
	f(inv, "no state and postcode", "Jo Citizen", "VIC 10 Jones St", "Melbourne")
	// a number alone after the state, or ending the line, is still read
	// as a mistyped postcode
	vf(inv, "AUS", "postcode 12 is not 4 digits", "Jo Citizen", "Acme Pty Ltd", "12 Jones St Melbourne VIC 12")
	vf(inv, "AUS", "postcode 300 is not 4 digits", "Jo Citizen", "10 Jones St", "Melbourne VIC 300")
	// a leading zero is offered only where it gives a postcode of the
	// state written (before: "did you mean 0200?" for NSW; 0200 is ACT's)
	vf(inv, "AUS", "did you mean 0800?", "Jo Citizen", "1 Mitchell St", "Darwin City NT 800")
	vf(inv, "AUS", "did you mean 0200?", "Jo Citizen", "Australian National University", "Acton ACT 200")
	for _, lines := range [][]string{
		{"Jo Citizen", "1 Main St", "Sydney NSW 200"},
		{"Jo Citizen", "1 Main St", "Perth WA 800"},
		{"Jo Citizen", "1 Main St", "Hobart TAS 872"},
	} {
		if r := e.Check(lines, false); r.Status != engine.StatusInvalid || strings.Contains(r.Message, "did you mean") {
			t.Errorf("%q: %s %q, want invalid and no postcode of another state offered", lines, r.Status, r.Message)
		}
	}
	// ... on lines of their own above the street and locality: read so
	// (TestClassStateAndPostcodeAboveStreet); the street below the
	// locality is said to be there
	f(m, "", "Jo Citizen", "2000 NSW", "12 George St", "Sydney")
	f(m, "", "Jo Citizen", "NSW 2000", "12 George St", "Sydney")
	f(inv, "the street or postal delivery line (12 GEORGE ST) is line 4, below the locality", "Jo Citizen", "NSW 2000", "Sydney", "12 George St")
	f(inv, "the street or postal delivery line (12 JONES ST) is line 4, below the locality", "Jo Citizen", "VIC 3000", "Melbourne", "12 Jones St")
	f(inv, "the street or postal delivery line (1 QUEEN ST) is line 5, below the locality", "Jo Citizen", "Acme", "QLD 4000", "Brisbane City", "1 Queen St")
	// a New Zealand place and postcode under an Australian state
	f(inv, "WELLINGTON 6011 is a New Zealand locality and postcode, not VIC", "Jo Citizen", "10 Main St", "Wellington 6011", "VIC")
	f(inv, "WELLINGTON 6011 is a New Zealand locality and postcode, not VIC", "Jo Citizen", "10 Main St", "Wellington 6011 VIC")
	f(inv, "CHRISTCHURCH 8011 is a New Zealand locality", "Jo Citizen", "10 Main St", "Christchurch 8011 QLD")
	f(u, "", "Jo Citizen", "12 Main St", "Auckland 1010 NSW")
	if d := e.Check([]string{"Jo Citizen", "12 Main St", "Auckland 1010 NSW"}, true).Detail; len(d.Suggestion) > 0 {
		t.Errorf("Auckland 1010 NSW: suggested %q, an Australian locality for a New Zealand place", d.Suggestion)
	}
	// a real Australian locality keeps the Australian message
	f(inv, "postcode 6011 is in WA, not VIC", "Jo Citizen", "10 Main St", "Cottesloe 6011", "VIC")
	// foreign postal codes
	f(inv, "if this is a United States address", "Jo Citizen", "400 Broad St", "Seattle WA 98109")
	f(inv, "if this is a United States address", "Jo Citizen", "1000 4th Ave", "Seattle, WA 98104")
	f(inv, "98109-4607 is no Australian postcode", "Jo Citizen", "400 Broad St", "Seattle WA 98109-4607")
	f(inv, "75001 is no Australian postcode", "Jo Citizen", "1 Rue de Rivoli", "75001 Paris")
	f(inv, "10115 is no Australian postcode", "Jo Citizen", "Invalidenstr. 1", "10115 Berlin")
	f(inv, "a foreign address ends with its country", "Jo Citizen", "1 Main Rd", "Mumbai 400001")
	// a typo in an Australian postcode is only that
	f(inv, "postcode 30000 is not 4 digits", "Jo Citizen", "10 Jones St", "Melbourne VIC 30000")
	if r := e.Check([]string{"Jo Citizen", "10 Jones St", "Melbourne VIC 30000"}, false); strings.Contains(r.Message, "foreign") {
		t.Errorf("VIC 30000: %q", r.Message)
	}
	f(inv, "did you mean 0800?", "Jo Citizen", "1 Mitchell St", "Darwin NT 800")
}

// TestClassDeliveryLineWithoutNumber (class 4): government and
// institutional addresses name the street alone; that line is the delivery
// line, not a recipient: a street type standing as the whole name
// ("ESPLANADE", "BROADWAY") and corners ("CNR GEORGE AND MARKET STREETS")
// included.
func TestClassDeliveryLineWithoutNumber(t *testing.T) {
	e := newEngine(t, false)
	vf, _ := verdictCase(t, e)
	f := func(status, street string, lines ...string) {
		t.Helper()
		vf(status, "AUS", "", lines...)
		if street == "" {
			return
		}
		d := e.Check(lines, true).Detail
		got := strings.TrimSpace(d.StreetName + " " + d.StreetType)
		if got != street {
			t.Errorf("%q: street %q, want %q (detail %+v)", lines, got, street, d)
		}
		for _, r := range d.Recipients {
			if strings.Contains(strings.Join(lines, "\n"), r) && strings.HasSuffix(strings.ToUpper(lines[len(lines)-2]), r) {
				t.Errorf("%q: the street line %q among the recipients %q", lines, r, d.Recipients)
			}
		}
	}
	m, u, inv := "matched", "unmatched", "invalid"

	f(m, "PARLIAMENT DRIVE", "The Hon. Jo Citizen MP", "Parliament House", "Parliament Drive", "Canberra ACT 2600")
	f(m, "FURZER STREET", "Department of Health", "Sirius Building", "Furzer Street", "Woden ACT 2606")
	f(m, "FURZER STREET", "Department of Health", "Sirius Building", "Furzer Street", "Phillip ACT 2606")
	f(m, "CONSTITUTION AVENUE", "Australian Taxation Office", "Constitution Avenue", "Canberra ACT 2600")
	f(m, "KING EDWARD TERRACE", "National Library of Australia", "Parkes Place", "King Edward Terrace", "Parkes ACT 2600")
	f(m, "RUSSELL DRIVE", "Department of Defence", "Russell Offices", "Russell Drive", "Campbell ACT 2612")
	f(m, "PORT ROAD", "Royal Adelaide Hospital", "Port Road", "Adelaide SA 5000")
	f(m, "PARRAMATTA ROAD", "University of Sydney", "Parramatta Road", "Camperdown NSW 2050")
	f(m, "HOSPITAL ROAD", "Jo Citizen", "Concord Hospital", "Hospital Road", "Concord West NSW 2138")
	f(m, "MACQUARIE STREET", "Parliament of New South Wales", "Macquarie Street", "Sydney NSW 2000")
	f(m, "SPRING STREET", "Parliament of Victoria", "Spring Street", "East Melbourne VIC 3002")
	f(m, "GEORGE STREET", "Parliament House", "George Street", "Brisbane City QLD 4000")
	f(m, "NORTH TERRACE", "Parliament House", "North Terrace", "Adelaide SA 5000")
	f(m, "HARVEST TERRACE", "Parliament House", "Harvest Terrace", "West Perth WA 6005")
	f(m, "MURRAY STREET", "Parliament House", "Murray Street", "Hobart TAS 7000")
	f(m, "MITCHELL STREET", "Parliament House", "Mitchell Street", "Darwin City NT 0800")
	f(m, "KING WILLIAM STREET", "Jo Citizen", "King William Street", "Adelaide SA 5000")
	f(m, "ST GEORGES TERRACE", "Jo Citizen", "St Georges Terrace", "Perth WA 6000")
	f(m, "VICTORIA SQUARE", "Jo Citizen", "Victoria Square", "Adelaide SA 5000")
	f(m, "WATTLE STREET", "Jo Citizen", "Level 1", "Wattle Street", "Ultimo NSW 2007")
	f(m, "WATTLE STREET", "Jo Citizen", "Ground Floor", "Wattle Street", "Ultimo NSW 2007")
	f(m, "WATTLE STREET", "Jo Citizen", "Block 5", "Wattle Street", "Ultimo NSW 2007")
	f(m, "FURZER STREET", "Jo Citizen", "Level 5, Tower 2", "Furzer Street", "Phillip ACT 2606")
	f(m, "ANZAC PARADE", "UNSW Sydney", "Gate 9", "Anzac Parade", "Kensington NSW 2033")
	f(m, "MURRAY VALLEY HIGHWAY", "Jo Citizen", "Farm 12", "Murray Valley Highway", "Robinvale VIC 3549")
	f(m, "THE ESPLANADE", "Jo Citizen", "The Esplanade", "Cairns City QLD 4870")
	f(m, "THE STRAND", "Jo Citizen", "The Strand", "Townsville City QLD 4810")
	// a street type standing alone as the street's name
	f(m, "ESPLANADE", "Jo Citizen", "Esplanade", "Cairns City QLD 4870")
	f(m, "ESPLANADE", "Cairns Regional Council", "Esplanade", "Cairns City QLD 4870")
	f(m, "BROADWAY", "University of Technology Sydney", "Broadway", "Ultimo NSW 2007")
	f(m, "STRAND", "Jo Citizen", "Strand", "Townsville City QLD 4810")
	f(m, "BOULEVARD", "Jo Citizen", "Boulevard", "Ivanhoe VIC 3079")
	f(m, "PROMENADE", "Jo Citizen", "Acme Pty Ltd", "Promenade", "Cairns City QLD 4870")
	// corners: the first street is read
	f(m, "GEORGE STREET", "Jo Citizen", "Cnr George and Market Streets", "Sydney NSW 2000")
	f(m, "FLINDERS STREET", "Jo Citizen", "Corner Flinders and Swanston Streets", "Melbourne VIC 3000")
	f(m, "FLINDERS STREET", "Jo Citizen", "Corner of Flinders & Swanston Sts", "Melbourne VIC 3000")
	f(m, "KING STREET", "Jo Citizen", "Cnr King St & Queen St", "Melbourne VIC 3000")
	f(m, "KING WILLIAM ROAD", "Jo Citizen", "Cnr King William and Greenhill Roads", "Wayville SA 5034")
	f(m, "HAY STREET", "Jo Citizen", "Cnr Hay St and Barrack St", "Perth WA 6000")
	// the second pass's probes: hospitals, universities, parliaments and
	// other institutions by their street alone; HERSTON 4029 and CLAYTON
	// 3800 are receivers' postcodes, not those localities', so unmatched
	f(u, "", "Dr Jo Citizen", "Royal Brisbane and Women's Hospital", "Butterfield Street", "Herston QLD 4029")
	f(inv, "", "Registrar", "The University of Queensland", "St Lucia QLD 4072")
	f(m, "", "The Principal", "Brisbane State High School", "Cordelia Street", "South Brisbane QLD 4101")
	f(m, "", "Manager", "Queensland Museum", "Grey Street", "South Brisbane QLD 4101")
	f(m, "", "Office of the Governor", "Government House", "Fernberg Road", "Paddington QLD 4064")
	f(m, "", "Jo Citizen", "Parliament House", "Alice Street", "Brisbane City QLD 4000")
	f(m, "", "Jo", "Zig Zag Street", "Red Hill QLD 4059")
	f(m, "", "Jo", "Skyring Terrace", "Newstead QLD 4006")
	f(m, "", "Jo", "The Drive", "Bardon QLD 4065")
	f(m, "", "Jo", "The Esplanade", "Ashgrove QLD 4060")
	f(m, "", "Jo", "The Corso", "Seven Hills QLD 4170")
	f(m, "", "Jo", "Acme", "Level 2", "Adelaide Street", "Brisbane City QLD 4000")
	f(m, "", "Jo", "Acme", "Ground Floor, Eagle Street", "Brisbane City QLD 4000")
	f(m, "", "Jo", "Acme", "Building 7", "Lytton Road", "Morningside QLD 4170")
	f(m, "", "Jo", "Acme", "Cnr Adelaide and Albert Streets", "Brisbane City QLD 4000")
	f(m, "", "Jo", "Acme", "Corner Water St & Boundary St", "Spring Hill QLD 4000")
	f(m, "", "Jo", "Department of Education", "30 Mary Street", "Brisbane City QLD 4000")
	f(m, "", "The Hon Jo Citizen MLA", "Parliament House", "George Street", "Brisbane QLD 4000")
	f(m, "", "Jo", "High Court of Australia", "Parkes Place", "Parkes ACT 2600")
	f(m, "", "Jo", "Australian War Memorial", "Treloar Crescent", "Campbell ACT 2612")
	f(m, "", "Jo", "Westmead Hospital", "Hawkesbury Road", "Westmead NSW 2145")
	f(u, "", "Jo", "Monash University", "Wellington Road", "Clayton VIC 3800")
	f(m, "", "Jo", "Flinders Medical Centre", "Flinders Drive", "Bedford Park SA 5042")
	f(m, "", "Jo", "Fiona Stanley Hospital", "Robin Warren Drive", "Murdoch WA 6150")
	f(m, "", "Jo", "Royal Hobart Hospital", "Liverpool Street", "Hobart TAS 7000")
	f(m, "", "Jo", "Royal Darwin Hospital", "Rocklands Drive", "Tiwi NT 0810")
	f(m, "", "Jo", "Acme", "Grand Parade", "Brighton-Le-Sands NSW 2216")
	f(m, "", "Jo", "Acme", "Pacific Highway", "Hornsby NSW 2077")
	f(m, "", "Jo", "Acme", "Great Eastern Highway", "Midland WA 6056")
	f(m, "", "Jo", "Acme", "Mall", "Rundle Mall", "Adelaide SA 5000")
	f(m, "", "Jo", "Rundle Mall", "Adelaide SA 5000")
	f(u, "", "Jo", "Zig Zag Street", "Red Hil QLD 4059")
	f(u, "", "Jo", "Royal Brisbane Hospital", "Butterfield Street", "Herstn QLD 4029")
	f(u, "", "Jo", "Monash University", "Wellington Road", "Clayton VIC 3000")
	// still unmatched or invalid when the rest is wrong
	f(u, "", "Jo Citizen", "Esplanade", "Cairns Cty QLD 4870")
	f(u, "", "Jo Citizen", "Cnr George and Market Streets", "Sydny NSW 2000")
	f(inv, "", "Jo Citizen", "Australian Parliament House", "Canberra ACT 2600")
	f(inv, "", "Jo Citizen", "Esplanade", "Cairns City QLD")

	// At street level a street named alone, or a corner's first street,
	// is confirmed as the street.
	es := classStreetEngine(t, []classPoint{
		{number: "1", street: "FURZER", typ: "STREET", locality: "PHILLIP", state: "ACT", postcode: "2606"},
		{number: "100", street: "ESPLANADE", locality: "CAIRNS CITY", state: "QLD", postcode: "4870"},
		{number: "680", street: "GEORGE", typ: "STREET", locality: "SYDNEY", state: "NSW", postcode: "2000"},
	})
	g := func(status string, gran engine.Granularity, lines ...string) {
		t.Helper()
		r := es.Check(lines, true)
		if r.Status.String() != status || r.Detail.Granularity != gran {
			t.Errorf("%q: %s %s %v, want %s %s", lines, r.Status, r.Detail.Granularity, r.Detail.Faults, status, gran)
		}
	}
	g(m, engine.GranularityStreet, "Department of Health", "Sirius Building", "Furzer Street", "Phillip ACT 2606")
	g(m, engine.GranularityStreet, "Jo Citizen", "Esplanade", "Cairns City QLD 4870")
	g(m, engine.GranularityStreet, "Jo Citizen", "Cnr George and Market Streets", "Sydney NSW 2000")
	g(m, engine.GranularityStreet, "Jo Citizen", "Cnr George St & Market St", "Sydney NSW 2000")
	g(u, "", "Jo Citizen", "Cnr Pitt and Market Streets", "Sydney NSW 2000")
}

// TestClassCountries (class 5): the last line names a country in any way
// people write one: formal and local-language names, a leading article,
// constituent countries and territories of the Caribbean and the Pacific,
// after a region or a postcode on the same line.
func TestClassCountries(t *testing.T) {
	e := newEngine(t, false)
	_, fs := verdictCase(t, e)
	vf, _ := verdictCase(t, e)
	f := func(nation string, lines ...string) {
		t.Helper()
		vf("international", nation, "", lines...)
	}
	m, inv := "matched", "invalid"

	// names with a leading article
	f("BHS", "Jo", "1 Bay St", "Nassau", "The Bahamas")
	f("GMB", "Jo", "1 Main Rd", "Banjul", "The Gambia")
	f("NLD", "Jo", "Damrak 1", "1012 LG Amsterdam", "The Netherlands")
	f("PHL", "Jo", "1 Ayala Ave", "Makati City", "The Philippines")
	f("USA", "Jo", "1600 Pennsylvania Ave NW", "Washington DC 20500", "The United States")
	f("CZE", "Jo", "Vaclavske namesti 1", "110 00 Praha", "The Czech Republic")
	// native and local-language names
	f("NLD", "Jo", "Damrak 1", "1012 LG Amsterdam", "Nederland")
	f("RUS", "Jo", "ul. Tverskaya 1", "125009 Moscow", "Россия")
	f("RUS", "Jo", "ul. Tverskaya 1", "125009 Moscow", "Rossiya")
	f("RUS", "Jo", "ul. Tverskaya 1", "125009 Moscow", "Russian Federation")
	f("DEU", "Jo", "Invalidenstr. 1", "10115 Berlin", "Deutschland")
	f("AUT", "Jo", "Stephansplatz 1", "1010 Wien", "Österreich")
	f("CHE", "Jo", "Bahnhofstrasse 1", "8001 Zürich", "Schweiz")
	f("CHE", "Jo", "Rue du Rhône 1", "1204 Genève", "Suisse")
	f("CHE", "Jo", "Via Nassa 1", "6900 Lugano", "Svizzera")
	f("ESP", "Jo", "Calle Mayor 1", "28013 Madrid", "España")
	f("ITA", "Jo", "Via del Corso 1", "00186 Roma", "Italia")
	f("POL", "Jo", "ul. Marszałkowska 1", "00-001 Warszawa", "Polska")
	f("HUN", "Jo", "Váci utca 1", "1052 Budapest", "Magyarország")
	f("GRC", "Jo", "Ermou 1", "105 63 Athina", "Ελλάδα")
	f("JPN", "Jo", "1-1 Chiyoda", "Tokyo 100-0001", "日本")
	f("CHN", "Jo", "1 Chang'an Ave", "Beijing 100000", "中国")
	f("KOR", "Jo", "1 Sejong-daero", "Seoul 04524", "대한민국")
	f("UKR", "Jo", "vul. Khreshchatyk 1", "01001 Kyiv", "Україна")
	f("FIN", "Jo", "Mannerheimintie 1", "00100 Helsinki", "Suomi")
	f("SWE", "Jo", "Drottninggatan 1", "111 51 Stockholm", "Sverige")
	f("NOR", "Jo", "Karl Johans gate 1", "0154 Oslo", "Norge")
	f("DNK", "Jo", "Strøget 1", "1160 København", "Danmark")
	f("ISL", "Jo", "Laugavegur 1", "101 Reykjavík", "Ísland")
	f("TUR", "Jo", "İstiklal Cd. 1", "34433 Istanbul", "Türkiye")
	f("EGY", "Jo", "1 Tahrir Sq", "Cairo", "مصر")
	f("IND", "Jo", "1 Rajpath", "New Delhi 110001", "भारत")
	f("IND", "Jo", "1 Rajpath", "New Delhi 110001", "Bharat")
	f("BRA", "Jo", "Av. Paulista 1", "01310-000 São Paulo SP", "Brasil")
	f("MEX", "Jo", "Av. Reforma 1", "06600 Ciudad de México", "Estados Unidos Mexicanos")
	f("FRA", "Jo", "1 Rue de Rivoli", "75001 Paris", "République française")
	f("IRL", "Jo", "1 O'Connell St", "Dublin 1", "Éire")
	f("GEO", "Jo", "1 Rustaveli Ave", "0108 Tbilisi", "Sakartvelo")
	f("THA", "Jo", "1 Sukhumvit Rd", "Bangkok 10110", "ไทย")
	// Caribbean and Pacific countries and territories
	f("SXM", "Jo", "1 Front St", "Philipsburg", "Sint Maarten")
	f("MAF", "Jo", "1 Rue de la République", "97150 Marigot", "Saint-Martin")
	f("BES", "Jo", "Kaya Grandi 1", "Kralendijk", "Bonaire")
	f("BES", "Jo", "The Bottom", "Saba")
	f("CUW", "Jo", "Handelskade 1", "Willemstad", "Curaçao")
	f("ABW", "Jo", "L.G. Smith Blvd 1", "Oranjestad", "Aruba")
	f("VGB", "Jo", "1 Main St", "Road Town", "Tortola")
	f("VGB", "Jo", "1 Main St", "Road Town", "British Virgin Islands")
	f("VIR", "Jo", "1 Main St", "Charlotte Amalie", "US Virgin Islands")
	f("CYM", "Jo", "1 Harbour Dr", "George Town", "Grand Cayman")
	f("TCA", "Jo", "1 Leeward Hwy", "Providenciales", "Turks and Caicos Islands")
	f("KNA", "Jo", "1 Bay Rd", "Basseterre", "St Kitts and Nevis")
	f("VCT", "Jo", "1 Bay St", "Kingstown", "St Vincent and the Grenadines")
	f("LCA", "Jo", "1 Jeremie St", "Castries", "Saint Lucia")
	f("TTO", "Jo", "1 Frederick St", "Port of Spain", "Trinidad and Tobago")
	f("GLP", "Jo", "1 Rue Frébault", "97110 Pointe-à-Pitre", "Guadeloupe")
	f("PRI", "Jo", "1 Calle Fortaleza", "San Juan PR 00901", "Puerto Rico")
	f("PYF", "Jo", "BP 1", "98713 Papeete", "Tahiti")
	f("PYF", "Jo", "BP 1", "98713 Papeete", "Polynésie française")
	f("COK", "Jo", "PO Box 1", "Avarua", "Rarotonga")
	f("NCL", "Jo", "1 Rue de Sébastopol", "98800 Nouméa", "Nouvelle-Calédonie")
	f("WLF", "Jo", "BP 1", "98600 Mata-Utu", "Wallis-et-Futuna")
	f("MNP", "Jo", "PO Box 1", "Saipan MP 96950", "Northern Mariana Islands")
	f("GUM", "Jo", "1 Marine Corps Dr", "Hagatna GU 96910", "Guam")
	f("FSM", "Jo", "PO Box 1", "Kolonia FM 96941", "Pohnpei")
	f("MHL", "Jo", "PO Box 1", "Majuro MH 96960", "Marshall Islands")
	f("PLW", "Jo", "PO Box 1", "Koror PW 96940", "Palau")
	f("KIR", "Jo", "PO Box 1", "Bairiki", "Tarawa")
	f("TUV", "Jo", "PO Box 1", "Vaiaku", "Funafuti")
	f("VUT", "Jo", "PO Box 1", "Port Vila", "Vanuatu")
	f("SLB", "Jo", "PO Box 1", "Honiara", "Solomon Islands")
	f("FJI", "Jo", "1 Victoria Pde", "Suva", "Fiji")
	f("TON", "Jo", "PO Box 1", "Nuku'alofa", "Tonga")
	f("WSM", "Jo", "PO Box 1", "Apia", "Upolu")
	f("ASM", "Jo", "PO Box 1", "Pago Pago AS 96799", "American Samoa")
	f("NIU", "Jo", "PO Box 1", "Alofi", "Niue")
	f("TKL", "Jo", "Fakaofo", "Tokelau")
	f("PCN", "Jo", "Adamstown", "Pitcairn Islands")
	f("PNG", "Jo", "PO Box 1", "Port Moresby NCD 121", "PNG")
	// "Region, Country" and "postcode Country" on the last line
	f("DEU", "Jo", "Marienplatz 1", "80331 München", "Bavaria, Germany")
	f("DEU", "Jo", "Invalidenstr. 1", "10115 Germany")
	f("FRA", "Jo", "1 Rue de Rivoli", "75001 France")
	f("GBR", "Jo", "10 Downing St", "London SW1A 2AA", "England, United Kingdom")
	f("GBR", "Jo", "10 Downing St", "London SW1A 2AA United Kingdom")
	f("CAN", "Jo", "1 Main St", "Toronto", "Ontario, Canada")
	f("CAN", "Jo", "1 Government St", "Victoria BC V8W 1P6 Canada")
	f("USA", "Jo", "1 Main St", "Springfield", "Illinois, USA")
	f("NZL", "Jo", "1 Queen St", "Auckland Central", "Auckland, New Zealand")
	f("NZL", "Jo", "1 Queen St", "1010 New Zealand")
	f("PYF", "Jo", "BP 1", "Papeete", "Tahiti, French Polynesia")
	f("NLD", "Jo", "Damrak 1", "Noord-Holland, Nederland")
	f("ITA", "Jo", "Via del Corso 1", "00186 Roma, Italia")
	// names inverted at a comma, their article or title after them, the
	// way sorted lists write them; shorthand written out
	f("BHS", "Jo", "1 Bay St", "Nassau", "Bahamas, The")
	f("BHS", "Jo", "1 Bay St", "Nassau, Bahamas, The")
	f("BHS", "Jo", "1 Bay St", "Nassau", "Bahamas, Commonwealth of the")
	f("GMB", "Jo", "1 Main Rd", "Banjul", "Gambia, The")
	f("NLD", "Jo", "Damrak 1", "1012 LG Amsterdam", "Netherlands, The")
	f("NLD", "Jo", "Damrak 1", "1012 LG Amsterdam", "Netherlands, Kingdom of the")
	f("PHL", "Jo", "1 Ayala Ave", "Makati City", "Philippines, Republic of the")
	f("COD", "Jo", "1 Blvd du 30 Juin", "Kinshasa", "Congo, Democratic Republic of the")
	f("COD", "Jo", "1 Blvd du 30 Juin", "Kinshasa", "Congo, The Democratic Republic of the")
	f("COD", "Jo", "1 Blvd du 30 Juin", "Kinshasa, Congo, Democratic Republic of the")
	f("COG", "Jo", "1 Ave Foch", "Brazzaville", "Congo, Republic of the")
	f("PRK", "Jo", "1 Main St", "Pyongyang", "Korea, Democratic People's Republic of")
	f("KOR", "Jo", "1 Sejong-daero", "Seoul 04524", "Korea, Republic of")
	f("KOR", "Jo", "1 Sejong-daero", "Seoul 04524", "Korea, South")
	f("FSM", "Jo", "PO Box 1", "Kolonia", "Micronesia, Federated States of")
	f("IRN", "Jo", "1 Azadi St", "Tehran", "Iran, Islamic Republic of")
	f("TZA", "Jo", "PO Box 1", "Dodoma", "Tanzania, United Republic of")
	f("MDA", "Jo", "1 Stefan cel Mare", "Chisinau", "Moldova, Republic of")
	f("SAU", "Jo", "PO Box 1", "Riyadh 11564", "Saudi Arabia, Kingdom of")
	f("PSE", "Jo", "PO Box 1", "Ramallah", "Palestine, State of")
	f("MKD", "Jo", "1 Makedonija St", "1000 Skopje", "Macedonia, the former Yugoslav Republic of")
	f("SSD", "Jo", "PO Box 1", "Juba", "Sudan, South")
	f("ZAF", "Jo", "1 Long St", "Cape Town 8001", "Africa, South")
	f("TLS", "Jo", "PO Box 1", "Dili", "Timor, East")
	f("KNA", "Jo", "1 Bay Rd", "Basseterre", "St. Kitts & Nevis")
	f("SPM", "Jo", "1 Rue Borda", "97500 Saint-Pierre", "St. Pierre & Miquelon")
	f("STP", "Jo", "PO Box 1", "Sao Tome", "Sao Tome & Principe")
	f("VCT", "Jo", "1 Bay St", "Kingstown", "St. Vincent & the Grenadines")
	f("SLB", "Jo", "PO Box 1", "Honiara", "Solomon Is")
	f("COK", "Jo", "PO Box 1", "Avarua", "Cook Is")
	f("CYM", "Jo", "1 Harbour Dr", "George Town", "Cayman Is")
	f("FLK", "Jo", "1 Ross Rd", "Stanley FIQQ 1ZZ", "Falkland Is")
	f("VIR", "Jo", "1 Main St", "Charlotte Amalie", "Virgin Is (US)")
	f("VGB", "Jo", "1 Main St", "Road Town", "Virgin Is (UK)")
	f("CHN", "Jo", "1 Chang'an Ave", "Beijing 100000", "P.R.C.")
	f("CHN", "Jo", "1 Chang'an Ave", "Beijing 100000", "P.R. China")
	f("REU", "Jo", "1 Rue de Paris", "97400 Saint-Denis", "Reunion Island")
	f("ISL", "Jo", "Laugavegur 1", "101 Reykjavík", "Island")
	f("MAC", "Jo", "1 Avenida de Almeida Ribeiro", "Macao SAR China")
	f("HKG", "Jo", "1 Queen's Rd", "Central", "Hong Kong SAR")
	f("LAO", "Jo", "PO Box 1", "Vientiane", "Lao PDR")
	f("JEY", "Jo", "1 King St", "St Helier JE2 4WE", "Jersey, Channel Islands")
	f("GUF", "Jo", "1 Rue de Rémire", "97300 Cayenne", "Guyane")
	f("PNG", "Jo", "PO Box 1", "Port Moresby NCD 121", "Papua Niugini")
	f("THA", "Jo", "1 Sukhumvit Rd", "Bangkok 10110", "ประเทศไทย")
	f("ALB", "Jo", "Rruga e Durrësit 1", "1001 Tiranë", "Shqipëria")
	f("KHM", "Jo", "PO Box 1", "Phnom Penh", "Kampuchea")
	f("LKA", "Jo", "1 Galle Rd", "Colombo 3", "Ceylon")
	f("PSE", "Jo", "PO Box 1", "Gaza", "Palestinian Territories")
	f("ESH", "Jo", "PO Box 1", "Laayoune", "Sahrawi Arab Democratic Republic")
	// the country before its postal code, as Singapore and Monaco write
	// it (four digits stay an Australian postcode's)
	f("SGP", "Jo", "1 Raffles Pl", "Singapore 048616")
	f("MCO", "Jo", "1 Avenue de Monte-Carlo", "Monaco 98000")
	vf(inv, "AUS", "no state: postcode 6333 is in WA", "Jo", "1 Main Rd", "Denmark 6333")
	vf(inv, "AUS", "", "Jo", "1 Main Rd", "Singapore 6000")
	// territories by the shorthand of their names: international alone,
	// domestic under their state and postcode
	f("CXR", "Jo", "1 Main St", "Flying Fish Cove", "Christmas Is")
	f("CCK", "Jo", "1 Main St", "Home Island", "Cocos Is")
	vf(m, "AUS", "", "Jo", "1 Main St", "WA 6798", "Christmas Is")
	vf(m, "AUS", "", "Jo", "1 Main St", "NSW 2899", "Norfolk Is")
	vf(m, "AUS", "", "Jo", "1 Main St", "Home Island", "WA 6799", "Cocos (Keeling) Islands")
	if r := e.Check([]string{"Jo", "1 Main St", "Home Island", "WA 6799", "Cocos Is"}, false); r.Status == engine.StatusInternational {
		t.Errorf("Home Island / WA 6799 / Cocos Is: international %s, want domestic", r.Nation)
	}
	// more of the forms people write
	f("GBR", "Jo", "1 Main St", "Belfast BT1 1AA", "N. Ireland")
	f("GBR", "Jo", "1 Main St", "Belfast BT1 1AA", "Northern Ireland, U.K.")
	f("GBR", "Jo", "1 High St", "Edinburgh EH1 1YZ, Scotland")
	f("GBR", "Jo", "1 High St", "Cardiff CF10 1AA", "Wales, UK")
	f("ZAF", "Jo", "1 Long St", "Cape Town 8001", "RSA")
	f("DEU", "Jo", "Marienplatz 1", "80331 München", "Bayern, Deutschland")
	f("FRA", "Jo", "1 Rue de Rivoli", "75001 Paris, France")
	f("NLD", "Jo", "Damrak 1", "1012 LG Amsterdam, Netherlands, The")
	f("KOR", "Jo", "1 Sejong-daero", "Jongno-gu, Seoul 03172, Korea, Republic of")
	f("USA", "Jo", "1 Main St", "Honolulu HI 96813", "Hawaii")
	f("USA", "Jo", "1 Main St", "Honolulu, HI 96813, U.S.A.")
	f("CAN", "Jo", "1 Main St", "Montréal QC H2Y 1C6", "Québec, Canada")
	f("JPN", "Jo", "1-1 Marunouchi", "Chiyoda-ku, Tokyo 100-0005", "Nihon")
	f("IND", "Jo", "1 MG Road", "Bengaluru 560001", "Karnataka, India")
	f("HKG", "Jo", "1 Queen's Rd", "Central", "Hong Kong")
	f("IRL", "Jo", "1 O'Connell St", "Dublin D01 F5P2", "Republic of Ireland")
	f("NZL", "Jo", "1 Queen St", "Auckland 1010", "Aotearoa")
	f("PNG", "Jo", "PO Box 1", "Boroko 111", "NCD, Papua New Guinea")
	f("FJI", "Jo", "1 Victoria Pde", "Suva", "Fiji Is")
	f("WSM", "Jo", "PO Box 1", "Apia", "Samoa (Western)")
	f("ARE", "Jo", "PO Box 1", "Dubai", "U.A.E")
	f("TLS", "Jo", "1 Main Rd", "Dili", "Timor, East")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "Congo NSW 2537")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "NSW 2537", "Congo")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "NSW 2338", "Timor")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "NSW 2787", "Norway")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "VIC 3088", "St Helena")
	fs("international", "JPN", "", "Jo, 1-1 Chiyoda, Tokyo 100-0001, 日本")
	fs("international", "CHE", "", "Jo, Bahnhofstrasse 1, 8001 Zürich, Schweiz")

	// Australian localities that are, or end in, a country's name stay
	// domestic; so do Australia's own names in other languages, dropped
	vf(m, "AUS", "", "Jo", "1 Main Rd", "NSW 2372", "Bolivia")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "New Italy NSW 2472")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "NSW 2472", "New Italy")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "Scotland Island NSW 2105")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "NSW 2105", "Scotland Island")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "Canada Bay NSW 2046")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "Wagga Wagga", "New South Wales 2650")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "2650 Wagga Wagga", "New South Wales")
	vf(m, "AUS", "", "Jo", "10 Jones St", "Melbourne VIC 3000", "Australien")
	vf(m, "AUS", "", "Jo", "10 Jones St", "Melbourne VIC 3000", "Australie")
	vf(m, "AUS", "", "Jo", "10 Jones St", "Melbourne VIC 3000", "オーストラリア")
	vf(inv, "AUS", "", "Jo", "1 Main Rd", "New Italy")
	// ... and so do places whose names end in a word that reads as a
	// country or begins one inverted
	vf(m, "AUS", "", "Jo", "1 Main Rd", "Denmark WA 6333")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "WA 6333", "Denmark")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "Holland Park QLD 4121")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "QLD 4121", "Holland Park")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "Russell Island QLD 4184")
	vf(m, "AUS", "", "Jo", "1 Main Rd", "QLD 4184", "Russell Island")
	vf(inv, "AUS", "", "Jo", "1 Main Rd", "Russell Island")
	vf(inv, "AUS", "", "Jo", "1 Main Rd", "Phillip Island")
}

// TestClassEveryCountryNameInEveryLanguage (class 5): every name of every
// ISO 3166-1 country that the multilingual tables (i18n-iso-countries and
// iso-codes, every language they hold) and our variants give, alone on the
// last line, makes the address international with that country's code,
// but for the names the engine never reads as a country (a state's
// spelling, two or three Latin letters, an Australian locality's name) and
// the names of Australia, which are dropped.
func TestClassEveryCountryNameInEveryLanguage(t *testing.T) {
	e := newEngine(t, false)
	ref := e.Reference()
	locality := map[string]bool{}
	for _, l := range ref.Localities() {
		locality[l.Key] = true
	}
	codes := map[string]bool{}
	for _, c := range ref.Countries() {
		codes[c.Alpha3] = true
	}
	checked, skipped := 0, 0
	perCountry := map[string]int{}
	try := func(a3, name string) {
		k := engine.CanonicalLocality(name)
		if k == "" || locality[k] || (len(k) < 4 && strings.Trim(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZ ") == "") || !codes[a3] {
			skipped++
			return
		}
		lines := []string{"Jo Citizen", "1 Main St", name}
		r := e.Check(lines, false)
		if a3 == "AUS" {
			if r.Status == engine.StatusInternational {
				t.Errorf("%q (Australia): %s %s", name, r.Status, r.Nation)
			}
			return
		}
		checked++
		perCountry[a3]++
		if r.Status != engine.StatusInternational || (r.Nation != a3 && !sameName(ref, r.Nation, k)) {
			t.Errorf("%q: %s %s, want international %s", name, r.Status, r.Nation, a3)
		}
	}
	data := worldNamesForTest(ref)
	for _, n := range data {
		try(n[0], n[1])
	}
	t.Logf("%d names checked, %d skipped, %d countries", checked, skipped, len(perCountry))
	if checked < 30_000 {
		t.Errorf("only %d names checked", checked)
	}
	// every current ISO 3166-1 country but Australia has names in other
	// languages
	for _, c := range ref.Countries() {
		if !c.Former && c.Alpha3 != "AUS" && perCountry[c.Alpha3] == 0 {
			t.Errorf("%s %s: no name in another language", c.Alpha3, c.Name)
		}
	}
}

// sameName reports whether the canonical name k is also one of the names
// the index gives country a3 (an English name that another country's
// translation shares wins).
func sameName(ref *engine.Reference, a3, k string) bool {
	for _, c := range ref.Countries() {
		if c.Alpha3 != a3 {
			continue
		}
		for _, n := range append(c.Names, c.Alpha3) {
			if engine.CanonicalLocality(n) == k {
				return true
			}
		}
	}
	return false
}

// TestClassCountryNamesLeaveLocalitiesAlone (class 5): with the country
// names of every language loaded, every G-NAF and GeoNames locality,
// written with its state and postcode on the line above it (the last line
// is then the locality alone), is still read as the Australian locality.
func TestClassCountryNamesLeaveLocalitiesAlone(t *testing.T) {
	e := newEngine(t, false)
	intl := 0
	for _, l := range e.Reference().Localities() {
		if l.BoxOnly {
			continue
		}
		lines := []string{"Jo Citizen", "12 Example St", l.State.String() + " " + fmt.Sprintf("%04d", l.Postcode), l.Name}
		if r := e.Check(lines, false); r.Status == engine.StatusInternational {
			if intl++; intl <= 20 {
				t.Errorf("%q: international %s", lines, r.Nation)
			}
		}
	}
	if intl > 0 {
		t.Errorf("%d localities read as countries", intl)
	}
}

// worldNamesForTest lists the multilingual country names (package data's
// table and the translations the index was built with, less the names two
// countries share) and the variants as (alpha-3, name) pairs.
func worldNamesForTest(ref *engine.Reference) [][2]string {
	var all [][2]string
	data.CountryNamesInLanguages(func(a3, name string) { all = append(all, [2]string{a3, name}) })
	for _, c := range ref.Countries() {
		if !c.Former {
			for _, n := range c.Translated { // iso-codes', read into the index when it was built
				all = append(all, [2]string{c.Alpha3, n})
			}
		}
	}
	// a name two countries share names neither (a translator's slip
	// gives Afghanistan the name of Pakistan)
	codes := map[string]map[string]bool{}
	for _, n := range all {
		k := engine.CanonicalLocality(n[1])
		if codes[k] == nil {
			codes[k] = map[string]bool{}
		}
		codes[k][n[0]] = true
	}
	var out [][2]string
	for _, n := range all {
		if len(codes[engine.CanonicalLocality(n[1])]) == 1 {
			out = append(out, n)
		}
	}
	for _, v := range data.CountryVariants {
		for _, n := range v.Names {
			out = append(out, [2]string{v.Alpha3, n})
		}
	}
	return out
}

// TestClassFixtureOnOneLine (classes 1, 3 and 8): every live address of
// the G-NAF fixture, its parts run together on one line under two
// recipient lines ("SUITE 4 GROUND BELCONNEN TOWERS 1 BENJAMIN WAY
// BELCONNEN ACT 2617", "431 ST KILDA RD MELBOURNE VIC 3004"), is matched
// at premise level, and with its state and postcode on a line of their
// own too; so it is with the postcode alone below the rest, and with the
// state and postcode on a line above the street and the locality last
// (issue 13's leftovers).
func TestClassFixtureOnOneLine(t *testing.T) {
	rows := readFixture(t)
	e := streetEngine(t, rows)
	n := 0
	for _, a := range rows {
		if a["DATE_RETIRED"] != "" || a["ALIAS_PRINCIPAL"] == "A" {
			continue
		}
		one := strings.ReplaceAll(a["ADDRESS"], ", ", " ")
		tail := " " + a["STATE"] + " " + a["POSTCODE"]
		street := strings.TrimSuffix(one, " "+a["LOCALITY_NAME"]+tail)
		if street == one {
			t.Fatalf("%q does not end with its locality, state and postcode", a["ADDRESS"])
		}
		for _, lines := range [][]string{
			{"Jo Citizen", "Acme Pty Ltd", one},
			{"Jo Citizen", strings.TrimSuffix(one, tail), strings.TrimPrefix(tail, " ")},
			{"Jo Citizen", strings.TrimSuffix(one, " "+a["POSTCODE"]), a["POSTCODE"]},
			{"Jo Citizen", a["STATE"] + " " + a["POSTCODE"], street, a["LOCALITY_NAME"]},
		} {
			n++
			r := e.Check(lines, true)
			if r.Status != engine.StatusMatched || r.Detail.Granularity != engine.GranularityPremise {
				t.Errorf("%q: %s %s %q %v", lines, r.Status, r.Detail.Granularity, r.Message, r.Detail.Faults)
			}
		}
	}
	if n < 120 {
		t.Errorf("only %d cases", n)
	}
}

// TestClassStateEndsStreetLine (issue 13, leftover of class 2): the
// street, the locality and the state on one line, the postcode alone on
// the next ("10 JONES ST MELBOURNE VIC" / "3000"), in every state, is
// judged as "10 JONES ST" / "MELBOURNE VIC 3000" is.
func TestClassStateEndsStreetLine(t *testing.T) {
	e := newEngine(t, false)
	f := suggestCase(t, e)
	vf, _ := verdictCase(t, e)
	m, u, inv := "matched", "unmatched", "invalid"

	f(m, "", "Jo Citizen", "10 Jones St Melbourne VIC", "3000")
	f(m, "", "Jo Citizen", "100 George St Sydney NSW", "2000")
	f(m, "", "Jo Citizen", "1 Queen St Brisbane City QLD", "4000")
	f(m, "", "Jo Citizen", "1 King William St Adelaide SA", "5000")
	f(m, "", "Jo Citizen", "25 St Georges Tce Perth WA", "6000")
	f(m, "", "Jo Citizen", "99 Macquarie St Hobart TAS", "7000")
	f(m, "", "Jo Citizen", "1 Mitchell St Darwin City NT", "0800")
	f(m, "", "Jo Citizen", "10 Lonsdale St Braddon ACT", "2612")
	f(m, "", "Jo Citizen", "10 Todd St Alice Springs NT", "0870")
	f(m, "", "Jo Citizen", "14 Market St Fremantle WA", "6160")
	f(m, "", "Jo Citizen", "10 Brisbane St Launceston TAS", "7250")
	f(m, "", "Jo Citizen", "1 Church St Parramatta NSW", "2150")
	f(m, "", "Jo Citizen", "12 Cavill Ave Surfers Paradise QLD", "4217")
	f(m, "", "Jo Citizen", "100 Miller St North Sydney N.S.W.", "2060")
	f(m, "", "Jo Citizen", "10 Jones St Melbourne Victoria", "3000")
	f(m, "", "Jo Citizen", "10 Jones St Melbourne, VIC", "3000")
	f(m, "", "Jo Citizen", "Unit 2 10 Jones St Melbourne VIC", "3000")
	f(m, "", "Jo Citizen", "3/72 Charles St St Kilda VIC", "3182")
	f(m, "", "Jo Citizen", "Jones St Melbourne VIC", "3000")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "10 Jones St Melbourne VIC", "3000")
	f(m, "", "Jo Citizen", "10 Jones St Melbourne VIC", "3000", "Australia")
	f(m, "", "Jo Citizen", "Acme Pty Ltd", "PO Box 12 Melbourne VIC", "3000")
	f(m, "", "Jo Citizen", "GPO Box 1234 Sydney NSW", "2001")
	// the locality misspelt or at another postcode: unmatched, corrected
	f(u, "MELBOURNE VIC 3000", "Jo Citizen", "10 Jones St Melborne VIC", "3000")
	f(u, "PARRAMATTA NSW 2150", "Jo Citizen", "1 Church St Paramatta NSW", "2150")
	f(u, "LAUNCESTON TAS 7250", "Jo Citizen", "10 Brisbane St Launceston TAS", "7000")
	f(u, "FITZROY VIC 3065", "Jo Citizen", "Unit 2 22 Smith St Fitzroy VIC", "3000")
	// wrong as written: said so, as for the usual layout
	vf(inv, "AUS", "postcode 3000 is in VIC, not NSW", "Jo Citizen", "10 Jones St Melbourne NSW", "3000")
	vf(inv, "AUS", "postcode 2000 is in NSW, not QLD", "Jo Citizen", "100 George St Sydney QLD", "2000")
	vf(inv, "AUS", "no locality (suburb or town) before the state and postcode: line 2 (10 JONES ST)", "Jo Citizen", "10 Jones St VIC", "3000")
	vf(inv, "AUS", "no locality (suburb or town) before the state and postcode: line 2 (10 JONES ST)", "Jo Citizen", "10 Jones St", "VIC 3000")
	// the locality on its line with the state, the postcode below: as before
	f(m, "", "Jo Citizen", "10 Jones St", "Melbourne VIC", "3000")
	f(m, "", "Jo Citizen", "100 George St", "Sydney NSW", "2000")
	f(u, "MELBOURNE VIC 3000", "Jo Citizen", "10 Jones St", "Melborne VIC", "3000")

	// the detail reads the street as the street
	d := e.Check([]string{"Jo", "Unit 2 10 Jones St Melbourne VIC", "3000"}, true).Detail
	if d.FlatNumber != "2" || d.NumberFirst != "10" || d.StreetName != "JONES" || d.Locality != "MELBOURNE" || d.State != "VIC" || d.Postcode != "3000" {
		t.Errorf("Unit 2 10 Jones St Melbourne VIC / 3000: detail %+v", d)
	}
}

// TestClassStreetNamedAlone (issue 13, leftover of class 4): a street that
// G-NAF records without a street type ("KINGSWAY", "THE KINGSWAY",
// "AVENUE OF HONOUR"; STREET_TYPE_CODE empty or its placeholder NULL)
// written without a number is the delivery line when the street level
// knows it at that postcode, and with a number it is read as the street
// on a line with a misspelt locality too; where nothing knows it, the
// message says which line was read as a name.
func TestClassStreetNamedAlone(t *testing.T) {
	es := classStreetEngine(t, []classPoint{
		{number: "1", street: "KINGSWAY", locality: "GLEN WAVERLEY", state: "VIC", postcode: "3150"},
		{number: "3", street: "KINGSWAY", typ: "NULL", locality: "GLEN WAVERLEY", state: "VIC", postcode: "3150"},
		{number: "10", street: "THE KINGSWAY", locality: "CRONULLA", state: "NSW", postcode: "2230"},
		{number: "580", street: "THE KINGSWAY", locality: "MIRANDA", state: "NSW", postcode: "2228"},
		{number: "10", street: "AVENUE OF HONOUR", locality: "BACCHUS MARSH", state: "VIC", postcode: "3340"},
		{number: "5", street: "BROADWAY", locality: "NEDLANDS", state: "WA", postcode: "6009"},
		{number: "100", street: "THE ESPLANADE", locality: "CAIRNS CITY", state: "QLD", postcode: "4870"},
		{number: "1", street: "MONASH", typ: "DRIVE", locality: "MOUNT WAVERLEY", state: "VIC", postcode: "3149"},
	})
	f := func(status string, gran engine.Granularity, last string, lines ...string) {
		t.Helper()
		r := es.Check(lines, true)
		if r.Status.String() != status || r.Detail.Granularity != gran {
			t.Errorf("%q: %s %s %v %q, want %s %s", lines, r.Status, r.Detail.Granularity, r.Detail.Faults, r.Message, status, gran)
			return
		}
		if q := es.Check(lines, false); q.Status != r.Status || q.Message != r.Message {
			t.Errorf("%q: %s %q without detail, %s %q with", lines, q.Status, q.Message, r.Status, r.Message)
		}
		if last != "" && (len(r.Detail.Suggestion) == 0 || r.Detail.Suggestion[len(r.Detail.Suggestion)-1] != last) {
			t.Errorf("%q: suggestion %q, want one ending %q", lines, r.Detail.Suggestion, last)
		}
		if status != "invalid" {
			for _, rc := range r.Detail.Recipients {
				if strings.Contains(rc, "KINGSWAY") || strings.Contains(rc, "HONOUR") {
					t.Errorf("%q: the street line %q among the recipients", lines, rc)
				}
			}
		}
	}
	m, u, inv := "matched", "unmatched", "invalid"
	S, P, none := engine.GranularityStreet, engine.GranularityPremise, engine.Granularity("")

	// the street named alone, the line nearest the locality
	f(m, S, "", "Jo Citizen", "Kingsway", "Glen Waverley VIC 3150")
	f(m, S, "", "Jo Citizen", "KINGSWAY", "GLEN WAVERLEY VIC 3150")
	f(m, S, "", "Jo Citizen", "Acme Pty Ltd", "Kingsway", "Glen Waverley VIC 3150")
	f(m, S, "", "Jo Citizen", "Level 2", "Kingsway", "Glen Waverley VIC 3150")
	f(m, S, "", "Jo Citizen", "The Kingsway", "Cronulla NSW 2230")
	f(m, S, "", "Jo Citizen", "The Kingsway", "Miranda NSW 2228")
	f(m, S, "", "Jo Citizen", "Avenue of Honour", "Bacchus Marsh VIC 3340")
	f(m, S, "", "Jo Citizen", "Kingsway", "Glen Waverley", "VIC 3150")
	f(m, S, "", "Jo Citizen", "Acme Pty Ltd", "Kingsway Glen Waverley VIC 3150")
	f(m, S, "", "Jo Citizen", "The Kingsway Cronulla", "NSW 2230")
	// numbered, as before, and a point whose street G-NAF typed NULL
	f(m, P, "", "Jo Citizen", "1 Kingsway", "Glen Waverley VIC 3150")
	f(m, P, "", "Jo Citizen", "3 Kingsway", "Glen Waverley VIC 3150")
	f(m, P, "", "Jo Citizen", "Acme Pty Ltd", "3 Kingsway Glen Waverley VIC 3150")
	f(m, P, "", "Jo Citizen", "580 The Kingsway", "Miranda NSW 2228")
	f(m, P, "", "Jo Citizen", "Acme Pty Ltd", "10 Avenue of Honour Bacchus Marsh VIC 3340")
	f(m, P, "", "Jo Citizen", "5 Broadway", "Nedlands WA 6009")
	f(m, P, "", "Jo Citizen", "100 The Esplanade", "Cairns City QLD 4870")
	// the locality misspelt: the street is still the street
	f(u, none, "GLEN WAVERLEY VIC 3150", "Jo Citizen", "Acme Pty Ltd", "1 Kingsway Glen Waverly VIC 3150")
	f(u, none, "GLEN WAVERLEY VIC 3150", "Jo Citizen", "1 Kingsway Glen Waverly", "VIC 3150")
	f(u, none, "CRONULLA NSW 2230", "Jo Citizen", "Acme Pty Ltd", "10 The Kingsway Cronula NSW 2230")
	f(u, none, "BACCHUS MARSH VIC 3340", "Jo Citizen", "Acme Pty Ltd", "10 Avenue of Honour Bacchus Marh VIC 3340")
	f(u, none, "GLEN WAVERLEY VIC 3150", "Jo Citizen", "Kingsway", "Glen Waverly VIC 3150")
	f(u, none, "MIRANDA NSW 2228", "Jo Citizen", "The Kingsway", "Miranda NSW 2000")
	// what is not there is unmatched, or no delivery line
	f(u, S, "", "Jo Citizen", "7 Kingsway", "Glen Waverley VIC 3150")
	f(inv, none, "", "Jo Citizen", "Kingsway", "Mount Waverley VIC 3149")
	f(inv, none, "", "Jo Citizen", "Monash", "Mount Waverley VIC 3149")
	if r := es.Check([]string{"Jo Citizen", "Kingsway", "Mount Waverley VIC 3149"}, false); !strings.Contains(r.Message, "line 2 (KINGSWAY) reads as a name") {
		t.Errorf("Kingsway in Mount Waverley: %q", r.Message)
	}

	// How G-NAF may record a street without a type, and how the parser
	// reads it, are one key.
	k := func(name, typ, suffix, want string) {
		t.Helper()
		if got, ok := engine.StreetKey(name, typ, suffix); !ok || got != want {
			t.Errorf("StreetKey(%q, %q, %q) = %q, want %q", name, typ, suffix, got, want)
		}
	}
	k("KINGSWAY", "", "", "KINGSWAY||")
	k("KINGSWAY", "NULL", "", "KINGSWAY||")
	k("Kingsway", "null", "", "KINGSWAY||")
	k("THE KINGSWAY", "NULL", "", "THE KINGSWAY||")
	k("THE ESPLANADE", "", "", "THE|ESPLANADE|")
	k("THE ESPLANADE", "NULL", "", "THE|ESPLANADE|")
	k("THE", "ESPLANADE", "", "THE|ESPLANADE|")
	k("THE ESPLANADE", "", "N", "THE|ESPLANADE|N")
	k("AVENUE OF HONOUR", "NULL", "", "AVENUE OF HONOUR||")

	// Without a street level nothing knows the street: the line read as
	// a name is named, and a misspelt locality after a numbered street
	// that has no type is still corrected.
	e := newEngine(t, false)
	vf, _ := verdictCase(t, e)
	sf := suggestCase(t, e)
	vf(inv, "AUS", "line 2 (KINGSWAY) reads as a name, not a street", "Jo Citizen", "Kingsway", "Glen Waverley VIC 3150")
	vf(inv, "AUS", "line 2 (THE KINGSWAY) reads as a name, not a street", "Jo Citizen", "The Kingsway", "Cronulla NSW 2230")
	vf(inv, "AUS", "line 2 (ACME PTY LTD) reads as a name, not a street", "Jo Citizen", "Acme Pty Ltd", "Raymond Terrace NSW 2324")
	sf(m, "", "Jo Citizen", "1 Kingsway", "Glen Waverley VIC 3150")
	sf(m, "", "Jo Citizen", "Acme Pty Ltd", "1 Kingsway Glen Waverley VIC 3150")
	sf(u, "GLEN WAVERLEY VIC 3150", "Jo Citizen", "Acme Pty Ltd", "1 Kingsway Glen Waverly VIC 3150")
	sf(u, "GLEN WAVERLEY VIC 3150", "Jo Citizen", "1 Kingsway Glen Waverly", "VIC 3150")
	sf(u, "CRONULLA NSW 2230", "Jo Citizen", "Acme Pty Ltd", "10 The Kingsway Cronula NSW 2230")
	sf(u, "BACCHUS MARSH VIC 3340", "Jo Citizen", "Acme Pty Ltd", "10 Avenue of Honour Bacchus Marh VIC 3340")
	sf(u, "NEDLANDS WA 6009", "Jo Citizen", "Acme Pty Ltd", "5 Broadway Nedland WA 6009")
	if d := e.Check([]string{"Jo", "Acme", "1 Kingsway Glen Waverly VIC 3150"}, true).Detail; d.StreetName != "KINGSWAY" || d.NumberFirst != "1" || d.Locality != "GLEN WAVERLY" {
		t.Errorf("1 Kingsway Glen Waverly: street %q number %q locality %q", d.StreetName, d.NumberFirst, d.Locality)
	}
}

// TestClassStateAndPostcodeAboveStreet (issue 13, leftover of class 6):
// the state and postcode on a line of their own above the street, the
// locality last ("NSW 2000" / "12 GEORGE ST" / "SYDNEY"), as some forms
// print them. The contract reads the state and postcode wherever the
// client put them and trusts no line break; nothing in this layout is
// wrong as written, and the same words with the street and locality on
// one line were already matched. So it is judged as "12 GEORGE ST" /
// "SYDNEY NSW 2000" is: matched when everything agrees, unmatched with
// the corrected address, invalid for what is wrong as written; the state
// and postcode line is neither a recipient nor a line of the correction.
func TestClassStateAndPostcodeAboveStreet(t *testing.T) {
	e := newEngine(t, false)
	f := suggestCase(t, e)
	vf, _ := verdictCase(t, e)
	m, u, inv := "matched", "unmatched", "invalid"

	f(m, "", "Jo Citizen", "NSW 2000", "12 George St", "Sydney")
	f(m, "", "Jo Citizen", "2000 NSW", "12 George St", "Sydney")
	f(m, "", "Jo Citizen", "VIC 3000", "12 Jones St", "Melbourne")
	f(m, "", "Jo Citizen", "Acme", "QLD 4000", "1 Queen St", "Brisbane City")
	f(m, "", "Jo Citizen", "SA 5000", "1 King William St", "Adelaide")
	f(m, "", "Jo Citizen", "WA 6000", "25 St Georges Tce", "Perth")
	f(m, "", "Jo Citizen", "TAS 7000", "99 Macquarie St", "Hobart")
	f(m, "", "Jo Citizen", "NT 0800", "1 Mitchell St", "Darwin City")
	f(m, "", "Jo Citizen", "ACT 2612", "10 Lonsdale St", "Braddon")
	f(m, "", "Jo Citizen", "New South Wales 2150", "1 Church St", "Parramatta")
	f(m, "", "NSW 2000", "12 George St", "Sydney")
	f(m, "", "Jo Citizen", "VIC 3182", "Unit 2", "3/72 Charles St", "St Kilda")
	f(m, "", "Jo Citizen", "NSW 2000", "PO Box 123", "Sydney")
	f(m, "", "Jo Citizen", "ACT 2600", "Parliament Drive", "Canberra")
	// misspelt or at another postcode: unmatched with the address corrected
	f(u, "SYDNEY NSW 2000", "Jo Citizen", "NSW 2000", "12 George St", "Sydny")
	f(u, "PARRAMATTA NSW 2150", "Jo Citizen", "NSW 2000", "1 Church St", "Parramatta")
	f(u, "MELBOURNE VIC 3000", "Jo Citizen", "3000 VIC", "12 Jones St", "Melborne")
	// wrong as written: said so
	vf(inv, "AUS", "postcode 2000 is in NSW, not VIC", "Jo Citizen", "VIC 2000", "12 George St", "Sydney")
	vf(inv, "AUS", "no street or postal delivery line above the locality", "Jo Citizen", "NSW 2000", "Acme Pty Ltd", "Sydney")
	vf(inv, "AUS", "the street or postal delivery line (12 GEORGE ST) is line 5, below the locality", "Jo Citizen", "Acme", "NSW 2000", "Sydney", "12 George St")

	// the state and postcode line is no recipient and no line of the
	// suggestion
	d := e.Check([]string{"Jo Citizen", "NSW 2000", "12 George St", "Sydny"}, true).Detail
	if !slices.Equal(d.Recipients, []string{"JO CITIZEN"}) || !slices.Equal(d.Suggestion, []string{"JO CITIZEN", "12 GEORGE ST", "SYDNEY NSW 2000"}) {
		t.Errorf("NSW 2000 / 12 George St / Sydny: recipients %q suggestion %q", d.Recipients, d.Suggestion)
	}
	d = e.Check([]string{"Jo Citizen", "NSW 2000", "12 George St Sydney"}, true).Detail
	if !slices.Equal(d.Recipients, []string{"JO CITIZEN"}) || d.State != "NSW" || d.Postcode != "2000" || d.NumberFirst != "12" {
		t.Errorf("NSW 2000 / 12 George St Sydney: detail %+v", d)
	}
}

// classStreetListEngine builds an engine whose reference holds the given
// real localities with a complete street level of streets alone, without
// address points, as Brisbane's open street list gives them (name, type
// as the list writes it, "NA" for none; locality, state, postcode).
func classStreetListEngine(t *testing.T, streets [][5]string) *engine.Engine {
	t.Helper()
	rb := engine.NewReferenceBuilder()
	sb := engine.NewStreetsBuilder()
	seen := map[string]bool{}
	for _, r := range streets {
		name, typ, locality, state, postcode := r[0], r[1], r[2], r[3], r[4]
		st, _ := engine.StateByAbbr(state)
		pc, _ := engine.ParsePostcode(postcode)
		if !seen[locality] {
			seen[locality] = true
			if _, err := rb.AddLocality(engine.Locality{Name: locality, State: st, Postcode: pc, Sources: engine.SourceGNAF}); err != nil {
				t.Fatal(err)
			}
		}
		g := sb.Group("list:"+locality+"|"+state, true)
		if err := sb.Link(g, locality, state, postcode); err != nil {
			t.Fatal(err)
		}
		if _, err := sb.Street(g, name, typ, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	return attachedEngine(t, rb, sb.Build())
}

// TestClassStreetListWithoutNumbers (classes 1, 2 and 4 at street level):
// where the reference knows a locality's streets but not their numbers, a
// building's name before the unit and number on the street line is read
// past ("KINGS ROW UNIT 3 22 ZIG ZAG ST": the street is confirmed, as it
// is at premise level), and a street the list writes with the placeholder
// type NA ("THE DRIVE", NA) is the street "THE DRIVE" written.
func TestClassStreetListWithoutNumbers(t *testing.T) {
	e := classStreetListEngine(t, [][5]string{
		{"ZIG ZAG", "Street", "RED HILL", "QLD", "4059"},
		{"LITTLE JANE", "Street", "WEST END", "QLD", "4101"},
		{"SKYRING", "Terrace", "NEWSTEAD", "QLD", "4006"},
		{"CLIFTON", "Street", "PETRIE TERRACE", "QLD", "4000"},
		{"ADELAIDE", "Street", "BRISBANE CITY", "QLD", "4000"},
		{"EAGLE", "Street", "BRISBANE CITY", "QLD", "4000"},
		{"EAGLE", "Terrace", "BRISBANE CITY", "QLD", "4000"},
		{"BLACKALL", "Terrace", "EAST BRISBANE", "QLD", "4169"},
		{"LYTTON", "Road", "MORNINGSIDE", "QLD", "4170"},
		{"ANN", "Street", "FORTITUDE VALLEY", "QLD", "4006"},
		{"THE DRIVE", "NA", "BARDON", "QLD", "4065"},
		{"THE ESPLANADE", "NA", "ASHGROVE", "QLD", "4060"},
		{"THE CORSO", "NA", "SEVEN HILLS", "QLD", "4170"},
		{"THE PROMENADE", "N/A", "CAMP HILL", "QLD", "4152"},
	})
	f := func(status string, gran engine.Granularity, building string, lines ...string) {
		t.Helper()
		r := e.Check(lines, true)
		if r.Status.String() != status || (gran != "" && r.Detail.Granularity != gran) {
			t.Errorf("%q: %s %s %v, want %s %s (detail %+v)", lines, r.Status, r.Detail.Granularity, r.Detail.Faults, status, gran, r.Detail)
		}
		if q := e.Check(lines, false); q.Status != r.Status {
			t.Errorf("%q: %s without detail, %s with", lines, q.Status, r.Status)
		}
		if building != "" && r.Detail.Building != building {
			t.Errorf("%q: building %q, want %q", lines, r.Detail.Building, building)
		}
	}
	m, u, S := "matched", "unmatched", engine.GranularityStreet

	// a building before the unit, level or number (before: unmatched,
	// STREET_NOT_FOUND, the building read into the street's name)
	f(m, S, "KINGS ROW", "Jo", "Acme", "Kings Row Unit 3 22 Zig Zag St Red Hill QLD 4059")
	f(m, S, "KINGS ROW", "Jo", "Kings Row Unit 3 22 Zig Zag St Red Hill", "QLD 4059")
	f(m, S, "KINGS ROW", "Jo", "Kings Row, Unit 3, 22 Zig Zag St", "Red Hill QLD 4059")
	f(m, S, "KINGS ROW", "Jo", "Kings Row 22 Zig Zag St", "Red Hill QLD 4059")
	f(m, S, "THE OAKS APARTMENTS", "Jo", "Acme", "The Oaks Apartments Unit 9 12 Blackall Tce East Brisbane QLD 4169")
	f(m, S, "RIVERSIDE CENTRE", "Jo", "Acme", "Riverside Centre Level 10 123 Eagle St Brisbane City QLD 4000")
	f(m, S, "RIVERSIDE CENTRE", "Jo", "Acme", "Riverside Centre, Level 10, 123 Eagle Street", "Brisbane City QLD 4000")
	f(m, S, "EMPORIUM", "Jo", "Acme", "Emporium Shop 12 1000 Ann St Fortitude Valley QLD 4006")
	f(m, S, "GASWORKS", "Jo", "Acme", "Gasworks Tenancy 4 76 Skyring Tce Newstead QLD 4006")
	f(m, S, "CENTRAL PLAZA", "Jo", "Acme", "Central Plaza Suite 2 Level 5 300 Adelaide St Brisbane City QLD 4000")
	f(m, S, "TRADECOAST", "Jo", "Acme", "Tradecoast Warehouse 3 100 Lytton Rd Morningside QLD 4170")
	// units, levels and plain numbers as before
	f(m, S, "", "Jo", "Acme", "Unit 4 22 Zig Zag St Red Hill QLD 4059")
	f(m, S, "", "Jo", "Acme", "Flat 2 5 Little Jane St West End QLD 4101")
	f(m, S, "", "Jo", "Acme", "Suite 301, Level 3, 10 Skyring Terrace Newstead QLD 4006")
	f(m, S, "", "Jo", "Acme", "Level 2 14 Clifton St Petrie Terrace QLD 4000")
	f(m, S, "", "Jo", "14 Clifton St Petrie Terrace", "QLD 4000")
	f(m, S, "", "Jo", "Acme", "Clifton St Petrie Terrace QLD 4000")
	f(m, S, "", "Jo", "Clifton Street", "Petrie Terrace QLD 4000")
	// the list's placeholder type NA (before: unmatched, STREET_NOT_FOUND)
	f(m, S, "", "Jo", "Acme", "Unit 2 10 The Drive Bardon QLD 4065")
	f(m, S, "", "Jo", "10 The Drive Bardon", "QLD 4065")
	f(m, S, "", "Jo", "The Drive", "Bardon QLD 4065")
	f(m, S, "", "Jo", "12 The Esplanade", "Ashgrove QLD 4060")
	f(m, S, "", "Jo", "The Corso", "Seven Hills QLD 4170")
	f(m, S, "", "Jo", "3 The Promenade", "Camp Hill QLD 4152")
	// what the list does not hold stays unmatched; the building's name is
	// read past only to find a street that is there
	f(u, "", "", "Jo", "Acme", "Unit 4 22 Zag Zig St Red Hill QLD 4059")
	f(u, "", "", "Jo", "Acme", "Unit 4 22 Zig Zag Rd Red Hill QLD 4059")
	f(u, "", "", "Jo", "Acme", "Kings Row Unit 3 22 Zig Zag Rd Red Hill QLD 4059")
	f(u, "", "", "Jo", "Acme", "Riverside Centre Level 10 123 Eagle Lane Brisbane City QLD 4000")
	f(u, "", "", "Jo", "10 The Drive", "Ashgrove QLD 4060")
	f(u, "", "", "Jo", "Acme", "Kings Row Unit 3 22 Zig Zag St Red Hil QLD 4059")
	f(u, "", "", "Jo", "Acme", "The Oaks Apartments Unit 9 12 Blackall Tce East Brisbane QLD 4000")
}

// TestClassBuildingAndLotWrittenOtherwise (class 8): the building, lot
// and unit of a premise written in the other ways people write them: a
// lot glued to its number ("LOT68", before: read as a flat, matched at
// street level only), a flat and number after the building ("PARK VIEW
// APARTMENTS, 5/20 MAIN ST", before: unmatched), building names holding a
// street type, a unit or level word, a number or ST.
func TestClassBuildingAndLotWrittenOtherwise(t *testing.T) {
	pts := []classPoint{
		{building: "CONDAMINE HOMESTEAD", lot: "68", street: "ESSEX", typ: "ROAD", locality: "HAT HEAD", state: "NSW", postcode: "2440"},
		{building: "KURRAJONG PARK", lot: "95", street: "PLUM", typ: "COURT", locality: "CUDAL", state: "NSW", postcode: "2864"},
		{building: "ESSEX COURT", lot: "7", street: "ESSEX", typ: "ROAD", locality: "HAT HEAD", state: "NSW", postcode: "2440"},
		{building: "THE GROVE", lot: "12", street: "MAIN", typ: "STREET", locality: "CUDAL", state: "NSW", postcode: "2864"},
		{building: "BIG 4 HOLIDAY PARK", number: "1", street: "OCEAN", typ: "PARADE", locality: "CUDAL", state: "NSW", postcode: "2864"},
		{building: "ST JOHNS HOMESTEAD", lot: "3", street: "MAIN", typ: "STREET", locality: "CUDAL", state: "NSW", postcode: "2864"},
		{building: "LEVEL CROSSING FARM", lot: "4", street: "MAIN", typ: "STREET", locality: "CUDAL", state: "NSW", postcode: "2864"},
		{building: "UNIT VALLEY", lot: "9", street: "MAIN", typ: "STREET", locality: "CUDAL", state: "NSW", postcode: "2864"},
		{building: "NORTH RIDGE", lot: "21", street: "SMITH", typ: "ROAD", locality: "CUDAL", state: "NSW", postcode: "2864"},
		{building: "MOUNT VIEW", lot: "22", street: "MOUNT", typ: "ROAD", locality: "CUDAL", state: "NSW", postcode: "2864"},
		{building: "RIVERSIDE", flat: "3", number: "10", street: "MAIN", typ: "STREET", locality: "CUDAL", state: "NSW", postcode: "2864"},
		{building: "PARK VIEW APARTMENTS", flat: "5", number: "20", street: "MAIN", typ: "STREET", locality: "CUDAL", state: "NSW", postcode: "2864"},
		{lot: "68", number: "120", street: "ESSEX", typ: "ROAD", locality: "HAT HEAD", state: "NSW", postcode: "2440"},
	}
	e := classStreetEngine(t, pts)
	f := func(status string, lines ...string) {
		t.Helper()
		r := e.Check(lines, true)
		if r.Status.String() != status || (status == "matched" && r.Detail.Granularity != engine.GranularityPremise) {
			t.Errorf("%q: %s %s %v, want %s (detail %+v)", lines, r.Status, r.Detail.Granularity, r.Detail.Faults, status, r.Detail)
		}
	}
	m := "matched"
	if d := e.Check([]string{"Jo", "Lot68 Essex Rd", "Hat Head NSW 2440"}, true).Detail; d.Lot != "68" || d.FlatType != "" {
		t.Errorf("Lot68: lot %q flat %q %q", d.Lot, d.FlatType, d.FlatNumber)
	}
	if d := e.Check([]string{"Jo", "PARK VIEW APARTMENTS, 5/20 MAIN ST", "CUDAL NSW 2864"}, true).Detail; d.Building != "PARK VIEW APARTMENTS" || d.FlatNumber != "5" || d.NumberFirst != "20" {
		t.Errorf("5/20 after the building: building %q flat %q number %q", d.Building, d.FlatNumber, d.NumberFirst)
	}
	f(m, "Jo", "CONDAMINE HOMESTEAD, LOT 68, ESSEX RD", "HAT HEAD NSW 2440")
	f(m, "Jo", "Condamine Homestead Lot 68 Essex Road Hat Head NSW 2440", "Australia")
	f(m, "Jo", "Acme", "Condamine Homestead, Lot 68 Essex Road, Hat Head NSW 2440")
	f(m, "Jo", "Condamine Homestead", "Lot 68 Essex Road Hat Head", "NSW 2440")
	f(m, "Jo", "CONDAMINE HOMESTEAD,LOT 68 ESSEX RD", "HAT HEAD NSW 2440")
	f(m, "Jo", "CONDAMINE HOMESTEAD; LOT 68 ESSEX RD", "HAT HEAD NSW 2440")
	f(m, "Jo", "CONDAMINE HOMESTEAD (LOT 68) ESSEX RD", "HAT HEAD NSW 2440")
	f(m, "Jo", "LOT 68 ESSEX RD", "HAT HEAD NSW 2440")
	f(m, "Jo", "Lot68 Essex Rd", "Hat Head NSW 2440")
	f(m, "Jo", "KURRAJONG PARK, LOT 95 PLUM CT", "CUDAL NSW 2864")
	f(m, "Jo", "ESSEX COURT, LOT 7 ESSEX RD", "HAT HEAD NSW 2440")
	f(m, "Jo", "ESSEX COURT LOT 7 ESSEX RD", "HAT HEAD NSW 2440")
	f(m, "Jo", "THE GROVE, LOT 12 MAIN ST", "CUDAL NSW 2864")
	f(m, "Jo", "BIG 4 HOLIDAY PARK, 1 OCEAN PDE", "CUDAL NSW 2864")
	f(m, "Jo", "ST JOHNS HOMESTEAD, LOT 3 MAIN ST", "CUDAL NSW 2864")
	f(m, "Jo", "LEVEL CROSSING FARM, LOT 4 MAIN ST", "CUDAL NSW 2864")
	f(m, "Jo", "UNIT VALLEY, LOT 9 MAIN ST", "CUDAL NSW 2864")
	f(m, "Jo", "NORTH RIDGE, LOT 21 SMITH RD", "CUDAL NSW 2864")
	f(m, "Jo", "MOUNT VIEW, LOT 22 MOUNT RD", "CUDAL NSW 2864")
	f(m, "Jo", "RIVERSIDE, UNIT 3, 10 MAIN ST", "CUDAL NSW 2864")
	f(m, "Jo", "RIVERSIDE UNIT 3 10 MAIN ST", "CUDAL NSW 2864")
	f(m, "Jo", "Acme", "RIVERSIDE, UNIT 3, 10 MAIN ST CUDAL NSW 2864")
	f(m, "Jo", "PARK VIEW APARTMENTS, UNIT 5, 20 MAIN ST", "CUDAL NSW 2864")
	f(m, "Jo", "PARK VIEW APARTMENTS, 5/20 MAIN ST", "CUDAL NSW 2864")
	f(m, "Jo", "PARK VIEW APARTMENTS", "5/20 MAIN ST", "CUDAL NSW 2864")
	f(m, "Jo", "UNIT 5, PARK VIEW APARTMENTS, 20 MAIN ST", "CUDAL NSW 2864")
	f(m, "Jo", "UNIT 5 PARK VIEW APARTMENTS", "20 MAIN ST", "CUDAL NSW 2864")
	f(m, "Jo", "LOT 68, 120 ESSEX RD", "HAT HEAD NSW 2440")
	f(m, "Jo", "120 ESSEX RD", "HAT HEAD NSW 2440")
	f(m, "Jo", "Lot 68", "Essex Rd", "Hat Head NSW 2440")
	f(m, "Jo", "Lot68", "Essex Rd", "Hat Head NSW 2440")
	f("unmatched", "Jo", "CONDAMINE HOMESTEAD, LOT 68 ESSEX RD", "HAT HEAD NSW 2441")
	f("unmatched", "Jo", "PARK VIEW APARTMENTS, 6/20 MAIN ST", "CUDAL NSW 2864")
	f("unmatched", "Jo", "Lot69 Essex Rd", "Hat Head NSW 2440")
	f("unmatched", "Jo", "CONDAMINE HOMESTEAD, LOT 86 ESSEX RD", "HAT HEAD NSW 2440")
	f("unmatched", "Jo", "CONDAMINE HOMESTEAD, LOT 68 ESSEX RD", "HAT HED NSW 2440")
}
