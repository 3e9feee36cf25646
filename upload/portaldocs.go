package upload

import (
	"fmt"
	"io"

	"github.com/lodge-mail/lodge/upload/metadata"
)

// Portal documents (spec section 1): a mailing's metadata may name a
// document of the account's library (uploaded in the customer portal,
// package library) instead of one uploaded in the session. end_session
// resolves a name the session's files lack in the library, checks the
// mailing with it (metadata.FileInfo.Portal), and when the mailing is
// accepted copies the document into the session as a file of its own
// (File.Portal), durably, before the mailroom gets the mailing: the
// mailing's letters are produced from that copy, whatever the customer
// later does to the library. A name the session has is the session's
// file, even when the library has one of the same name.

// PortalDoc is a library document a mailing names, open for reading.
type PortalDoc struct {
	Name, Kind, SHA1 string
	By               string // who uploaded it to the library
	Size             int64
	Pages            int
	Body             io.ReadCloser
}

// PortalDocs is an account's documents library (LodgerConfig.Library).
type PortalDocs interface {
	// PortalDocs returns the account's documents of the names asked for,
	// each open (the caller closes them); names it has no document of are
	// left out.
	PortalDocs(account string, names []string) ([]PortalDoc, error)
}

// referencedNames lists, once each, the documents a pack names: letters'
// file_name and files, attachments and the background.
func referencedNames(p *metadata.Pack) []string {
	if p == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, l := range p.Letters {
		add(l.FileName)
		for _, f := range l.Files {
			add(f.FileName)
		}
	}
	for _, a := range p.Attachments {
		add(a)
	}
	if p.ProductionOptions != nil {
		add(deref(p.ProductionOptions.Background))
	}
	return out
}

// portalDocs finds in the account's library the documents the pack names
// that are not files of the session; they are returned open (close them
// with closePortalDocs) with their descriptions for the validator.
func (l *Lodger) portalDocs(account string, p *metadata.Pack, files []File) (metadata.Files, []PortalDoc, error) {
	if l.cfg.Library == nil {
		return nil, nil, nil
	}
	have := map[string]bool{}
	for _, f := range files {
		have[f.Name] = true
	}
	var want []string
	for _, n := range referencedNames(p) {
		if !have[n] {
			want = append(want, n)
		}
	}
	if len(want) == 0 {
		return nil, nil, nil
	}
	docs, err := l.cfg.Library.PortalDocs(account, want)
	if err != nil {
		return nil, nil, err
	}
	infos := make(metadata.Files, 0, len(docs))
	for _, d := range docs {
		infos = append(infos, metadata.FileInfo{Name: d.Name, Kind: d.Kind, Pages: d.Pages, Portal: true})
	}
	return infos, docs, nil
}

func closePortalDocs(docs []PortalDoc) {
	for _, d := range docs {
		d.Body.Close()
	}
}

// copyPortalDocs stores each library document into the session as a file
// of its own (File.Portal), synced and committed. The caller holds the
// session's lock.
func (l *Lodger) copyPortalDocs(ss Session, docs []PortalDoc) ([]File, error) {
	var out []File
	for _, d := range docs {
		f, err := l.store.putFileLocked(ss, d.By, d.Name, d.Size, d.Body,
			func(head []byte) (string, error) { return checkContent(d.Name, d.Kind, head) },
			func(f *File) { f.Portal, f.Pages = true, d.Pages })
		if err != nil {
			return nil, fmt.Errorf("copying portal document %s into mailing %s: %w", d.Name, ss.EPID, err)
		}
		if f.SHA1 != d.SHA1 {
			return nil, fmt.Errorf("copying portal document %s into mailing %s: its content is not what the library recorded (sha1 %s, recorded %s)", d.Name, ss.EPID, f.SHA1, d.SHA1)
		}
		out = append(out, f)
	}
	return out, nil
}

// dropPortalCopies removes the copies of library documents an
// end_session made but did not finish (a crash before the mailroom had
// the mailing): the documents are looked up again, as they are now, and
// a name the session's own files take is theirs. It returns the session's
// own files.
func (l *Lodger) dropPortalCopies(ss Session, files []File) ([]File, error) {
	own := files[:0:0]
	var copies []File
	for _, f := range files {
		if f.Portal {
			copies = append(copies, f)
		} else {
			own = append(own, f)
		}
	}
	if len(copies) == 0 {
		return files, nil
	}
	if err := l.store.Update(func(t *Tx) error {
		for _, f := range copies {
			t.deleteFile(ss.EPID, f.Name)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for _, f := range copies {
		l.store.removeBlob(ss.EPID, f) // an orphan if this fails: see the package doc
	}
	return own, nil
}
