package data

// State is an Australian state or territory as addresses name it.
type State struct {
	Abbr    string   // "NSW"; "OT" is G-NAF's Other Territories
	Name    string   // "NEW SOUTH WALES"
	Aliases []string // other names people write: "N S W"? no: only full-word alternatives
	// Ranges are the postcode ranges Australia Post allocates to the state,
	// inclusive. Postcodes that the reference data files under a state outside
	// these ranges (border towns, external territories) are accepted as well:
	// the index records them per state.
	Ranges [][2]uint16
}

// States lists the states and territories with their postcode ranges. The
// ranges are Australia Post's allocation: delivery, PO box and large volume
// receiver postcodes together.
var States = []State{
	{Abbr: "NSW", Name: "NEW SOUTH WALES", Ranges: [][2]uint16{{1000, 2599}, {2619, 2899}, {2921, 2999}}},
	{Abbr: "ACT", Name: "AUSTRALIAN CAPITAL TERRITORY", Ranges: [][2]uint16{{200, 299}, {2600, 2618}, {2900, 2920}}},
	{Abbr: "VIC", Name: "VICTORIA", Ranges: [][2]uint16{{3000, 3999}, {8000, 8999}}},
	{Abbr: "QLD", Name: "QUEENSLAND", Ranges: [][2]uint16{{4000, 4999}, {9000, 9999}}},
	{Abbr: "SA", Name: "SOUTH AUSTRALIA", Ranges: [][2]uint16{{5000, 5999}}},
	{Abbr: "WA", Name: "WESTERN AUSTRALIA", Ranges: [][2]uint16{{6000, 6999}}},
	{Abbr: "TAS", Name: "TASMANIA", Ranges: [][2]uint16{{7000, 7999}}},
	{Abbr: "NT", Name: "NORTHERN TERRITORY", Ranges: [][2]uint16{{800, 999}}},
	// Other Territories: Norfolk Island, Christmas Island, Cocos (Keeling)
	// Islands, the Antarctic bases and Jervis Bay. Lists also file them
	// under NSW, WA, TAS or ACT; the index accepts every pairing a source gives.
	{Abbr: "OT", Name: "OTHER TERRITORIES", Ranges: [][2]uint16{{2540, 2540}, {2899, 2899}, {6798, 6799}, {7151, 7151}}},
	// Jervis Bay Territory, as Google's address metadata and some clients write it.
	{Abbr: "JBT", Name: "JERVIS BAY TERRITORY", Ranges: [][2]uint16{{2540, 2540}}},
}

// InRange reports whether postcode pc lies in one of the state's ranges.
func (s *State) InRange(pc uint16) bool {
	for _, r := range s.Ranges {
		if pc >= r[0] && pc <= r[1] {
			return true
		}
	}
	return false
}

// ExternalTerritory is an Australian external territory or Antarctic base:
// it has its own ISO 3166 code but takes Australian postcodes, so an address
// naming it with an Australian state or postcode is domestic.
type ExternalTerritory struct {
	Name      string   // "CHRISTMAS ISLAND"
	Aliases   []string // "COCOS ISLANDS", "COCOS KEELING ISLANDS"
	Alpha3    string   // "CXR"
	Postcodes []uint16
}

// ExternalTerritories are the territories named on address lines with an
// Australian postcode.
var ExternalTerritories = []ExternalTerritory{
	{Name: "CHRISTMAS ISLAND", Alpha3: "CXR", Postcodes: []uint16{6798}},
	{Name: "COCOS (KEELING) ISLANDS", Aliases: []string{"COCOS KEELING ISLANDS", "COCOS ISLANDS", "KEELING ISLANDS", "COCOS ISLAND"}, Alpha3: "CCK", Postcodes: []uint16{6799}},
	{Name: "NORFOLK ISLAND", Alpha3: "NFK", Postcodes: []uint16{2899}},
	{Name: "HEARD ISLAND AND MCDONALD ISLANDS", Aliases: []string{"HEARD ISLAND", "MCDONALD ISLANDS"}, Alpha3: "HMD", Postcodes: []uint16{7151}},
	{Name: "AUSTRALIAN ANTARCTIC TERRITORY", Aliases: []string{"ANTARCTICA", "AAT"}, Alpha3: "ATA", Postcodes: []uint16{7151}},
	{Name: "JERVIS BAY TERRITORY", Aliases: []string{"JERVIS BAY"}, Alpha3: "AUS", Postcodes: []uint16{2540}},
}
