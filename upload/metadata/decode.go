package metadata

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// state is one Parse: limits, the problems found and the path of the
// value being decoded.
type state struct {
	lim      Limits
	problems []Problem
	stop     bool // too many problems or a fatal one: stop decoding
	broken   bool // a fatal problem: the file cannot be read
	values   int  // values kept, against MaxValues
	path     []seg
}

// seg is one step of a path: an object key or an array index.
type seg struct {
	key string
	idx int // -1 for a key
}

func (st *state) push(key string) { st.path = append(st.path, seg{key: key, idx: -1}) }
func (st *state) pushIdx(i int)   { st.path = append(st.path, seg{idx: i}) }
func (st *state) pop()            { st.path = st.path[:len(st.path)-1] }

func (st *state) pathString() string { return formatPath(st.path) }

func formatPath(path []seg) string {
	var b strings.Builder
	for _, s := range path {
		if s.idx >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.idx))
			b.WriteByte(']')
			continue
		}
		if isIdent(s.key) {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
			continue
		}
		b.WriteByte('[')
		b.WriteString(quote(s.key))
		b.WriteByte(']')
	}
	return b.String()
}

// isIdent reports whether a key can be written after a dot in a path.
func isIdent(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case (c >= '0' && c <= '9') || c == '-':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// quote quotes s for a message, cut to a readable length so that hostile
// values cannot blow up the problem list.
func quote(s string) string {
	const max = 60
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

// add records a problem at path; past MaxProblems it records one "too
// many problems" entry and stops decoding.
func (st *state) add(path, msg string) {
	if st.stop && len(st.problems) > st.lim.MaxProblems {
		return
	}
	if len(st.problems) >= st.lim.MaxProblems {
		st.problems = append(st.problems, Problem{Message: fmt.Sprintf("too many problems: stopped after %d", st.lim.MaxProblems)})
		st.stop = true
		return
	}
	st.problems = append(st.problems, Problem{Path: path, Message: msg})
}

// spend counts n values about to be kept; past MaxValues it reports the
// limit and stops decoding (the pack keeps what was decoded).
func (st *state) spend(n int) bool {
	if st.stop {
		return false
	}
	st.values += n
	if st.values > st.lim.MaxValues {
		st.here(fmt.Sprintf("more than %s (attachments, postal lines, files, custom_data entries) in the file (the limit)", count(st.lim.MaxValues, "value")))
		st.stop = true
		return false
	}
	return true
}

// count writes n and the noun, singular or plural: "1 page", "2 pages".
func count(n int, noun string) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// here records a problem at the current path.
func (st *state) here(msg string) { st.add(st.pathString(), msg) }

// fatal records a problem that ends decoding.
func (st *state) fatal(msg string) {
	st.add("", msg)
	st.stop = true
	st.broken = true
}

// checkString applies the rules every string value obeys.
func (st *state) checkString(s string) bool {
	if len(s) > st.lim.MaxStringBytes {
		st.here(fmt.Sprintf("value of %s exceeds the limit of %s", count(len(s), "byte"), count(st.lim.MaxStringBytes, "byte")))
		return false
	}
	if strings.IndexByte(s, 0) >= 0 {
		st.here("value contains a NUL character")
		return false
	}
	return true
}

// reader is one metadata format, positioned on a value. Every method
// consumes the whole value, whatever it holds, so that decoding goes on
// after a problem.
type reader interface {
	// null reports whether the value is JSON null or an XML element
	// with xsi:nil="true"; it does not consume it.
	null() bool
	skip()
	str(trim bool) (string, bool)
	integer() (int, bool)
	boolean() (bool, bool)
	// object calls fn for each member, with the key pushed on the path;
	// fn must consume the member's value.
	object(fn func(key string))
	// list calls fn for each item, with its index pushed on the path;
	// fn must consume the item or return false (the rest is skipped).
	// singular names an item's element in XML.
	list(singular string, fn func(i int) bool)
	// textOr consumes a text value and returns it with isText true, or
	// leaves a container of the given kind ("array" or "object") for list
	// or object to consume.
	textOr(container string) (text string, isText, ok bool)
	// mark and rawSince return the source text of a value: mark before
	// consuming it, rawSince after.
	mark() int
	rawSince(m int) string
	xml() bool
}

var (
	packFields   = []string{"duplex", "colour_model", "title", "customer_email", "confirmation_email", "department", "purchase_order", "profile", "terminal", "cust_hold", "orientation", "attachments", "production_options", "template", "sms_from", "email_from", "email_subj", "letters"}
	prodFields   = []string{"aup_dlvtyp", "force_c4", "background", "background_pages", "cover_sheet", "stock", "split_pages", "split_marker"}
	letterFields = []string{"postal", "email", "fax", "sms", "primary", "reference", "custom_data", "file_name", "page_start", "page_end", "files"}
	fileFields   = []string{"file_name", "page_start", "page_end"}
	partFields   = []string{"locality", "suburb", "region", "state", "postcode", "country"}
	// xmlItems names the item element of each XML list.
	xmlItems = map[string]string{"attachment": "attachments", "letter": "letters", "file": "files", "line": "postal"}
)

// member decides whether a member with this key is decoded: unknown keys,
// duplicates and nulls are dealt with (reported or skipped) here.
func (st *state) member(r reader, key string, fields []string, seen *uint64) bool {
	i := indexOf(fields, key)
	if i < 0 {
		st.unknown(r, key, fields)
		r.skip()
		return false
	}
	if *seen&(1<<i) != 0 {
		st.here("duplicate field")
		r.skip()
		return false
	}
	*seen |= 1 << i
	if r.null() {
		r.skip()
		return false
	}
	return true
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func (st *state) unknown(r reader, key string, fields []string) {
	msg := "unknown field"
	if list, ok := xmlItems[key]; ok && r.xml() && indexOf(fields, list) >= 0 {
		msg += fmt.Sprintf("; <%s> elements go inside <%s>", key, list)
	} else if s := suggest(key, fields); s != "" {
		msg += "; did you mean " + s + "?"
	}
	st.here(msg)
}

// suggest returns the known name closest to key by edit distance (case
// ignored), if it is close enough to be a likely typo.
func suggest(key string, known []string) string {
	if len(key) > 64 {
		return ""
	}
	k := strings.ToLower(key)
	best, bestD := "", 3
	for _, n := range known {
		d := editDistance(k, n)
		limit := 2
		if len(n) <= 4 {
			limit = 1
		}
		if d <= limit && d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Damerau (optimal string alignment) distance
// between a and b, on bytes: transposed letters count once.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func (st *state) decodePack(r reader) *Pack {
	p := &Pack{}
	var seen uint64
	r.object(func(key string) {
		if !st.member(r, key, packFields, &seen) {
			return
		}
		switch key {
		case "duplex":
			p.Duplex = st.boolean(r)
		case "colour_model":
			p.ColourModel = st.integer(r)
		case "title":
			p.Title = st.str(r)
		case "customer_email":
			p.CustomerEmail = st.str(r)
		case "confirmation_email":
			p.ConfirmationEmail = st.boolean(r)
		case "department":
			p.Department = st.str(r)
		case "purchase_order":
			p.PurchaseOrder = st.str(r)
		case "profile":
			p.Profile = st.str(r)
		case "terminal":
			p.Terminal = st.str(r)
		case "cust_hold":
			p.CustHold = st.boolean(r)
		case "orientation":
			p.Orientation = st.integer(r)
		case "attachments":
			p.AttachmentsSet = true
			p.Attachments = []string{}
			r.list("attachment", func(int) bool {
				if s, ok := r.str(true); ok && st.spend(1) {
					p.Attachments = append(p.Attachments, s)
				}
				return true
			})
		case "production_options":
			p.ProductionOptions = st.decodeProd(r)
		case "template":
			if s, ok := r.str(false); ok {
				p.Template = &s
			}
		case "sms_from":
			p.SMSFrom = st.str(r)
		case "email_from":
			p.EmailFrom = st.str(r)
		case "email_subj":
			p.EmailSubj = st.str(r)
		case "letters":
			r.list("letter", func(i int) bool {
				if i >= st.lim.MaxLetters {
					st.add("letters", fmt.Sprintf("more than %s (the limit)", count(st.lim.MaxLetters, "letter")))
					return false
				}
				p.Letters = append(p.Letters, st.decodeLetter(r))
				return true
			})
		}
	})
	return p
}

func (st *state) str(r reader) *string {
	if s, ok := r.str(true); ok {
		return &s
	}
	return nil
}

func (st *state) integer(r reader) *int {
	if n, ok := r.integer(); ok {
		return &n
	}
	return nil
}

func (st *state) boolean(r reader) *bool {
	if b, ok := r.boolean(); ok {
		return &b
	}
	return nil
}

func (st *state) decodeProd(r reader) *ProductionOptions {
	o := &ProductionOptions{}
	var seen uint64
	r.object(func(key string) {
		if !st.member(r, key, prodFields, &seen) {
			return
		}
		switch key {
		case "aup_dlvtyp":
			o.AupDlvtyp = st.integer(r)
		case "force_c4":
			o.ForceC4 = st.boolean(r)
		case "background":
			o.Background = st.str(r)
		case "background_pages":
			o.BackgroundPages = st.str(r)
		case "cover_sheet":
			o.CoverSheet = st.boolean(r)
		case "stock":
			o.Stock = st.str(r)
		case "split_pages":
			o.SplitPages = st.integer(r)
		case "split_marker":
			o.SplitMarker = st.str(r)
		}
	})
	return o
}

func (st *state) decodeLetter(r reader) Letter {
	var l Letter
	var seen uint64
	r.object(func(key string) {
		if !st.member(r, key, letterFields, &seen) {
			return
		}
		s := func() string {
			v, _ := r.str(true)
			return v
		}
		switch key {
		case "postal":
			l.Postal = st.decodePostal(r)
		case "email":
			l.Email = s()
		case "fax":
			l.Fax = s()
		case "sms":
			l.SMS = s()
		case "primary":
			l.Primary = s()
		case "reference":
			l.Reference = s()
		case "custom_data":
			l.CustomData = st.decodeCustom(r)
		case "file_name":
			l.FileName = s()
		case "page_start":
			l.PageStart = st.integer(r)
		case "page_end":
			l.PageEnd = st.integer(r)
		case "files":
			l.Files = []FileEntry{}
			r.list("file", func(int) bool {
				if f := st.decodeFile(r); st.spend(1) {
					l.Files = append(l.Files, f)
				}
				return true
			})
		}
	})
	return l
}

func (st *state) decodeFile(r reader) FileEntry {
	var f FileEntry
	var seen uint64
	r.object(func(key string) {
		if !st.member(r, key, fileFields, &seen) {
			return
		}
		switch key {
		case "file_name":
			f.FileName, _ = r.str(true)
		case "page_start":
			f.PageStart = st.integer(r)
		case "page_end":
			f.PageEnd = st.integer(r)
		}
	})
	return f
}

func (st *state) decodeCustom(r reader) CustomData {
	c := CustomData{}
	r.object(func(key string) {
		if _, dup := c[key]; dup {
			st.here("duplicate field")
			r.skip()
			return
		}
		if key == "" {
			st.here("empty key")
			r.skip()
			return
		}
		if r.null() {
			r.skip()
			return
		}
		if v, ok := r.str(true); ok && st.spend(1) {
			c[key] = v
		}
	})
	return c
}

// decodePostal reads a postal address: text lines, or a list of lines
// each text or an object of address parts. It returns nil when no line
// was given (an empty string or list), so that the channel counts as not
// given.
func (st *state) decodePostal(r reader) *Postal {
	m := r.mark()
	text, isText, ok := r.textOr("array")
	if !ok {
		return nil
	}
	p := &Postal{}
	if isText {
		if !st.checkString(text) {
			return nil
		}
		p.Lines = splitLines(text)
		if !st.spend(len(p.Lines)) {
			return nil
		}
	} else {
		var locality, country bool
		r.list("line", func(i int) bool {
			text, isText, ok := r.textOr("object")
			switch {
			case !ok:
			case isText:
				if !st.checkString(text) {
					break
				}
				if strings.ContainsAny(text, "\r\n") {
					st.here("a line of a postal array must not contain a line break")
					break
				}
				if t := trimSpace(text); t != "" && st.spend(1) {
					p.Lines = append(p.Lines, t)
				}
			default:
				pp, ok := st.decodeParts(r)
				if !ok {
					break
				}
				line := pp.render()
				if line == "" || !st.spend(1) {
					break
				}
				if pp.Country != "" {
					if country {
						st.here("a second country line")
					}
					country = true
				} else {
					if locality {
						st.here("a second line of locality, state and postcode parts; give them together in one line")
					}
					locality = true
				}
				pp.Line = len(p.Lines)
				p.Lines = append(p.Lines, line)
				p.Parts = append(p.Parts, pp)
			}
			return true
		})
	}
	p.Raw = r.rawSince(m)
	if len(p.Lines) == 0 {
		return nil
	}
	return p
}

func (pp PostalParts) render() string {
	if pp.Country != "" {
		return pp.Country
	}
	var parts []string
	for _, s := range []string{pp.Locality, pp.State, pp.Postcode} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

func (st *state) decodeParts(r reader) (PostalParts, bool) {
	var pp PostalParts
	var seen uint64
	r.object(func(key string) {
		if !st.member(r, key, partFields, &seen) {
			return
		}
		v, ok := r.str(true)
		if !ok {
			return
		}
		v = trimSpace(v) // parts are trimmed like text lines, in both formats
		switch key {
		case "locality", "suburb":
			if seen&(1<<0) != 0 && seen&(1<<1) != 0 {
				st.here("give locality or suburb, not both")
				return
			}
			pp.Locality = v
		case "region", "state":
			if seen&(1<<2) != 0 && seen&(1<<3) != 0 {
				st.here("give region or state, not both")
				return
			}
			pp.State = v
		case "postcode":
			pp.Postcode = v
		case "country":
			pp.Country = v
		}
	})
	if pp.Country != "" && (pp.Locality != "" || pp.State != "" || pp.Postcode != "") {
		st.here("country stands alone in its own line, apart from locality, state and postcode")
		return pp, false
	}
	if pp == (PostalParts{}) {
		st.here("an address part object needs locality (or suburb), state (or region), postcode or country")
		return pp, false
	}
	return pp, true
}

// splitLines splits postal text at line breaks (LF, CRLF or CR), trims
// each line and drops empty ones.
func splitLines(s string) []string {
	var lines []string
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = trimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// trimSpace trims ASCII white space (the XML white space characters
// plus form feed and vertical tab).
func trimSpace(s string) string {
	return strings.Trim(s, " \t\r\n\f\v")
}
