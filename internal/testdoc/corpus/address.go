package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

var (
	firstNames = []string{"Jo", "Jane", "Michael", "Sarah", "David", "Emma", "James", "Olivia", "Liam", "Chloe",
		"Noah", "Mia", "Jack", "Ava", "William", "Grace", "Thomas", "Ruby", "Lachlan", "Isla",
		"Renée", "Zoë", "José", "Ngaio", "Anh", "Priya", "Mohammed", "Wei", "Siobhan", "Kiri"}
	surnames = []string{"Citizen", "Smith", "Brown", "Wilson", "Taylor", "Nguyen", "Jones", "Williams", "Martin", "Anderson",
		"O'Brien", "McDonald", "Kelly", "Walker", "White", "Harris", "Lee", "Ryan", "Thompson", "King",
		"Müller", "Papadopoulos", "Rossi", "Singh", "Chen", "Tran", "Kowalski", "Murphy", "Campbell", "Evans"}
	titles    = []string{"Mr", "Mrs", "Ms", "Dr", "Miss", "MR", "MS"}
	companies = []string{"Acme Pty Ltd", "Smith & Jones Pty Ltd", "Bluegum Dental", "Harbour Freight Co", "Koala Holdings Pty Ltd",
		"Southern Cross Plumbing", "The Corner Bakery", "Red Earth Mining Ltd", "Wattle Grove Pre-School", "Tasman Legal"}
	streets = []string{"Smith", "George", "High", "Main", "Victoria", "Church", "Park", "Station", "King", "Queen",
		"Railway", "Beach", "Bay View", "Hill", "Ocean", "Wattle", "Banksia", "Elizabeth", "Albert", "Macquarie",
		"Bourke", "Collins", "Pitt", "Hunter", "Flinders", "Anzac", "Kingsford Smith", "Riverside", "Mountain View", "Jacaranda"}
	streetTypes = []string{"St", "Street", "Rd", "Road", "Ave", "Avenue", "Pde", "Cres", "Ct", "Dr", "Tce", "Way", "Pl", "Lane", "Hwy", "Cl"}
	abroad      = [][]string{
		{"45 Queen Street", "Auckland 1010", "NEW ZEALAND"},
		{"10 Downing Street", "London SW1A 2AA", "UNITED KINGDOM"},
		{"Hauptstrasse 5", "10115 Berlin", "GERMANY"},
		{"8 Marina Boulevard", "Singapore 018981", "SINGAPORE"},
		{"350 Fifth Avenue", "New York NY 10118", "USA"},
		{"12 Rue de Rivoli", "75001 Paris", "FRANCE"},
		{"1-2-3 Ginza, Chuo-ku", "Tokyo 104-0061", "JAPAN"},
		{"200 Lambton Quay", "Wellington 6011", "NEW ZEALAND"},
	}
	// states' first postcode digit, for a postcode of another state.
	stateOf = map[string]string{"NSW": "2", "ACT": "2", "VIC": "3", "QLD": "4", "SA": "5", "WA": "6", "TAS": "7", "NT": "0"}
)

// recipient is what the window of a letter shows.
type recipient struct {
	Address               []string
	Verdict               string
	Ref, Email, Fax, SMS  string
	RefInk, ChannelInk    ink
	refStyle, channelMode string
}

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

func personName(r *rand.Rand) (string, string, string) {
	f, s := pick(r, firstNames), pick(r, surnames)
	switch r.IntN(6) {
	case 0:
		return fmt.Sprintf("%s %s. %s", pick(r, titles), f[:1], s), f, s
	case 1:
		return strings.ToUpper(fmt.Sprintf("%s %s %s", pick(r, titles), f[:1], s)), f, s
	case 2:
		return fmt.Sprintf("%s %s %s", pick(r, titles), f, s), f, s
	default:
		return f + " " + s, f, s
	}
}

// newAddress draws an address and the engine's verdict for it.
func newAddress(r *rand.Rand) ([]string, string, string, string) {
	name, first, last := personName(r)
	pl := pick(r, places)
	loc := pl.name
	if r.IntN(2) == 0 {
		loc = strings.ToUpper(loc)
	}
	street := fmt.Sprintf("%d %s %s", 1+r.IntN(250), pick(r, streets), pick(r, streetTypes))
	tail := fmt.Sprintf("%s %s %s", loc, pl.state, pl.postcode)
	var lines []string
	verdict := "matched"
	switch p := r.IntN(100); {
	case p < 34:
		lines = []string{name, street, tail}
	case p < 44:
		lines = []string{name, fmt.Sprintf("Unit %d", 1+r.IntN(40)), street, tail}
	case p < 54:
		lines = []string{name, fmt.Sprintf("%d/%s", 1+r.IntN(30), street), tail}
	case p < 61:
		lines = []string{pick(r, companies), "Attn: " + first + " " + last, street, tail}
	case p < 67:
		lines = []string{name, fmt.Sprintf("PO Box %d", 1+r.IntN(9999)), tail}
	case p < 72:
		lines = []string{name, street, tail, "AUSTRALIA"}
	case p < 76:
		lines = []string{pick(r, companies), fmt.Sprintf("Level %d", 1+r.IntN(30)), street, tail}
	case p < 80:
		lines = []string{name, street, fmt.Sprintf("%s, %s %s", loc, pl.state, pl.postcode)}
	case p < 87: // a letter dropped from the locality: not found
		lines = []string{name, street, fmt.Sprintf("%s %s %s", misspelt(loc), pl.state, pl.postcode)}
		verdict = "unmatched"
	case p < 90: // two lines
		lines = []string{name, tail}
		verdict = "invalid"
	case p < 93: // a postcode of another state
		other := pick(r, places)
		for stateOf[other.state] == stateOf[pl.state] {
			other = pick(r, places)
		}
		lines = []string{name, street, fmt.Sprintf("%s %s %s", loc, pl.state, other.postcode)}
		verdict = "invalid"
	default:
		a := pick(r, abroad)
		lines = append([]string{name}, a...)
		verdict = "international"
	}
	return lines, verdict, first, last
}

// newRecipient draws an address and, for some letters, a reference and
// channel lines, and how they are painted. The first letters of a layout
// (k counts them) have each kind: a white, an invisible and a visible
// reference, visible and hidden channel lines.
func newRecipient(r *rand.Rand, n, k int, allowInvisible bool) recipient {
	var rc recipient
	var first, last string
	rc.Address, rc.Verdict, first, last = newAddress(r)
	if r.IntN(100) < 45 || k < 3 {
		switch r.IntN(3) {
		case 0:
			rc.Ref = fmt.Sprintf("%09d", 100000000+r.IntN(900000000))
		case 1:
			rc.Ref = fmt.Sprintf("INV-2026-%06d", n)
		default:
			rc.Ref = fmt.Sprintf("ACC/%d", 10000+r.IntN(90000))
		}
		x := r.IntN(10)
		if k < 3 {
			x = []int{0, 5, 9}[k]
		}
		switch {
		case x < 4:
			rc.RefInk, rc.refStyle = white, "ref_white"
		case x < 8 && allowInvisible:
			rc.RefInk, rc.refStyle = invisible, "ref_invisible"
		default:
			rc.RefInk, rc.refStyle = black, "ref_visible"
		}
	}
	if r.IntN(100) < 22 || k == 3 || k == 4 {
		local := strings.ToLower(asciiOnly(first) + "." + asciiOnly(last))
		switch r.IntN(4) {
		case 0:
			rc.Email = fmt.Sprintf("%s%d@example.com.au", local, r.IntN(100))
		case 1:
			rc.Email = local + "@example.net"
			rc.SMS = fmt.Sprintf("04%08d", r.IntN(100000000))
		case 2:
			rc.Fax = fmt.Sprintf("0%d%08d", 2+r.IntN(7), r.IntN(100000000))
		default:
			rc.Email = local + "@mail.example.org"
			rc.Fax = fmt.Sprintf("0%d%08d", 2+r.IntN(7), r.IntN(100000000))
			rc.SMS = fmt.Sprintf("+614%08d", r.IntN(100000000))
		}
		rc.channelMode = "channels"
		if hide := r.IntN(3) == 0; k == 4 || hide && k != 3 {
			rc.ChannelInk, rc.channelMode = white, "channels_hidden"
			if allowInvisible && r.IntN(2) == 0 {
				rc.ChannelInk = invisible
			}
		}
	}
	return rc
}

// misspelt drops a letter from the middle of a locality's name.
func misspelt(loc string) string {
	k := len(loc) / 2
	for k < len(loc)-1 && (loc[k] == ' ' || loc[k-1] == ' ') {
		k++
	}
	return loc[:k] + loc[k+1:]
}

// asciiOnly drops what an e-mail address would not hold.
func asciiOnly(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			b.WriteRune(c)
		case c == 'é' || c == 'ë':
			b.WriteByte('e')
		case c == 'ü':
			b.WriteByte('u')
		}
	}
	return b.String()
}
