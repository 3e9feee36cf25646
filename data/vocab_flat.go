package data

// FlatTypes lists G-NAF's 53 flat (sub-dwelling) types. Abbr is the G-NAF
// code, which is what we print ("APT", "SE", "TNHS"); Full is the word
// ("APARTMENT", "SUITE", "TOWNHOUSE"). Other holds the few spellings people
// write that cannot mean anything else: "OFF" (OFFICE) and "PH" (PENTHOUSE)
// are left out, as are short forms that read as street or level words.
//
// LOT is a G-NAF flat type; the engine reads "LOT 12" before it consults
// this table, but the entry stays so that G-NAF's code list is complete.
var FlatTypes = []Term{
	{"ANTENNA", "ANT", nil},
	{"APARTMENT", "APT", []string{"APPT"}},
	{"AUTOMATED TELLER MACHINE", "ATM", nil},
	{"BARBECUE", "BBQ", []string{"BARBEQUE"}},
	{"BLOCK", "BLCK", []string{"BLK"}},
	{"BOATSHED", "BTSD", []string{"BOAT SHED"}},
	{"BUILDING", "BLDG", nil},
	{"BUNGALOW", "BNGW", nil},
	{"CAGE", "CAGE", nil},
	{"CARPARK", "CARP", []string{"CAR PARK"}},
	{"CARSPACE", "CARS", []string{"CAR SPACE"}},
	{"CLUB", "CLUB", nil},
	{"COOLROOM", "COOL", []string{"COOL ROOM"}},
	{"COTTAGE", "CTGE", nil},
	{"DUPLEX", "DUPL", nil},
	{"FACTORY", "FCTY", nil},
	{"FLAT", "FLAT", nil},
	{"GARAGE", "GRGE", nil},
	{"HALL", "HALL", nil},
	{"HOUSE", "HSE", nil},
	{"KIOSK", "KSK", nil},
	{"LEASE", "LSE", nil},
	{"LOBBY", "LBBY", nil},
	{"LOFT", "LOFT", nil},
	{"LOT", "LOT", nil},
	{"MAISONETTE", "MSNT", nil},
	{"MARINE BERTH", "MBTH", nil},
	{"OFFICE", "OFFC", nil},
	{"PENTHOUSE", "PTHS", nil},
	{"REAR", "REAR", nil},
	{"RESERVE", "RESV", nil},
	{"ROOM", "ROOM", []string{"RM"}},
	{"SECTION", "SEC", nil},
	{"SHED", "SHED", nil},
	{"SHOP", "SHOP", nil},
	{"SHOWROOM", "SHRM", []string{"SHOW ROOM"}},
	{"SIGN", "SIGN", nil},
	{"SITE", "SITE", nil},
	{"STALL", "STLL", nil},
	{"STORE", "STOR", nil},
	{"STRATA UNIT", "STR", nil},
	{"STUDIO", "STU", nil},
	{"SUBSTATION", "SUBS", nil},
	{"SUITE", "SE", []string{"STE"}},
	{"TENANCY", "TNCY", nil},
	{"TOWER", "TWR", nil},
	{"TOWNHOUSE", "TNHS", []string{"TOWN HOUSE"}},
	{"UNIT", "UNIT", []string{"U"}},
	{"VAULT", "VLT", nil},
	{"VILLA", "VLLA", nil},
	{"WARD", "WARD", nil},
	{"WAREHOUSE", "WHSE", nil},
	{"WORKSHOP", "WKSH", nil},
}

// LevelTypes lists G-NAF's level types. Abbr is the G-NAF code ("L", "G",
// "LG"), which is what we print; Full is the word.
var LevelTypes = []Term{
	{"BASEMENT", "B", []string{"BSMT"}},
	{"FLOOR", "FL", []string{"FLR"}},
	{"GROUND", "G", []string{"GROUND FLOOR", "GF"}},
	{"LEVEL", "L", []string{"LVL", "LEV"}},
	{"LOWER GROUND", "LG", []string{"LOWER GROUND FLOOR", "LGF"}},
	{"MEZZANINE", "M", []string{"MEZZ"}},
	{"OBSERVATION DECK", "OD", nil},
	{"PARKING", "P", nil},
	{"PENTHOUSE", "PTHS", nil},
	{"PLATFORM", "PLF", nil},
	{"PODIUM", "PDM", nil},
	{"ROOFTOP", "RT", []string{"ROOF TOP"}},
	{"SUB-BASEMENT", "SB", []string{"SUB BASEMENT"}},
	{"UPPER GROUND", "UG", []string{"UPPER GROUND FLOOR", "UGF"}},
}

// StreetSuffixes lists G-NAF's 19 street suffixes. Full is the word, which
// G-NAF's code list carries as the code ("SOUTH"); Abbr is the abbreviation
// G-NAF prints ("S"), which is what we print.
var StreetSuffixes = []Term{
	{"CENTRAL", "CN", nil},
	{"DEVIATION", "DE", []string{"DEVN"}},
	{"EAST", "E", nil},
	{"EXTENSION", "EX", []string{"EXTN"}},
	{"INNER", "IN", nil},
	{"LOWER", "LR", []string{"LWR"}},
	{"MALL", "ML", nil},
	{"NORTH", "N", []string{"NTH"}},
	{"NORTH EAST", "NE", []string{"NORTHEAST"}},
	{"NORTH WEST", "NW", []string{"NORTHWEST"}},
	{"OFF", "OF", nil},
	{"ON", "ON", nil},
	{"OUTER", "OT", nil},
	{"OVERPASS", "OP", nil},
	{"SOUTH", "S", []string{"STH"}},
	{"SOUTH EAST", "SE", []string{"SOUTHEAST"}},
	{"SOUTH WEST", "SW", []string{"SOUTHWEST"}},
	{"UPPER", "UP", []string{"UPR"}},
	{"WEST", "W", nil},
}

// PostalDeliveryTypes lists Australia Post's postal delivery types. Full is
// the form Australia Post prints ("PO BOX", "LOCKED BAG", "RMB"); none has a
// shorter canonical form, so Abbr is empty throughout.
var PostalDeliveryTypes = []Term{
	{"PO BOX", "", []string{"P O BOX", "POST OFFICE BOX", "POB", "PO BX"}},
	{"GPO BOX", "", []string{"G P O BOX", "GENERAL POST OFFICE BOX"}},
	{"LOCKED BAG", "", []string{"LOCKED MAIL BAG", "LMB", "L BAG"}},
	{"PRIVATE BAG", "", []string{"PRIVATE MAIL BAG", "PMB"}},
	{"RMB", "", []string{"ROADSIDE MAIL BOX", "ROADSIDE MAIL BAG", "ROADSIDE MAILBOX"}},
	{"RSD", "", []string{"ROADSIDE DELIVERY", "ROADSIDE DELIVERY SERVICE"}},
	{"RMS", "", []string{"ROADSIDE MAIL SERVICE"}},
	{"CMB", "", []string{"COMMUNITY MAIL BAG"}},
	{"CMA", "", []string{"COMMUNITY MAIL AGENT"}},
	{"CPA", "", []string{"COMMUNITY POSTAL AGENT"}},
	{"CARE PO", "", []string{"CARE OF PO", "CARE OF POST OFFICE", "C/- PO", "C/O PO", "C/- POST OFFICE", "C/O POST OFFICE", "CARE OF POSTOFFICE"}},
	{"MS", "", []string{"MAIL SERVICE"}},
}
