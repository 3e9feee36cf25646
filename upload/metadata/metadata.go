package metadata

import (
	"bytes"
	"fmt"
	"strings"
)

// Pack is a mailing as described by a metadata file (spec 2.2). Every
// mailing attribute is a pointer, or has a Set flag, so that "not given"
// (the profile or the service default applies) is told apart from a zero
// value written in the file.
type Pack struct {
	Duplex            *bool
	ColourModel       *int
	Title             *string
	CustomerEmail     *string
	ConfirmationEmail *bool
	Department        *string
	PurchaseOrder     *string
	Profile           *string
	Terminal          *string
	CustHold          *bool
	Orientation       *int

	// Attachments are document names used as attachments, in order.
	// AttachmentsSet tells an absent list (the letters' files decide,
	// spec 2.2) from an empty one.
	Attachments    []string
	AttachmentsSet bool

	ProductionOptions *ProductionOptions

	Template  *string
	SMSFrom   *string
	EmailFrom *string
	EmailSubj *string

	// Letters in order of appearance. None (absent or empty): the auto
	// processor reads the addresses from the documents.
	Letters []Letter

	// Source names a profile read into this Pack, for the messages of
	// the problems it causes: `profile "statements"
	// (profiles/ABC12345/statements.json)`. Parse leaves it empty; see
	// ApplyProfile.
	Source string
	// from maps the attributes ApplyProfile filled (paths as in
	// Problem.Path) to the Source of their profile.
	from map[string]string
}

// ProductionOptions are the production_options object (spec 2.3), with
// this service's extensions for print production (usually set in a
// profile): Background names an uploaded document whose first page is
// drawn behind the letters' pages (a letterhead), on their first page or
// all (BackgroundPages "first" or "all", default "first"); CoverSheet asks
// for an address cover sheet where an unaddressed letter's window area is
// not clear; Stock names the paper stock. SplitPages and SplitMarker
// tell the auto processor where letters start in a document when the
// metadata has no letters: every SplitPages pages, or on each page
// showing SplitMarker (default: where the address in the window changes).
type ProductionOptions struct {
	AupDlvtyp       *int // 0 priority, 1 regular (the default)
	ForceC4         *bool
	Background      *string
	BackgroundPages *string
	CoverSheet      *bool
	Stock           *string
	SplitPages      *int
	SplitMarker     *string
}

// Letter is one element of letters (spec 2.4). No profile supplies
// letter fields, so strings are plain: empty means not given.
type Letter struct {
	Postal     *Postal
	Email      string
	Fax        string
	SMS        string
	Primary    string
	Reference  string
	CustomData CustomData
	FileName   string
	PageStart  *int
	PageEnd    *int
	Files      []FileEntry
}

// FileEntry is one element of a letter's files (spec 2.5).
type FileEntry struct {
	FileName  string
	PageStart *int
	PageEnd   *int
}

// Postal is a letter's postal address (spec 2.4, 2.6).
type Postal struct {
	// Lines are the address lines in order, trimmed, empty lines
	// dropped. A line given as an object of address parts is rendered as
	// "locality state postcode" (the parts given, space-separated) and a
	// country as its own line.
	Lines []string
	// Raw is the value exactly as written in the metadata: the JSON text
	// of the string or array, or the content of the XML <postal>
	// element. Echo it when the address has to be shown as submitted.
	Raw string
	// Parts holds the lines given as objects of address parts, in order;
	// nil when the address was given as text lines only.
	Parts []PostalParts
}

// PostalParts is one line of a postal address given as an object of
// address parts (spec 2.6).
type PostalParts struct {
	Line     int    // index into Postal.Lines of the rendered line
	Locality string // locality or suburb
	State    string // state or region
	Postcode string
	Country  string
}

// CustomData holds a letter's custom_data (spec 2.7): every value is a
// string. The key "password" protects a PDF delivered by email or SMS.
type CustomData map[string]string

// Password is the custom_data password, if any.
func (c CustomData) Password() string { return c["password"] }

// HasLetters reports whether the metadata gives letters. Without letters
// (letters absent or empty, or no metadata at all) the mailing is queued
// for the auto processor, which reads addresses from the documents.
func (p *Pack) HasLetters() bool { return p != nil && len(p.Letters) > 0 }

// Limits bound what Parse accepts. The zero value of a field means its
// default.
type Limits struct {
	MaxBytes       int // whole file; default 32 MiB
	MaxDepth       int // nesting of objects/arrays or elements; default 32
	MaxLetters     int // default 100,000
	MaxStringBytes int // one string value or key; default 64 KiB
	// MaxValues bounds the values kept across the file, other than
	// letters: attachments, postal lines, files entries and custom_data
	// entries; default 2,000,000 (20 a letter at the letter limit).
	MaxValues   int
	MaxProblems int // then one "too many problems" entry; default 1,000
}

// DefaultLimits are the limits Parse applies for zero fields.
var DefaultLimits = Limits{
	MaxBytes:       32 << 20,
	MaxDepth:       32,
	MaxLetters:     100_000,
	MaxStringBytes: 64 << 10,
	MaxValues:      2_000_000,
	MaxProblems:    1_000,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxBytes > 0 {
		d.MaxBytes = l.MaxBytes
	}
	if l.MaxDepth > 0 {
		d.MaxDepth = l.MaxDepth
	}
	if l.MaxLetters > 0 {
		d.MaxLetters = l.MaxLetters
	}
	if l.MaxStringBytes > 0 {
		d.MaxStringBytes = l.MaxStringBytes
	}
	if l.MaxValues > 0 {
		d.MaxValues = l.MaxValues
	}
	if l.MaxProblems > 0 {
		d.MaxProblems = l.MaxProblems
	}
	return d
}

// Problem is one thing wrong with a metadata file or with the mailing it
// describes.
type Problem struct {
	// Path locates the problem in the metadata, JSON-path-like and the
	// same for JSON and XML files: "letters[3].postal[1].postcode",
	// "attachments[0]", "custom_data[\"odd key\"]". Empty for the file
	// as a whole (syntax errors, limits, session-wide rules).
	Path    string
	Message string
	// Warning marks something worth telling the client that does not
	// stop the mailing (rule 3 of spec 2.4, an unused document).
	Warning bool
	// Source names the profile the value at Path came from (its
	// Pack.Source; see ApplyProfile); empty when it is the metadata
	// file's own.
	Source string
}

// String is "path: message", "path: warning: message" for a warning, and
// the message alone when the path is empty.
func (p Problem) String() string {
	var b strings.Builder
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	if p.Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// In is String prefixed by where the problem lies: its Source, else
// file (the name of the metadata file), as end_session reports it:
// `m.json: letters[0].email: …`, `profile "statements"
// (profiles/ABC12345/statements.json): attachments[0]: …`.
func (p Problem) In(file string) string {
	where := file
	if p.Source != "" {
		where = p.Source
	}
	if where == "" {
		return p.String()
	}
	return where + ": " + p.String()
}

// HasErrors reports whether probs holds anything but warnings: a mailing
// with errors must be rejected (end_session leaves the session open so
// the client can upload a corrected file and end again).
func HasErrors(probs []Problem) bool {
	for _, p := range probs {
		if !p.Warning {
			return true
		}
	}
	return false
}

// Parse reads a metadata file. name picks the format: a name ending in
// .json is JSON, .xml is XML (case-insensitive); any other name is sniffed
// (a '{' first, after an optional byte order mark and white space, is
// JSON, a '<' is XML). The pack is nil only when the file could not be
// read at all (not JSON or XML, a syntax error, a limit exceeded during
// scanning); otherwise it holds every field that could be decoded and the
// problems say what was wrong with the rest. Parse never panics and its
// time and memory are linear in len(data), which lim bounds.
func Parse(name string, data []byte, lim Limits) (*Pack, []Problem) {
	lim = lim.withDefaults()
	st := &state{lim: lim}
	p := st.parse(name, data)
	return p, st.problems
}

// ParseProfile reads a profile: a metadata file (either format) that
// holds only mailing attributes. Letters and a profile name are problems.
func ParseProfile(name string, data []byte, lim Limits) (*Pack, []Problem) {
	p, probs := Parse(name, data, lim)
	if p == nil {
		return nil, probs
	}
	if len(p.Letters) > 0 {
		probs = append(probs, Problem{Path: "letters", Message: "a profile holds mailing attributes only, not letters"})
	}
	if p.Profile != nil {
		probs = append(probs, Problem{Path: "profile", Message: "a profile cannot name another profile"})
	}
	return p, probs
}

func (st *state) parse(name string, data []byte) *Pack {
	if len(data) > st.lim.MaxBytes {
		st.add("", fmt.Sprintf("metadata file of %s exceeds the limit of %s", count(len(data), "byte"), count(st.lim.MaxBytes, "byte")))
		return nil
	}
	lower := strings.ToLower(name)
	isJSON, isXML := strings.HasSuffix(lower, ".json"), strings.HasSuffix(lower, ".xml")
	const noJSON16 = "UTF-16 is not supported for JSON: JSON metadata must be UTF-8 (RFC 8259)"
	if isUTF32(data) {
		st.add("", "UTF-32 is not supported: metadata must be UTF-8 (XML may also be UTF-16)")
		return nil
	}
	enc, bom := detectUTF16(data)
	if enc.on && isJSON {
		st.add("", noJSON16)
		return nil
	}
	if enc.on {
		var ok bool
		if data, ok = st.fromUTF16(data[bom:], enc); !ok {
			return nil
		}
	} else {
		data = bytes.TrimPrefix(data, utf8BOM)
	}
	switch {
	case isJSON:
		return st.parseJSON(data)
	case isXML:
		return st.parseXML(data, enc)
	}
	t := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case len(t) == 0:
		st.add("", "empty metadata file")
	case t[0] == '{' && enc.on:
		st.add("", noJSON16)
	case t[0] == '{':
		return st.parseJSON(data)
	case t[0] == '<':
		return st.parseXML(data, enc)
	default:
		st.add("", fmt.Sprintf("%s is neither JSON (.json) nor XML (.xml)", quote(name)))
	}
	return nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Attributes returns the mailing attributes p sets, under their field
// names (spec 2.2, production_options with this service's extensions), for
// records and reports. Letters are not among them.
func (p *Pack) Attributes() map[string]any {
	out := map[string]any{}
	put := func(name string, v any, set bool) {
		if set {
			out[name] = v
		}
	}
	put("duplex", deref(p.Duplex), p.Duplex != nil)
	put("colour_model", deref(p.ColourModel), p.ColourModel != nil)
	put("title", deref(p.Title), p.Title != nil)
	put("customer_email", deref(p.CustomerEmail), p.CustomerEmail != nil)
	put("confirmation_email", deref(p.ConfirmationEmail), p.ConfirmationEmail != nil)
	put("department", deref(p.Department), p.Department != nil)
	put("purchase_order", deref(p.PurchaseOrder), p.PurchaseOrder != nil)
	put("profile", deref(p.Profile), p.Profile != nil)
	put("terminal", deref(p.Terminal), p.Terminal != nil)
	put("cust_hold", deref(p.CustHold), p.CustHold != nil)
	put("orientation", deref(p.Orientation), p.Orientation != nil)
	put("attachments", append([]string{}, p.Attachments...), p.AttachmentsSet)
	put("template", deref(p.Template), p.Template != nil)
	put("sms_from", deref(p.SMSFrom), p.SMSFrom != nil)
	put("email_from", deref(p.EmailFrom), p.EmailFrom != nil)
	put("email_subj", deref(p.EmailSubj), p.EmailSubj != nil)
	if o := p.ProductionOptions; o != nil {
		po := map[string]any{}
		set := func(name string, v any, ok bool) {
			if ok {
				po[name] = v
			}
		}
		set("aup_dlvtyp", deref(o.AupDlvtyp), o.AupDlvtyp != nil)
		set("force_c4", deref(o.ForceC4), o.ForceC4 != nil)
		set("background", deref(o.Background), o.Background != nil)
		set("background_pages", deref(o.BackgroundPages), o.BackgroundPages != nil)
		set("cover_sheet", deref(o.CoverSheet), o.CoverSheet != nil)
		set("stock", deref(o.Stock), o.Stock != nil)
		set("split_pages", deref(o.SplitPages), o.SplitPages != nil)
		set("split_marker", deref(o.SplitMarker), o.SplitMarker != nil)
		if len(po) > 0 {
			out["production_options"] = po
		}
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
