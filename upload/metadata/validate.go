package metadata

import (
	"fmt"
	"math"
	"net/mail"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	tpl "github.com/lodge-mail/lodge/delivery/template"
	"github.com/lodge-mail/lodge/internal/pdf"
)

// FileInfo describes a document the metadata may reference.
type FileInfo struct {
	Name string
	// Kind is "pdf", "ps", "xps" (documents) or "json", "xml"
	// (metadata). Empty: taken from the name's extension.
	Kind string
	// Pages is the document's page count; 0 when unknown (page ranges
	// are then checked only for order and sign).
	Pages int
	// Portal marks a document pre-uploaded in the customer portal: it
	// can be referenced by name but was not uploaded in this session, so
	// it is never the default document (rules 2 and 3 of spec 2.4) and
	// is never reported unused.
	Portal bool
}

// Files are the files of a session in upload order (the order matters:
// rule 3 of spec 2.4 uses the first document), plus any portal documents.
type Files []FileInfo

// PlannedLetter is one letter resolved for lodgement: its documents, its
// channels and its address.
type PlannedLetter struct {
	Index int `json:"index"` // position in the metadata's letters
	// Documents are the letter's own document(s) with their page ranges,
	// then its attachments: those its files list names, then the
	// mailing's attachments that no letter references.
	Documents []PlannedDocument `json:"documents"`
	// TextOnly: no letter document; the template is the message (email
	// or SMS), possibly with attachments.
	TextOnly bool     `json:"text_only,omitempty"`
	Primary  string   `json:"primary"`          // the channel tried first: postal, email, sms or fax
	Channels []string `json:"channels"`         // every channel given: the primary, then sms, fax, email, postal order
	Postal   []string `json:"postal,omitempty"` // address lines; nil without postal delivery
	Email    string   `json:"email,omitempty"`
	Fax      string   `json:"fax,omitempty"`
	SMS      string   `json:"sms,omitempty"`
	// Reference is the letter's searchable customer reference.
	Reference  string     `json:"reference,omitempty"`
	CustomData CustomData `json:"custom_data,omitempty"`
}

// PlannedDocument is a page range of one document.
type PlannedDocument struct {
	Name       string `json:"file_name"`
	PageStart  int    `json:"page_start"`           // 0-based
	PageEnd    int    `json:"page_end"`             // 0-based, inclusive; -1: the last page (page count unknown)
	Attachment bool   `json:"attachment,omitempty"` // an attachment rather than the letter itself
}

// Validate checks a parsed pack against the files of its session: the
// rules of spec 2.2 to 2.7 that Parse cannot check alone. Apply the
// profile first (ApplyProfile): the pack is checked as it will be
// processed. Warnings (Problem.Warning) do not stop a mailing; anything
// else does. At most DefaultLimits.MaxProblems problems are returned,
// then one "too many problems" entry. A nil pack (no metadata) has
// nothing to check.
func Validate(p *Pack, files Files) []Problem {
	_, probs := resolve(p, files)
	return probs
}

// Plan resolves each letter for lodgement (see PlannedLetter) and returns
// Validate's problems. The plan is nil when there are errors, and when
// the pack has no letters (the auto processor takes the mailing).
func (p *Pack) Plan(files Files) ([]PlannedLetter, []Problem) {
	plan, probs := resolve(p, files)
	if HasErrors(probs) {
		return nil, probs
	}
	return plan, probs
}

var stockName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

type resolver struct {
	p      *Pack
	files  Files
	byName map[string]int
	probs  []Problem
	stop   bool

	attach     map[string]bool   // the mailing's attachments list
	letterRef  map[string]string // document → path of its first use as a letter document
	attachRef  map[string]string // document → path of its first use as an attachment by a letter
	defaultDoc string            // for letters and entries that name no document
	candidates int               // uploaded documents that are not attachments
	usedAsDoc  map[string]bool
	background string // the document drawn behind the letters: no letter's
	// covered holds, per document of known page count, the page ranges
	// (0-based, inclusive) the letters take from it.
	covered map[string][][2]int
	// tmpl is the template, parsed; nil when there is none or it is broken.
	tmpl *tpl.Template
}

// entry is one document reference of a letter.
type entry struct {
	name       string
	start, end *int
	path       string // of the object holding file_name, page_start, page_end
	attach     bool
}

func (v *resolver) add(path, msg string, warn bool) {
	if v.stop {
		return
	}
	if len(v.probs) >= DefaultLimits.MaxProblems {
		v.probs = append(v.probs, Problem{Message: fmt.Sprintf("too many problems: stopped after %d", DefaultLimits.MaxProblems)})
		v.stop = true
		return
	}
	v.probs = append(v.probs, Problem{Path: path, Message: msg, Warning: warn, Source: v.p.sourceOf(path)})
}

func (v *resolver) err(path, msg string)  { v.add(path, msg, false) }
func (v *resolver) warn(path, msg string) { v.add(path, msg, true) }

func resolve(p *Pack, files Files) ([]PlannedLetter, []Problem) {
	if p == nil {
		return nil, nil
	}
	v := &resolver{
		p: p, files: files, byName: make(map[string]int, len(files)),
		attach: map[string]bool{}, letterRef: map[string]string{}, attachRef: map[string]string{},
		usedAsDoc: map[string]bool{}, covered: map[string][][2]int{},
	}
	for i, f := range files {
		if _, dup := v.byName[f.Name]; !dup {
			v.byName[f.Name] = i
		}
	}
	v.checkPack()
	for k, name := range p.Attachments {
		at := fmt.Sprintf("attachments[%d]", k)
		if v.attach[name] {
			v.warn(at, fmt.Sprintf("%s is listed twice", quote(name)))
			continue
		}
		v.attach[name] = true
		v.lookup(at, name)
	}
	if !p.HasLetters() {
		return nil, v.probs
	}
	entries := make([][]entry, len(p.Letters))
	for i := range p.Letters {
		entries[i] = v.entries(i)
	}
	v.chooseDefault()
	plan := make([]PlannedLetter, 0, len(p.Letters))
	for i := range p.Letters {
		if v.stop {
			break
		}
		plan = append(plan, v.letter(i, entries[i]))
	}
	v.unused()
	v.uncovered()
	v.sort()
	return plan, v.probs
}

// sort orders the problems as the metadata reads: mailing attributes,
// then letter by letter, then the session as a whole. (Rule 1 is checked
// for all letters before the rest, so the order of finding differs.)
func (v *resolver) sort() {
	probs := v.probs
	if v.stop {
		probs = probs[:len(probs)-1] // "too many problems" stays last
	}
	rank := func(p Problem) int {
		if p.Path == "" {
			return math.MaxInt
		}
		rest, ok := strings.CutPrefix(p.Path, "letters[")
		if !ok {
			return -1
		}
		end := strings.IndexByte(rest, ']')
		n, err := strconv.Atoi(rest[:max(end, 0)])
		if err != nil {
			return -1
		}
		return n
	}
	sort.SliceStable(probs, func(i, j int) bool { return rank(probs[i]) < rank(probs[j]) })
}

func (v *resolver) checkPack() {
	p := v.p
	for _, f := range []struct {
		name string
		v    *int
	}{{"colour_model", p.ColourModel}, {"orientation", p.Orientation}} {
		if f.v != nil && (*f.v < 0 || *f.v > 9) {
			v.err(f.name, fmt.Sprintf("%d is out of range: 0 to 9 are accepted", *f.v))
		}
	}
	if o := p.ProductionOptions; o != nil {
		if o.AupDlvtyp != nil && *o.AupDlvtyp != 0 && *o.AupDlvtyp != 1 {
			v.err("production_options.aup_dlvtyp", fmt.Sprintf("want 0 (priority) or 1 (regular), got %d", *o.AupDlvtyp))
		}
		if o.BackgroundPages != nil && *o.BackgroundPages != "first" && *o.BackgroundPages != "all" {
			v.err("production_options.background_pages", fmt.Sprintf("want \"first\" or \"all\", got %s", quote(*o.BackgroundPages)))
		}
		if o.Stock != nil && !stockName.MatchString(*o.Stock) {
			v.err("production_options.stock", "a stock name is 1 to 32 letters, digits, '-' or '_'")
		}
		if o.SplitPages != nil && (*o.SplitPages < 1 || *o.SplitPages > 10000) {
			v.err("production_options.split_pages", fmt.Sprintf("want 1 to 10000 pages per letter, got %d", *o.SplitPages))
		}
		if o.SplitMarker != nil && (len(trimSpace(*o.SplitMarker)) < 3 || len(*o.SplitMarker) > 100) {
			v.err("production_options.split_marker", "a marker is 3 to 100 characters of text the first page of every letter shows")
		}
		if o.SplitPages != nil && o.SplitMarker != nil {
			v.err("production_options.split_marker", "give split_pages or split_marker, not both")
		}
		if o.Background != nil {
			v.background = *o.Background
			v.lookup("production_options.background", v.background)
		}
	}
	if p.CustomerEmail != nil && trimSpace(*p.CustomerEmail) != "" {
		if why := checkEmail(*p.CustomerEmail); why != "" {
			v.err("customer_email", why)
		}
	}
	if p.ConfirmationEmail != nil && *p.ConfirmationEmail && (p.CustomerEmail == nil || trimSpace(*p.CustomerEmail) == "") {
		v.err("confirmation_email", "true, but no customer_email is given to send the confirmation to")
	}
	if p.EmailFrom != nil && trimSpace(*p.EmailFrom) != "" {
		if why := checkEmail(*p.EmailFrom); why != "" {
			v.err("email_from", why)
		}
	}
	if p.EmailSubj != nil && strings.ContainsAny(*p.EmailSubj, "\r\n") {
		v.err("email_subj", "must be a single line")
	}
	if p.Template != nil && trimSpace(*p.Template) != "" {
		if t, err := tpl.Parse(*p.Template); err != nil {
			v.err("template", err.Error())
		} else {
			v.tmpl = t
		}
	}
	if p.SMSFrom != nil {
		if why := checkSMSFrom(*p.SMSFrom); why != "" {
			v.err("sms_from", why)
		}
	}
}

// IsPhoneNumber reports whether an sms_from is numeric (digits, a
// leading +): a number replies go to, which needs no approval; any other
// sms_from is a name an operator must approve for the account.
func IsPhoneNumber(s string) bool {
	t := trimSpace(s)
	if t == "" {
		return false
	}
	for i, c := range t {
		if !(c >= '0' && c <= '9' || c == '+' && i == 0) {
			return false
		}
	}
	return true
}

// checkSMSFrom: at most 10 characters; a numeric value must be a mobile
// number replies can reach. Any other text must be pre-approved by the
// service, which cannot be checked here.
func checkSMSFrom(s string) string {
	t := trimSpace(s)
	if t == "" {
		return "" // replies go to the service
	}
	if n := utf8.RuneCountInString(t); n > 10 {
		return fmt.Sprintf("%s has %d characters; at most 10 are allowed", quote(t), n)
	}
	numeric := true
	for i, c := range t {
		if !(c >= '0' && c <= '9' || c == '+' && i == 0) {
			numeric = false
		}
		if unicode.IsControl(c) {
			return fmt.Sprintf("%s contains control characters", quote(t))
		}
	}
	if numeric {
		if why := checkMobile(t); why != "" {
			return fmt.Sprintf("%s is numeric but not a mobile number replies could reach: %s", quote(t), why)
		}
	}
	return ""
}

// checkEmail returns why s is not an acceptable email address, or "".
// net/mail parses it (a display name is allowed); the domain must look
// like an Internet domain.
func checkEmail(s string) string {
	t := trimSpace(s)
	a, err := mail.ParseAddress(t)
	if err != nil {
		return fmt.Sprintf("%s is not a valid email address", quote(t))
	}
	at := strings.LastIndexByte(a.Address, '@')
	if at < 0 {
		return fmt.Sprintf("%s is not a valid email address", quote(t))
	}
	local, domain := a.Address[:at], a.Address[at+1:]
	switch {
	case len(a.Address) > 254:
		return fmt.Sprintf("%s is longer than 254 characters", quote(t))
	case len(local) > 64:
		return fmt.Sprintf("%s: the part before @ is longer than 64 characters", quote(t))
	case strings.HasPrefix(domain, "["):
		return fmt.Sprintf("%s: an address literal is not accepted as a domain", quote(t))
	case strings.ContainsAny(domain, " \t"):
		return fmt.Sprintf("%s: the domain contains spaces", quote(t))
	case !strings.Contains(domain, "."):
		return fmt.Sprintf("%s: the domain %s has no dot", quote(t), quote(domain))
	}
	labels := strings.Split(domain, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Sprintf("%s: the domain %s is not valid", quote(t), quote(domain))
		}
	}
	if tld := labels[len(labels)-1]; len(tld) < 2 || strings.Trim(tld, "0123456789") == "" {
		return fmt.Sprintf("%s: the domain %s has no valid top-level domain", quote(t), quote(domain))
	}
	return ""
}

// phoneDigits strips the separators people write in phone numbers
// (spaces, dashes, dots, parentheses) and a leading +.
func phoneDigits(s string) (plus bool, digits string, ok bool) {
	var b strings.Builder
	for _, c := range trimSpace(s) {
		switch {
		case c >= '0' && c <= '9':
			b.WriteRune(c)
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')':
		case c == '+' && !plus && b.Len() == 0:
			plus = true
		default:
			return false, "", false
		}
	}
	return plus, b.String(), b.Len() > 0
}

// checkMobile returns why s is not a mobile number, or "": Australian
// mobiles are 04xxxxxxxx or +614xxxxxxxx, other countries E.164 (+ and 8
// to 15 digits).
func checkMobile(s string) string {
	plus, d, ok := phoneDigits(s)
	switch {
	case !ok:
		return "only digits, spaces, dashes, dots, parentheses and a leading + are allowed"
	case !plus:
		if len(d) == 10 && strings.HasPrefix(d, "04") {
			return ""
		}
		if strings.HasPrefix(d, "61") || strings.HasPrefix(d, "00") {
			return "write an international number with a leading +"
		}
		return "an Australian mobile number is 04 and 8 more digits"
	case strings.HasPrefix(d, "61"):
		rest := d[2:]
		if strings.HasPrefix(rest, "0") {
			return "leave out the 0 after +61"
		}
		if len(rest) == 9 && rest[0] == '4' {
			return ""
		}
		return "an Australian mobile number is +61 4 and 8 more digits"
	}
	return e164(d)
}

func e164(d string) string {
	if len(d) < 8 || len(d) > 15 || d[0] == '0' {
		return "an international number is + and 8 to 15 digits"
	}
	return ""
}

// checkFax returns why s is not a fax number, or "": Australian numbers
// 0[2378]xxxxxxxx, +61[2378]xxxxxxxx, 1300 and 1800 numbers, or E.164.
func checkFax(s string) string {
	plus, d, ok := phoneDigits(s)
	switch {
	case !ok:
		return "only digits, spaces, dashes, dots, parentheses and a leading + are allowed"
	case !plus:
		if len(d) == 10 && d[0] == '0' && strings.IndexByte("2378", d[1]) >= 0 {
			return ""
		}
		if len(d) == 10 && (strings.HasPrefix(d, "1300") || strings.HasPrefix(d, "1800")) {
			return ""
		}
		if strings.HasPrefix(d, "61") || strings.HasPrefix(d, "00") {
			return "write an international number with a leading +"
		}
		return "an Australian fax number is 0, an area code (2, 3, 7 or 8) and 8 digits, or a 1300 or 1800 number"
	case strings.HasPrefix(d, "61"):
		rest := d[2:]
		if strings.HasPrefix(rest, "0") {
			return "leave out the 0 after +61"
		}
		if len(rest) == 9 && strings.IndexByte("2378", rest[0]) >= 0 {
			return ""
		}
		return "an Australian fax number is +61, an area code (2, 3, 7 or 8) and 8 digits"
	}
	return e164(d)
}

// checkName returns why name is not an acceptable document name, or "".
func checkName(name string) string {
	switch {
	case name == "":
		return "empty file name"
	case strings.ContainsAny(name, `/\`):
		return fmt.Sprintf("%s: give a file name without a directory path", quote(name))
	case name == "." || name == "..":
		return fmt.Sprintf("%s is not a file name", quote(name))
	case len(name) >= 2 && name[1] == ':' && (name[0]|0x20 >= 'a' && name[0]|0x20 <= 'z'):
		return fmt.Sprintf("%s: give a file name without a drive", quote(name))
	case !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Sprintf("%s contains control characters", quote(name))
	}
	ext := path.Ext(name)
	switch {
	case len(ext) <= 1:
		return fmt.Sprintf("%s has no extension", quote(name))
	case ext == name:
		return fmt.Sprintf("%s has no name before its extension", quote(name))
	}
	return ""
}

func kindOf(f FileInfo) string {
	if f.Kind != "" {
		return strings.ToLower(f.Kind)
	}
	return strings.ToLower(strings.TrimPrefix(path.Ext(f.Name), "."))
}

func isDocKind(k string) bool { return k == "pdf" || k == "ps" || k == "xps" }

// lookup checks a document reference; it returns the document's index in
// files, or -1 after reporting why it cannot be used.
func (v *resolver) lookup(at, name string) int {
	if v.stop {
		return -1
	}
	if why := checkName(name); why != "" {
		v.err(at, why)
		return -1
	}
	i, ok := v.byName[name]
	if !ok {
		msg := fmt.Sprintf("no document %s in this mailing", quote(name))
		if s := v.similar(name); s != "" {
			msg += "; did you mean " + quote(s) + "?"
		}
		v.err(at, msg)
		return -1
	}
	switch k := kindOf(v.files[i]); {
	case k == "json" || k == "xml":
		v.err(at, fmt.Sprintf("%s is a metadata file, not a document", quote(name)))
		return -1
	case !isDocKind(k):
		v.err(at, fmt.Sprintf("%s is not a document (pdf, ps or xps)", quote(name)))
		return -1
	}
	return i
}

// similar returns the document whose name is closest to name: the same
// but for case or surrounding space, or a likely typo.
func (v *resolver) similar(name string) string {
	if len(name) > 200 {
		return ""
	}
	t := strings.ToLower(trimSpace(name))
	best, bestD := "", 3
	for _, f := range v.files {
		if !isDocKind(kindOf(f)) || len(f.Name) > 200 {
			continue
		}
		d := editDistance(t, strings.ToLower(f.Name))
		stem := max(len(f.Name)-len(path.Ext(f.Name)), len(name)-len(path.Ext(name)))
		if d < bestD && (d == 0 || d < stem && d <= 1+stem/4) {
			best, bestD = f.Name, d
		}
	}
	return best
}

func (v *resolver) uploadedDocs() []string {
	var docs []string
	for _, f := range v.files {
		if !f.Portal && isDocKind(kindOf(f)) {
			docs = append(docs, f.Name)
		}
	}
	return docs
}

// entries lists letter i's document references and records their roles
// (letter document or attachment), reporting rule 1 of spec 2.4.
func (v *resolver) entries(i int) []entry {
	l := &v.p.Letters[i]
	at := fmt.Sprintf("letters[%d]", i)
	var es []entry
	switch {
	case len(l.Files) > 0:
		if l.FileName != "" {
			v.err(at+".file_name", "give file_name or files, not both")
		}
		if l.PageStart != nil {
			v.err(at+".page_start", "with files, give page_start in each file entry")
		}
		if l.PageEnd != nil {
			v.err(at+".page_end", "with files, give page_end in each file entry")
		}
		for k, f := range l.Files {
			e := entry{name: f.FileName, start: f.PageStart, end: f.PageEnd, path: fmt.Sprintf("%s.files[%d]", at, k)}
			if v.p.AttachmentsSet {
				e.attach = f.FileName != "" && v.attach[f.FileName]
			} else {
				e.attach = k > 0
			}
			es = append(es, e)
		}
	case l.FileName != "" || l.PageStart != nil || l.PageEnd != nil:
		es = append(es, entry{name: l.FileName, start: l.PageStart, end: l.PageEnd, path: at})
	}
	for _, e := range es {
		if e.name == "" {
			continue
		}
		where := e.path + ".file_name"
		if e.attach {
			if first, ok := v.letterRef[e.name]; ok {
				v.err(where, fmt.Sprintf("%s is the letter document of %s and cannot also be an attachment (rule 1 of spec 2.4)", quote(e.name), strings.TrimSuffix(first, ".file_name")))
				continue
			}
			if _, ok := v.attachRef[e.name]; !ok {
				v.attachRef[e.name] = where
			}
			continue
		}
		if v.attach[e.name] {
			list := "attachments"
			if src := v.p.sourceOf("attachments"); src != "" {
				list = "the attachments of " + src
			}
			v.err(where, fmt.Sprintf("%s is listed in %s and cannot also be a letter document (rule 1 of spec 2.4)", quote(e.name), list))
			continue
		}
		if first, ok := v.attachRef[e.name]; ok {
			v.err(where, fmt.Sprintf("%s is an attachment in %s and cannot also be a letter document (rule 1 of spec 2.4)", quote(e.name), strings.TrimSuffix(first, ".file_name")))
			continue
		}
		if _, ok := v.letterRef[e.name]; !ok {
			v.letterRef[e.name] = where
		}
	}
	return es
}

// chooseDefault picks the document of letters that name none: the first
// uploaded document that is not an attachment (rules 2 and 3). It counts
// the candidates: the uploaded documents such a letter could mean.
func (v *resolver) chooseDefault() {
	for _, name := range v.uploadedDocs() {
		if !v.attach[name] && v.attachRef[name] == "" && name != v.background {
			if v.candidates == 0 {
				v.defaultDoc = name
			}
			v.candidates++
		}
	}
}

func (v *resolver) referencedAny() bool {
	return len(v.attach) > 0 || len(v.letterRef) > 0 || len(v.attachRef) > 0
}

func (v *resolver) doc(e entry, name string, attach bool) (PlannedDocument, bool) {
	at := e.path + ".file_name"
	if e.path == "" {
		at = ""
	}
	i := v.lookup(at, name)
	pages := 0
	if i >= 0 {
		pages = v.files[i].Pages
	}
	d := PlannedDocument{Name: name, PageEnd: -1, Attachment: attach}
	if pages > 0 {
		d.PageEnd = pages - 1
	}
	ok := i >= 0
	if ok && name == v.background {
		v.err(at, fmt.Sprintf("%s is the mailing's background (production_options.background): it cannot also be a letter's document or attachment", quote(name)))
		ok = false
	}
	pre := e.path
	if pre != "" {
		pre += "."
	}
	check := func(key string, p *int) {
		switch {
		case p == nil:
		case *p < 0:
			v.err(pre+key, fmt.Sprintf("%d is negative: pages are numbered from 0", *p))
			ok = false
		case pages > 0 && *p >= pages:
			v.err(pre+key, fmt.Sprintf("%d is beyond the last page of %s (%s, numbered 0 to %d)", *p, quote(name), count(pages, "page"), pages-1))
			ok = false
		}
	}
	check("page_start", e.start)
	check("page_end", e.end)
	if e.start != nil && e.end != nil && *e.start > *e.end && *e.start >= 0 && *e.end >= 0 {
		v.err(pre+"page_start", fmt.Sprintf("%d is after page_end %d", *e.start, *e.end))
		ok = false
	}
	if e.start != nil {
		d.PageStart = *e.start
	}
	if e.end != nil {
		d.PageEnd = *e.end
	}
	return d, ok
}

var channelOrder = []string{"sms", "fax", "email", "postal"}

func (v *resolver) letter(i int, es []entry) PlannedLetter {
	l := &v.p.Letters[i]
	at := fmt.Sprintf("letters[%d]", i)
	pl := PlannedLetter{Index: i, Reference: trimSpace(l.Reference), CustomData: l.CustomData}

	// Documents: the letter's own, then its attachments, then the
	// mailing's attachments no letter references.
	var own, att []PlannedDocument
	ownErr := false
	for _, e := range es {
		name := e.name
		if name == "" {
			if v.defaultDoc == "" {
				if !e.attach && (e.start != nil || e.end != nil) {
					v.err(e.path, "page_start or page_end given, but there is no document")
					ownErr = true
				}
				continue
			}
			name = v.defaultDoc
			v.defaultUsed(e.path)
		}
		d, ok := v.doc(e, name, e.attach)
		if !e.attach {
			v.usedAsDoc[name] = true // even with a problem: it is not unused
		}
		switch {
		case !ok && !e.attach:
			ownErr = true
		case !ok:
		case e.attach:
			att = append(att, d)
		default:
			own = append(own, d)
		}
	}
	if len(own) == 0 && !ownErr && v.defaultDoc != "" {
		if d, ok := v.doc(entry{}, v.defaultDoc, false); ok {
			own = append(own, d)
		}
		v.usedAsDoc[v.defaultDoc] = true
		v.defaultUsed(at)
	}
	pl.TextOnly = len(own) == 0 && !ownErr
	pl.Documents = append(own, att...)
	for _, d := range pl.Documents {
		v.cover(d)
	}
	seen := map[string]bool{}
	for _, name := range v.p.Attachments {
		if seen[name] || v.attachRef[name] != "" {
			continue
		}
		seen[name] = true
		if i, ok := v.byName[name]; ok && isDocKind(kindOf(v.files[i])) && checkName(name) == "" {
			d := PlannedDocument{Name: name, PageEnd: -1, Attachment: true}
			if n := v.files[i].Pages; n > 0 {
				d.PageEnd = n - 1
			}
			pl.Documents = append(pl.Documents, d)
		}
	}

	// Channels.
	given := map[string]string{
		"sms":   trimSpace(l.SMS),
		"fax":   trimSpace(l.Fax),
		"email": trimSpace(l.Email),
	}
	if l.Postal != nil && len(l.Postal.Lines) > 0 {
		given["postal"] = "yes"
		pl.Postal = l.Postal.Lines
	}
	pl.SMS, pl.Fax, pl.Email = given["sms"], given["fax"], given["email"]
	if pl.SMS == "" && pl.Fax == "" && pl.Email == "" && pl.Postal == nil {
		v.err(at, "no delivery channel: give at least one of postal, email, fax, sms")
	}
	switch pr := l.Primary; {
	case pr == "":
		for _, c := range channelOrder {
			if given[c] != "" {
				pl.Primary = c
				break
			}
		}
	case indexOf(channelOrder, pr) < 0:
		msg := fmt.Sprintf("want postal, email, sms or fax, got %s", quote(pr))
		if s := suggest(pr, channelOrder); s != "" {
			msg += "; did you mean " + s + "?"
		}
		v.err(at+".primary", msg)
	case given[pr] == "":
		v.err(at+".primary", fmt.Sprintf("%s is primary, but the letter has no %s", pr, pr))
	default:
		pl.Primary = pr
	}
	if pl.Primary != "" {
		pl.Channels = append(pl.Channels, pl.Primary)
	}
	for _, c := range channelOrder {
		if given[c] != "" && c != pl.Primary {
			pl.Channels = append(pl.Channels, c)
		}
	}
	if pl.Email != "" {
		if why := checkEmail(pl.Email); why != "" {
			v.err(at+".email", why)
		}
	}
	if pl.SMS != "" {
		if strings.Contains(pl.SMS, "@") {
			if why := checkEmail(pl.SMS); why != "" {
				v.err(at+".sms", why)
			}
		} else if why := checkMobile(pl.SMS); why != "" {
			v.err(at+".sms", fmt.Sprintf("%s is neither a mobile number nor an email address: %s", quote(pl.SMS), why))
		}
	}
	if pl.Fax != "" {
		if why := checkFax(pl.Fax); why != "" {
			v.err(at+".fax", fmt.Sprintf("%s is not a fax number: %s", quote(pl.Fax), why))
		}
	}
	if pw, ok := l.CustomData["password"]; ok {
		switch {
		case trimSpace(pw) == "":
			v.err(at+".custom_data.password", "empty password")
		case pdf.CheckPassword(pw) != "":
			v.err(at+".custom_data.password", pdf.CheckPassword(pw))
		case pl.Email == "" && pl.SMS == "":
			v.warn(at+".custom_data.password", "a password protects a PDF sent by email or SMS; this letter has neither")
		}
	}
	// the template is the body of its email or SMS: every key it uses is
	// the letter's, and {{link}} needs a PDF to link to
	if v.tmpl != nil && (pl.Email != "" || pl.SMS != "") {
		for _, e := range v.tmpl.CheckLetter(i, l.CustomData) {
			v.err(e.Path(), e.Reason())
		}
		if v.tmpl.UsesLink() && len(pl.Documents) == 0 {
			v.err(at, "the template's {{link}} links to the letter's PDF, but the letter has no document")
		}
	}

	if pl.TextOnly {
		template := v.p.Template != nil && trimSpace(*v.p.Template) != ""
		switch {
		case !template:
			v.err(at, "no document and no template: nothing to send")
		case pl.Primary == "postal" || pl.Primary == "fax":
			where := at
			if l.Primary != "" {
				where += ".primary"
			}
			v.err(where, fmt.Sprintf("a letter without a document goes by email or sms; %s needs a document", pl.Primary))
		default:
			for _, c := range []string{"fax", "postal"} {
				if given[c] != "" {
					v.warn(at+"."+c, "not used: the letter has no document to "+map[string]string{"fax": "fax", "postal": "print"}[c])
				}
			}
		}
	}
	return pl
}

// defaultUsed notes that a letter took the default document without
// naming it: a warning when several documents could have been meant.
func (v *resolver) defaultUsed(at string) {
	if v.candidates < 2 {
		return // rule 2: one document, names may be omitted
	}
	if !v.referencedAny() {
		return // rule 3, reported once by unused
	}
	v.warn(at, fmt.Sprintf("no file_name, and several documents were uploaded: the first, %s, is used", quote(v.defaultDoc)))
}

// unused reports uploaded documents no letter uses.
func (v *resolver) unused() {
	var left []string
	for _, name := range v.uploadedDocs() {
		if !v.usedAsDoc[name] && !v.attach[name] && v.attachRef[name] == "" && name != v.background {
			left = append(left, name)
		}
	}
	if len(left) == 0 {
		return
	}
	if !v.referencedAny() && v.usedAsDoc[v.defaultDoc] {
		v.warn("", fmt.Sprintf("several documents were uploaded and none is referenced as a letter file or an attachment: only the first, %s, is used; %s ignored (rule 3 of spec 2.4)", quote(v.defaultDoc), nameList(left)))
		return
	}
	v.warn("", fmt.Sprintf("%s uploaded but not used by any letter", nameList(left)))
}

// cover records the pages a letter takes from its letter document, when
// the page count is known. Attachments are not counted: taking some
// pages of an insert is a choice, not a letter lost, and a document is
// a letter document or an attachment, not both (rule 1).
func (v *resolver) cover(d PlannedDocument) {
	if d.Attachment || d.PageEnd < 0 || d.PageStart > d.PageEnd {
		return
	}
	if i, ok := v.byName[d.Name]; ok && v.files[i].Pages > 0 {
		v.covered[d.Name] = append(v.covered[d.Name], [2]int{d.PageStart, d.PageEnd})
	}
}

// uncovered warns of pages of a letter document that no letter takes:
// with page ranges (a statement run), a range left out is a letter lost.
// Nothing is said while there are errors, whose ranges are not counted.
func (v *resolver) uncovered() {
	if HasErrors(v.probs) {
		return
	}
	for _, f := range v.files {
		ranges := v.covered[f.Name]
		if len(ranges) == 0 || f.Pages <= 0 {
			continue
		}
		delete(v.covered, f.Name) // a name uploaded twice is looked at once
		sort.Slice(ranges, func(i, j int) bool { return ranges[i][0] < ranges[j][0] })
		var gaps [][2]int
		next := 0 // the first page not known to be covered
		for _, r := range ranges {
			if r[0] > next {
				gaps = append(gaps, [2]int{next, r[0] - 1})
			}
			next = max(next, r[1]+1)
		}
		if next < f.Pages {
			gaps = append(gaps, [2]int{next, f.Pages - 1})
		}
		if len(gaps) == 0 {
			continue
		}
		v.warn("", fmt.Sprintf("%s: %s in no letter and will not be sent (%s, numbered 0 to %d, as page_start and page_end)",
			quote(f.Name), pageList(gaps), count(f.Pages, "page"), f.Pages-1))
	}
}

// pageList writes page ranges as people read them: "page 4", "pages 2-6,
// 9 and 12-14 are", at most 10 ranges and then how many more pages.
func pageList(gaps [][2]int) string {
	const max = 10
	var b strings.Builder
	pages := 0
	for _, g := range gaps {
		pages += g[1] - g[0] + 1
	}
	if pages == 1 {
		return fmt.Sprintf("page %d is", gaps[0][0])
	}
	b.WriteString("pages ")
	shown := 0
	for i, g := range gaps {
		if i == max {
			break
		}
		switch {
		case i == 0:
		case i == len(gaps)-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		if g[0] == g[1] {
			fmt.Fprintf(&b, "%d", g[0])
		} else {
			fmt.Fprintf(&b, "%d-%d", g[0], g[1])
		}
		shown += g[1] - g[0] + 1
	}
	if len(gaps) > max {
		fmt.Fprintf(&b, " and %s", count(pages-shown, "more page"))
	}
	b.WriteString(" are")
	return b.String()
}

func nameList(names []string) string {
	const max = 5
	q := make([]string, 0, max)
	for i, n := range names {
		if i == max {
			break
		}
		q = append(q, quote(n))
	}
	s := strings.Join(q, ", ")
	if len(names) > max {
		s += fmt.Sprintf(" and %d more", len(names)-max)
	}
	if len(names) == 1 {
		return "document " + s + " is"
	}
	return "documents " + s + " are"
}
