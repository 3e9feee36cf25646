package testref

import (
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Mix returns n addresses in the realistic proportions lodge's benchmarks
// use: 70% street addresses at real localities (drawn by their G-NAF
// address counts, in assorted forms), 10% postal delivery addresses, 8%
// misspelt or mis-postcoded localities, 7% malformed and 5% international.
// The same seed gives the same addresses.
func Mix(n int, seed uint64) ([][]string, error) {
	dir, err := DataDir()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "gnaf-localities", "localities-au.csv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	type loc struct{ name, state, pc string }
	var locs []loc
	var cum []int
	total := 0
	for _, r := range rows[1:] {
		c, _ := strconv.Atoi(r[3])
		total += max(c, 1)
		locs = append(locs, loc{r[0], r[1], r[2]})
		cum = append(cum, total)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pick := func() loc {
		x := rng.IntN(total)
		lo, hi := 0, len(cum)-1
		for lo < hi {
			m := (lo + hi) / 2
			if cum[m] > x {
				hi = m
			} else {
				lo = m + 1
			}
		}
		return locs[lo]
	}
	streets := []string{"Smith St", "George Street", "High St", "Main Rd", "Victoria Pde", "Church St", "Park Avenue", "Station Rd", "King St", "Queen St", "Railway Tce", "Beach Rd", "Bay View Cres", "Hill Ct", "Ocean Dr"}
	names := []string{"Jo Citizen", "MR A SMITH", "Acme Pty Ltd", "Dr Jane Brown", "The Occupier"}
	countries := []string{"United Kingdom", "USA", "New Zealand", "Germany", "Singapore", "Japan", "Canada", "France"}
	out := make([][]string, 0, n)
	for i := 0; i < n; i++ {
		l := pick()
		name := names[rng.IntN(len(names))]
		street := fmt.Sprintf("%d %s", 1+rng.IntN(300), streets[rng.IntN(len(streets))])
		tail := l.name + " " + l.state + " " + l.pc
		switch p := rng.IntN(100); {
		case p < 40:
			out = append(out, []string{name, street, tail})
		case p < 55:
			out = append(out, []string{name, fmt.Sprintf("Unit %d", 1+rng.IntN(40)), street, l.name, l.state + " " + l.pc})
		case p < 70:
			out = append(out, []string{name, fmt.Sprintf("%d/%s", 1+rng.IntN(20), street), l.name + ", " + l.state + " " + l.pc})
		case p < 80:
			out = append(out, []string{name, fmt.Sprintf("PO Box %d", 1+rng.IntN(9999)), tail})
		case p < 84:
			// one letter dropped from the locality
			nm := l.name
			if len(nm) > 5 {
				k := 1 + rng.IntN(len(nm)-2)
				nm = nm[:k] + nm[k+1:]
			}
			out = append(out, []string{name, street, nm + " " + l.state + " " + l.pc})
		case p < 88:
			pc, _ := strconv.Atoi(l.pc)
			out = append(out, []string{name, street, fmt.Sprintf("%s %s %04d", l.name, l.state, (pc+7)%10000)})
		case p < 95:
			switch rng.IntN(3) {
			case 0:
				out = append(out, []string{name, tail})
			case 1:
				out = append(out, []string{name, street, l.name + " " + l.pc})
			default:
				out = append(out, []string{name, street, l.name + " " + l.state})
			}
		default:
			out = append(out, []string{name, "1 Example Road", "Springfield 12345", countries[rng.IntN(len(countries))]})
		}
	}
	return out, nil
}
