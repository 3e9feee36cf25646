package upload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/datafiles"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/upload/inspect"
	"github.com/lodge-mail/lodge/upload/metadata"
)

// LodgerConfig tunes a Lodger. The zero value means the documented
// defaults.
type LodgerConfig struct {
	Inspect  inspect.Limits
	Metadata metadata.Limits
	// InProcess counts pages in this process instead of a child process.
	// The default isolates document parsing: a hostile document can at
	// worst kill the child.
	InProcess bool
	Host      string
	// ProfileDir holds the accounts' profiles (see profiles.go); empty for
	// none.
	ProfileDir string
	// Profiles, when set, holds the profiles instead of ProfileDir (under
	// the same names, <ACCOUNT>/<name>.json): the shared files of several
	// nodes (datafiles.NewPostgres, lodge settings put). ProfileDir still
	// names them in messages.
	Profiles datafiles.Files
	// Senders returns the sender identities an operator approved for an
	// account (email_from domains, alphanumeric sms_from names); nil
	// approves none.
	Senders func(account string) (pipeline.Senders, error)
	// Library finds the account's portal documents that metadata names
	// (portaldocs.go); nil: metadata names only the session's files.
	Library PortalDocs
}

// Mailroom takes the mailings end_session accepts and produces them
// (package pipeline's Mailroom): from then on it owns the mailing's
// letters and their statuses.
type Mailroom interface {
	// Submit records a mailing and its letters; pipeline.ErrExists when
	// it was recorded before (an end_session repeated after a crash).
	Submit(m pipeline.Mailing, letters []pipeline.Letter) error
	// Holds says which letters Submit will hold, and why.
	Holds(m *pipeline.Mailing, letters []pipeline.Letter) map[int]string
	Store() pipeline.Store
}

// Lodger assembles mailings from ended sessions and hands them to the
// mailroom: it is the upload handler's Assembler.
type Lodger struct {
	store *Store
	eng   *engine.Engine
	mr    Mailroom
	cfg   LodgerConfig
	log   *slog.Logger
	files func(epid string, files []File) []EndFile
}

// NewLodger returns a Lodger judging addresses with eng and handing
// mailings to mr.
func NewLodger(store *Store, eng *engine.Engine, mr Mailroom, cfg LodgerConfig, log *slog.Logger) *Lodger {
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}
	if log == nil {
		log = slog.Default()
	}
	l := &Lodger{store: store, eng: eng, mr: mr, cfg: cfg, log: log}
	h := &Handler{cfg: Config{Host: cfg.Host}}
	l.files = h.EndFiles
	return l
}

// End validates a session's files and metadata and, when nothing is wrong,
// hands the mailing and its letters to the mailroom and ends the session.
// A session whose mailing the mailroom already has (a crash came between
// the two) is ended with the answer recorded then. The caller holds the
// session's lock.
func (l *Lodger) End(ss Session, files []File) (EndResult, error) {
	if m, err := l.mr.Store().Mailing(ss.EPID); err == nil {
		return l.resume(ss, m)
	} else if !errors.Is(err, pipeline.ErrNotFound) {
		return EndResult{}, err
	}
	res := EndResult{SessionID: ss.EPID}
	files, err := l.dropPortalCopies(ss, files)
	if err != nil {
		return res, err
	}
	var probs []string
	reject := func() (EndResult, error) {
		files, _ := l.store.Files(ss.EPID)
		res.Files = l.files(ss.EPID, files)
		res.Result, res.Status = "error", "rejected"
		res.Errs = probs
		if len(probs) == 1 {
			res.Error = probs[0]
		} else {
			res.Error = fmt.Sprintf("%d problems: the session stays open for corrected files", len(probs))
		}
		return res, nil
	}
	if len(files) == 0 {
		probs = append(probs, "no files were uploaded in this session")
		return reject()
	}
	// unpack archives into the session
	if files, probs, err = l.unpack(ss, files); err != nil {
		return res, err
	}
	if len(probs) > 0 {
		return reject()
	}
	// page counts of the documents, metadata apart
	var meta []File
	var infos metadata.Files
	var sizeWarns []string // pages not A4, document by document
	changed := map[string]File{}
	for i := range files {
		f := &files[i] // counted pages are kept in files for commit
		switch f.Kind {
		case "json", "xml":
			meta = append(meta, *f)
			continue
		case "zip":
			continue
		}
		if f.Pages == 0 {
			d, err := l.inspect(ss.EPID, *f)
			if errors.Is(err, inspect.ErrBusy) || errors.Is(err, inspect.ErrNoGhostscript) {
				// nothing wrong with the files: 503 (retry later) or 500
				// (the operator must install Ghostscript)
				return res, err
			}
			if err != nil {
				probs = append(probs, fmt.Sprintf("%s: %v", f.Name, err))
				continue
			}
			f.Pages = d.Pages
			f.PageSizes = strings.Join(pageSizeWarnings(f.Name, d), "\n")
			changed[f.Name] = *f
		}
		if f.PageSizes != "" {
			sizeWarns = append(sizeWarns, strings.Split(f.PageSizes, "\n")...)
		}
		infos = append(infos, metadata.FileInfo{Name: f.Name, Kind: f.Kind, Pages: f.Pages})
	}
	if len(changed) > 0 {
		if err := l.store.Update(func(t *Tx) error {
			for _, f := range changed {
				t.PutFile(ss.EPID, f)
			}
			return nil
		}); err != nil {
			return res, err
		}
	}
	if len(meta) > 1 {
		names := make([]string, len(meta))
		for i, m := range meta {
			names[i] = m.Name
		}
		probs = append(probs, "several metadata files ("+strings.Join(names, ", ")+"): upload one")
		return reject()
	}
	// Every problem is reported at once: a broken document does not hide
	// the metadata's problems (the plan, which needs every document's
	// pages, waits for the documents to be right).
	docProbs := len(probs) > 0
	var pack *metadata.Pack
	var plan []metadata.PlannedLetter
	var warns []string
	var portal []PortalDoc // library documents the metadata names, open
	defer func() { closePortalDocs(portal) }()
	if len(meta) == 1 {
		b, err := l.store.readFile(context.Background(), ss.EPID, meta[0])
		if err != nil {
			return res, err
		}
		var mp []metadata.Problem
		pack, mp = metadata.Parse(meta[0].Name, b, l.cfg.Metadata)
		if !metadata.HasErrors(mp) {
			mp = append(mp, l.applyProfiles(ss.Account, pack)...)
		}
		if !metadata.HasErrors(mp) {
			mp = append(mp, l.checkSenders(ss.Account, pack)...)
		}
		if !metadata.HasErrors(mp) && !docProbs {
			var pinfos metadata.Files
			if pinfos, portal, err = l.portalDocs(ss.Account, pack, files); err != nil {
				return res, err
			}
			infos = append(infos, pinfos...)
			var pp []metadata.Problem
			plan, pp = pack.Plan(infos)
			mp = append(mp, pp...)
		}
		for _, p := range mp {
			if p.Warning {
				w := p
				w.Warning = false // the list says it: no "warning: " in each entry
				warns = append(warns, w.In(meta[0].Name))
			} else {
				probs = append(probs, p.In(meta[0].Name))
			}
		}
		if len(probs) > 0 {
			return reject()
		}
		if len(plan) == 0 && len(infos) == 0 {
			probs = append(probs, "no document was uploaded (pdf, ps or xps): a mailing without letters needs its documents")
			return reject()
		}
		if len(plan) == 0 && pack != nil && letterDocs(infos, pack) == 0 {
			probs = append(probs, "every document is an attachment or the background: a mailing without letters needs a document the auto processor reads letters from")
			return reject()
		}
	} else if docProbs {
		return reject()
	} else if len(infos) == 0 {
		probs = append(probs, "no document was uploaded (pdf, ps or xps)")
		return reject()
	}
	return l.commit(ss, files, portal, meta, pack, plan, append(sizeWarns, warns...))
}

// unpack extracts every ZIP of the session into it as files of their own.
func (l *Lodger) unpack(ss Session, files []File) ([]File, []string, error) {
	var probs []string
	out := files[:0:0]
	var unpacked []File
	// A name belongs to one file: one uploaded on its own, or one entry of
	// one archive. An entry may not replace an uploaded file (the client's
	// own upload would be lost) nor another archive's entry.
	owner := map[string]string{} // name → "" (uploaded on its own) or the archive
	for _, f := range files {
		if f.Archive == "" {
			owner[f.Name] = ""
		}
	}
	for _, f := range files {
		if f.Archive != "" {
			// unpacked by an earlier end_session: its archive is unpacked
			// again below, replacing it
			unpacked = append(unpacked, f)
			continue
		}
		if f.Kind != "zip" {
			out = append(out, f)
			continue
		}
		path, err := l.store.LocalPath(context.Background(), ss.EPID, f)
		if err != nil {
			return nil, nil, err
		}
		fh, err := os.Open(path)
		if err != nil {
			return nil, nil, err
		}
		a, err := inspect.OpenZip(fh, f.Size, l.cfg.Inspect)
		if err != nil {
			fh.Close()
			probs = append(probs, fmt.Sprintf("%s: %v", f.Name, err))
			continue
		}
		f.Intent = IntentArchive
		out = append(out, f)
		for _, e := range a.Entries() {
			ext, status, msg := CheckName(e.Name)
			if status != 0 || ext == "zip" {
				if msg == "" {
					msg = "archives inside archives are not accepted"
				}
				probs = append(probs, fmt.Sprintf("%s!%s: %s", f.Name, e.Name, msg))
				continue
			}
			if o, taken := owner[e.Name]; taken {
				if o == "" {
					msg = "a file of this name was also uploaded on its own: rename one of them"
				} else {
					msg = "a file of this name is also in " + o + ": rename one of them"
				}
				probs = append(probs, fmt.Sprintf("%s!%s: %s", f.Name, e.Name, msg))
				continue
			}
			owner[e.Name] = f.Name
			var buf bytes.Buffer
			if _, err := a.Extract(e.Name, &buf); err != nil {
				probs = append(probs, fmt.Sprintf("%s!%s: %v", f.Name, e.Name, err))
				continue
			}
			archive := f.Name
			nf, err := l.store.putFileLocked(ss, f.By, e.Name, int64(buf.Len()), &buf,
				func(head []byte) (string, error) { return checkContent(e.Name, ext, head) },
				func(r *File) { r.Archive = archive })
			if err != nil {
				probs = append(probs, fmt.Sprintf("%s!%s: %v", f.Name, e.Name, err))
				continue
			}
			out = append(out, nf)
		}
		fh.Close()
	}
	// files of an earlier version of an archive that the current one lacks
	kept := map[string]bool{}
	for _, f := range out {
		kept[f.Name] = true
	}
	for _, f := range unpacked {
		if kept[f.Name] {
			continue
		}
		if err := l.store.Update(func(t *Tx) error { t.deleteFile(ss.EPID, f.Name); return nil }); err != nil {
			return nil, nil, err
		}
		l.store.removeBlob(ss.EPID, f)
	}
	return out, probs, nil
}

// inspect counts a document's pages, in a child process unless
// configured otherwise.
func (l *Lodger) inspect(epid string, f File) (inspect.Document, error) {
	path, err := l.store.LocalPath(context.Background(), epid, f)
	if err != nil {
		return inspect.Document{}, err
	}
	kind := inspect.Kind(f.Kind)
	if !l.cfg.InProcess {
		lim := l.cfg.Inspect.WithDefaults()
		ctx, cancel := context.WithTimeout(context.Background(), lim.ChildWait+lim.Timeout+5*time.Second)
		defer cancel()
		return inspect.InspectIsolated(ctx, kind, path, l.cfg.Inspect)
	}
	fh, err := os.Open(path)
	if err != nil {
		return inspect.Document{}, err
	}
	defer fh.Close()
	return inspect.Inspect(kind, fh, f.Size, l.cfg.Inspect)
}

// commit hands the mailing to the mailroom and ends the session: first
// the mailroom records the mailing and its letters (one durable commit),
// then the session is marked ended (another). A crash between the two
// leaves the session open with its mailing recorded; the next
// end_session finds the mailing and finishes (resume).
func (l *Lodger) commit(ss Session, files []File, portal []PortalDoc, meta []File, pack *metadata.Pack, plan []metadata.PlannedLetter, warns []string) (EndResult, error) {
	copies, err := l.copyPortalDocs(ss, portal)
	if err != nil {
		return EndResult{}, err
	}
	files = append(files, copies...)
	now := l.store.opt.Now().UTC()
	by := ss.EndedBy
	if by == "" {
		by = ss.User
	}
	m := pipeline.Mailing{EPID: ss.EPID, Account: ss.Account, User: by, Created: now}
	if pack != nil {
		m.Title, m.Department, m.PurchaseOrder = deref(pack.Title), deref(pack.Department), deref(pack.PurchaseOrder)
		if pack.CustHold != nil {
			m.CustHold = *pack.CustHold
		}
		m.Settings, _ = json.Marshal(pack.Attributes()) // after profiles; letters apart
		m.Production = production(pack)
	} else {
		m.Production = production(&metadata.Pack{})
	}
	auto := pack == nil || !pack.HasLetters()
	m.Auto = auto
	status := PackReceived
	if auto {
		status = PackQueuedAuto
	}
	used := map[string]int{}
	for _, f := range meta {
		used[f.Name] = IntentMetadata
	}
	if bg := m.Production.Background; bg != "" {
		used[bg] = IntentAttachment // printed with the letters, as an attachment is
	}
	letters := make([]pipeline.Letter, 0, len(plan))
	var lines [engine.MaxComponents + 2]string
	for i, pl := range plan {
		lt := pipeline.Letter{Idx: i, Reference: pl.Reference, Channels: pl.Channels, Email: pl.Email, SMS: pl.SMS, Fax: pl.Fax, CustomData: pl.CustomData}
		if len(pl.Postal) > 0 {
			lt.Postal = pl.Postal
			r := l.eng.Check(append(lines[:0], pl.Postal...), false)
			lt.Address = &pipeline.Verdict{Status: r.Status.String(), Nation: r.Nation, Message: r.Message}
		}
		for _, d := range pl.Documents {
			lt.Documents = append(lt.Documents, pipeline.DocPart{File: d.Name, PageStart: d.PageStart, PageEnd: d.PageEnd, Attachment: d.Attachment})
			if d.Attachment {
				used[d.Name] = IntentAttachment
			} else if used[d.Name] != IntentAttachment {
				used[d.Name] = IntentDocument
			}
		}
		letters = append(letters, lt)
	}
	for _, f := range files {
		switch f.Kind {
		case "pdf", "ps", "xps":
			// Path is where this node reads the bytes (for a shared
			// store, valid on this node only); Blob is their key in the
			// blob store, for any node
			path, err := l.store.LocalPath(context.Background(), ss.EPID, f)
			if err == nil {
				path, err = filepath.Abs(path)
			}
			if err != nil {
				return EndResult{}, err
			}
			m.Files = append(m.Files, pipeline.File{Name: f.Name, Kind: f.Kind, Path: path, Blob: BlobKey(ss.EPID, f), Pages: f.Pages, SHA1: f.SHA1})
		}
	}
	// which letters will be held, and why: told now, so that the client
	// need not poll to find out
	holds := l.mr.Holds(&m, letters)
	for i := range letters {
		if why, ok := holds[i]; ok {
			name := fmt.Sprintf("letters[%d]", i)
			if r := letters[i].Reference; r != "" {
				name += fmt.Sprintf(" (reference %q)", r)
			}
			warns = append(warns, name+": will be held: "+why)
		}
	}
	res := EndResult{SessionID: ss.EPID, Result: "ok", Status: status, Errs: []string{}, Warnings: warns}
	for i := range files {
		switch {
		case files[i].Intent == IntentArchive:
		case used[files[i].Name] != 0:
			files[i].Intent = used[files[i].Name]
		case auto && files[i].Kind != "json" && files[i].Kind != "xml":
			files[i].Intent = IntentDocument
		default:
			files[i].Intent = IntentUnused
		}
	}
	res.Files = l.files(ss.EPID, files)
	m.Result, _ = json.Marshal(res)
	if err := l.mr.Submit(m, letters); err != nil && !errors.Is(err, pipeline.ErrExists) {
		return EndResult{}, err
	}
	if err := l.endSession(ss, files, res, now); err != nil {
		return EndResult{}, err
	}
	var bytes int64
	for _, f := range files {
		if f.Archive == "" { // an archive's entries are in its bytes
			bytes += f.Size
		}
	}
	l.log.Info("mailing accepted", "epid", ss.EPID, "account", ss.Account, "user", ss.EndedBy, "status", status,
		"letters", len(letters), "held", len(holds), "files", len(files), "bytes", bytes)
	mt := l.store.m
	mt.sessionsEnded.Inc()
	add(mt.mailings, status, 1)
	add(mt.letters, pipeline.Received, len(letters)-len(holds))
	add(mt.letters, pipeline.Held, len(holds))
	return res, nil
}

// endSession marks a session ended with its answer, its files' intents
// recorded.
func (l *Lodger) endSession(ss Session, files []File, res EndResult, now time.Time) error {
	ss.State, ss.Ended, ss.Result = StateEnded, now, &res
	return l.store.Update(func(t *Tx) error {
		for _, f := range files {
			t.PutFile(ss.EPID, f)
		}
		t.PutSession(ss)
		return nil
	})
}

// resume finishes an end_session that recorded its mailing in the
// mailroom but stopped before the session was marked ended: the answer is
// the one recorded with the mailing.
func (l *Lodger) resume(ss Session, m pipeline.Mailing) (EndResult, error) {
	var res EndResult
	if err := json.Unmarshal(m.Result, &res); err != nil {
		return EndResult{}, fmt.Errorf("mailing %s: its recorded end_session answer: %w", ss.EPID, err)
	}
	files, err := l.store.Files(ss.EPID)
	if err != nil {
		return EndResult{}, err
	}
	intent := map[string]int{}
	for _, f := range res.Files {
		intent[f.Name] = f.Intent
	}
	for i := range files {
		if in, ok := intent[files[i].Name]; ok {
			files[i].Intent = in
		}
	}
	l.log.Info("end_session resumed: the mailing was recorded before a restart", "epid", ss.EPID)
	return res, l.endSession(ss, files, res, m.Created)
}

// checkSenders checks the mailing's sender identities against what an
// operator approved for the account: an email_from whose domain is not
// one of its domains (or a subdomain of one), an alphanumeric sms_from
// not among its names. A mobile number as sms_from needs no approval
// (replies go to it, spec 2.2).
func (l *Lodger) checkSenders(account string, p *metadata.Pack) []metadata.Problem {
	from, sms := strings.TrimSpace(deref(p.EmailFrom)), strings.TrimSpace(deref(p.SMSFrom))
	if from == "" && (sms == "" || metadata.IsPhoneNumber(sms)) {
		return nil
	}
	var ok pipeline.Senders
	if l.cfg.Senders != nil {
		var err error
		if ok, err = l.cfg.Senders(account); err != nil {
			l.log.Error("account settings unreadable: no sender approved", "account", account, "err", err)
		}
	}
	var probs []metadata.Problem
	if from != "" {
		domain := ""
		if a, err := mail.ParseAddress(from); err == nil {
			_, domain, _ = strings.Cut(a.Address, "@")
			domain = strings.ToLower(domain)
		}
		approved := false
		for _, d := range ok.EmailDomains {
			if domain == d || strings.HasSuffix(domain, "."+d) {
				approved = true
			}
		}
		if !approved {
			probs = append(probs, metadata.Problem{Path: "email_from", Message: fmt.Sprintf("the domain %q is not approved for account %s: an operator approves it with lodge account sender add %s -email %s", domain, account, account, domain)})
		}
	}
	if sms != "" && !metadata.IsPhoneNumber(sms) && !slices.Contains(ok.SMSNames, sms) {
		probs = append(probs, metadata.Problem{Path: "sms_from", Message: fmt.Sprintf("%q is not approved for account %s: a mobile number needs no approval; a name does (lodge account sender add %s -sms %q)", sms, account, account, sms)})
	}
	return probs
}

// letterDocs counts the documents the auto processor reads letters from:
// those that are neither the mailing's attachments nor its background.
func letterDocs(infos metadata.Files, p *metadata.Pack) int {
	n := 0
	for _, f := range infos {
		if !slices.Contains(p.Attachments, f.Name) && (p.ProductionOptions == nil || deref(p.ProductionOptions.Background) != f.Name) {
			n++
		}
	}
	return n
}

// production reads a mailing's print settings from its attributes:
// duplex; colour_model 0 (the default) mono, 1 or more colour;
// production_options.force_c4; aup_dlvtyp 0 priority, else regular; the
// extensions background (first page only by default), cover_sheet, stock,
// and the auto processor's split_pages and split_marker.
func production(p *metadata.Pack) pipeline.Production {
	var pr pipeline.Production
	if p.Duplex != nil {
		pr.Duplex = *p.Duplex
	}
	if p.ColourModel != nil {
		pr.Colour = *p.ColourModel > 0
	}
	pr.Postage = "regular"
	if po := p.ProductionOptions; po != nil {
		if po.ForceC4 != nil {
			pr.ForceC4 = *po.ForceC4
		}
		if po.AupDlvtyp != nil && *po.AupDlvtyp == 0 {
			pr.Postage = "priority"
		}
		pr.Background, pr.BackgroundPages, pr.Stock = deref(po.Background), deref(po.BackgroundPages), deref(po.Stock)
		if po.CoverSheet != nil {
			pr.CoverSheet = *po.CoverSheet
		}
		if po.SplitPages != nil {
			pr.SplitPages = *po.SplitPages
		}
		pr.SplitMarker = strings.TrimSpace(deref(po.SplitMarker))
	}
	if pr.Background != "" && pr.BackgroundPages == "" {
		pr.BackgroundPages = "first"
	}
	return pr
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
