package upload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/engine"
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
	// PollInterval is how often the worker looks for jobs it was not told
	// about (default 5 s); end_session wakes it at once.
	PollInterval time.Duration
	Host         string
	// ProfileDir holds the accounts' profiles (see profiles.go); empty for
	// none.
	ProfileDir string
}

// Lodger assembles mailings from ended sessions and lodges them: it is the
// upload handler's Assembler and runs the lodgement worker.
type Lodger struct {
	store *Store
	eng   *engine.Engine
	cfg   LodgerConfig
	log   *slog.Logger
	wake  chan struct{}
	files func(epid string, files []File) []EndFile
}

// NewLodger returns a Lodger judging addresses with eng.
func NewLodger(store *Store, eng *engine.Engine, cfg LodgerConfig, log *slog.Logger) *Lodger {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 5 * time.Second
	}
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}
	if log == nil {
		log = slog.Default()
	}
	l := &Lodger{store: store, eng: eng, cfg: cfg, log: log, wake: make(chan struct{}, 1)}
	h := &Handler{cfg: Config{Host: cfg.Host}}
	l.files = h.EndFiles
	return l
}

// End validates a session's files and metadata and, when nothing is wrong,
// commits the mailing, its letters and a lodgement job in one synced batch
// and ends the session. The caller holds the session's lock.
func (l *Lodger) End(ss Session, files []File) (EndResult, error) {
	res := EndResult{SessionID: ss.EPID}
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
	var err error
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
	for _, f := range files {
		switch f.Kind {
		case "json", "xml":
			meta = append(meta, f)
			continue
		case "zip":
			continue
		}
		if f.Pages == 0 {
			d, err := l.inspect(ss.EPID, f)
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
			changed[f.Name] = f
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
	if len(meta) == 1 {
		b, err := os.ReadFile(l.store.BlobPath(ss.EPID, meta[0]))
		if err != nil {
			return res, err
		}
		var mp []metadata.Problem
		pack, mp = metadata.Parse(meta[0].Name, b, l.cfg.Metadata)
		if !metadata.HasErrors(mp) {
			mp = append(mp, l.applyProfiles(ss.Account, pack)...)
		}
		if !metadata.HasErrors(mp) && !docProbs {
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
	} else if docProbs {
		return reject()
	} else if len(infos) == 0 {
		probs = append(probs, "no document was uploaded (pdf, ps or xps)")
		return reject()
	}
	return l.commit(ss, files, meta, pack, plan, append(sizeWarns, warns...))
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
		fh, err := os.Open(l.store.BlobPath(ss.EPID, f))
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
		if err := l.store.Update(func(t *Tx) error { t.deleteKey(filePrefix + ss.EPID + "/" + f.Name); return nil }); err != nil {
			return nil, nil, err
		}
		os.Remove(l.store.BlobPath(ss.EPID, f))
	}
	return out, probs, nil
}

// inspect counts a document's pages, in a child process unless
// configured otherwise.
func (l *Lodger) inspect(epid string, f File) (inspect.Document, error) {
	path := l.store.BlobPath(epid, f)
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

// commit records the mailing and ends the session.
func (l *Lodger) commit(ss Session, files []File, meta []File, pack *metadata.Pack, plan []metadata.PlannedLetter, warns []string) (EndResult, error) {
	now := l.store.opt.Now().UTC()
	p := Pack{EPID: ss.EPID, Account: ss.Account, User: ss.User, Created: now, Status: PackReceived}
	if len(meta) == 1 {
		p.Metadata = meta[0].Name
	}
	if pack != nil {
		if pack.CustHold != nil {
			p.CustHold = *pack.CustHold
		}
		if pack.Title != nil {
			p.Title = *pack.Title
		}
		p.Settings, _ = json.Marshal(pack)
	}
	auto := pack == nil || !pack.HasLetters()
	if auto {
		p.Status = PackQueuedAuto
	}
	used := map[string]int{}
	for _, m := range meta {
		used[m.Name] = IntentMetadata
	}
	letters := make([]Letter, 0, len(plan))
	var lines [engine.MaxComponents + 2]string
	for i, pl := range plan {
		lt := Letter{EPID: ss.EPID, Account: ss.Account, Idx: i, Reference: pl.Reference, Status: LetterReceived,
			Transport: pl.Channels, Email: pl.Email, SMS: pl.SMS, Fax: pl.Fax, Received: now}
		if len(pl.Postal) > 0 {
			lt.Postal = pl.Postal
			r := l.eng.Check(append(lines[:0], pl.Postal...), false)
			lt.Address = &Verdict{Status: r.Status.String(), Nation: r.Nation, Message: r.Message}
		}
		for _, d := range pl.Documents {
			lt.Documents = append(lt.Documents, DocPart{File: d.Name, PageStart: d.PageStart, PageEnd: d.PageEnd, Attachment: d.Attachment})
			if d.Attachment {
				used[d.Name] = IntentAttachment
			} else if used[d.Name] != IntentAttachment {
				used[d.Name] = IntentDocument
			}
		}
		letters = append(letters, lt)
	}
	p.Letters = len(letters)
	res := EndResult{SessionID: ss.EPID, Result: "ok", Status: p.Status, Errs: []string{}, Warnings: warns}
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
	ss.State, ss.Ended, ss.Result = StateEnded, now, &res
	err := l.store.Update(func(t *Tx) error {
		for _, f := range files {
			t.PutFile(ss.EPID, f)
		}
		t.PutPack(p)
		for _, lt := range letters {
			t.PutLetter(lt)
		}
		if auto {
			t.AddAuto(ss.EPID)
		} else {
			t.AddJob(ss.EPID, now)
		}
		t.PutSession(ss)
		return nil
	})
	if err != nil {
		return EndResult{}, err
	}
	var bytes int64
	for _, f := range files {
		if f.Archive == "" { // an archive's entries are in its bytes
			bytes += f.Size
		}
	}
	l.log.Info("mailing accepted", "epid", ss.EPID, "account", ss.Account, "user", ss.EndedBy, "status", p.Status,
		"letters", len(letters), "files", len(files), "bytes", bytes)
	m := l.store.m
	m.sessionsEnded.Inc()
	add(m.mailings, p.Status, 1)
	add(m.letters, LetterReceived, len(letters))
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return res, nil
}

// Run lodges queued mailings until ctx is done: it resumes the jobs a
// restart left, and takes new ones as end_session commits them.
func (l *Lodger) Run(ctx context.Context) {
	t := time.NewTicker(l.cfg.PollInterval)
	defer t.Stop()
	for {
		// Failures stay queued until the next tick or wake-up.
		if _, err := l.RunOnce(); err != nil {
			l.log.Error("lodgement", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		case <-t.C:
		}
	}
}

// RunOnce lodges every queued mailing, 16 at a time, and returns how many
// it lodged. A mailing that cannot be lodged (its records unreadable, the
// disk failing) is logged and left queued for the next pass; the ones
// queued after it are still lodged. The error joins the failures.
func (l *Lodger) RunOnce() (int, error) {
	var failed []error
	n, after := 0, ""
	for {
		jobs, err := l.store.JobsAfter(after, 16)
		if err != nil {
			return n, errors.Join(append(failed, err)...)
		}
		if len(jobs) == 0 {
			return n, errors.Join(failed...)
		}
		for _, j := range jobs {
			after = j[0]
			if j[1] == "" {
				failed = append(failed, fmt.Errorf("lodgement job %q: unreadable record", j[0]))
				continue
			}
			if err := l.lodge(j[0], j[1]); err != nil {
				failed = append(failed, fmt.Errorf("mailing %s: %w", j[1], err))
				continue
			}
			n++
		}
	}
}

// lodge processes one mailing: letters whose address is invalid are held
// with the reason, all letters of a mailing on customer hold are held,
// the others are lodged. The results and the job's removal commit
// together, so a crash repeats the job at most. The mailing's letters are
// read and committed under the session's lock, which cancel_letters takes
// too: a letter cancelled before the read is not Received and is left
// alone, and no cancellation lands between the read and the commit.
func (l *Lodger) lodge(jobKey, epid string) error {
	mu := l.store.lock(epid)
	mu.Lock()
	defer mu.Unlock()
	p, err := l.store.Pack(epid)
	if err != nil {
		return err
	}
	letters, err := l.store.LettersOf(epid)
	if err != nil {
		return err
	}
	now := l.store.opt.Now().UTC()
	took := map[string]int{} // letters by the status they take
	for i := range letters {
		lt := &letters[i]
		if lt.Status != LetterReceived {
			continue
		}
		switch {
		case p.CustHold:
			lt.Status, lt.HoldReason = LetterHeld, "the mailing is on customer hold: release it in the portal"
		case lt.Address != nil && lt.Address.Status == engine.StatusInvalid.String() && len(lt.Transport) > 0 && lt.Transport[0] == "postal":
			lt.Status, lt.HoldReason = LetterHeld, "invalid postal address: "+lt.Address.Message
		default:
			lt.Status, lt.Lodged = LetterLodged, now
		}
		took[lt.Status]++
	}
	p.Status, p.Lodged = PackProcessed, now
	err = l.store.Update(func(t *Tx) error {
		for _, lt := range letters {
			t.PutLetter(lt)
		}
		t.PutPack(p)
		t.DoneJob(jobKey)
		return nil
	})
	if err != nil {
		return err
	}
	for st, n := range took {
		add(l.store.m.letters, st, n)
	}
	return nil
}
