package upload

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/lodge-mail/lodge/datafiles"
	"github.com/lodge-mail/lodge/upload/metadata"
)

// Profiles supply the mailing attributes a metadata file leaves out
// (specification 2.2: "an attribute that is not specified takes its value
// from pre-configured or default profiles"). They are metadata files
// holding mailing attributes only, kept by the operator as files:
//
//	<ProfileDir>/<ACCOUNT>/<name>.json (or .xml)   the profile a metadata file names
//	<ProfileDir>/<ACCOUNT>/default.json (or .xml)  applied to every mailing of the account
//
// A mailing's own attributes win, then the named profile's, then the
// default profile's. A profile is read when a session ends, so an edit
// takes effect for the next mailing without a restart.

// maxProfileBytes bounds a profile file.
const maxProfileBytes = 1 << 20

// applyProfiles applies the profiles of account to p: the one p names,
// then the account's default. A named profile that does not exist is a
// problem of the mailing's metadata (its "profile" field); a profile file
// that is not valid is the operator's to correct, and its problems name
// the profile's file, as do the problems Validate later finds in the
// attributes a profile supplied (metadata.Problem.Source).
func (l *Lodger) applyProfiles(account string, p *metadata.Pack) []metadata.Problem {
	var probs []metadata.Problem
	if p.Profile != nil {
		name := *p.Profile
		prof, bad, err := l.readProfile(account, name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			probs = append(probs, metadata.Problem{Path: "profile", Message: fmt.Sprintf("account %s has no profile %q", account, name)})
		case err != nil:
			probs = append(probs, metadata.Problem{Path: "profile", Message: err.Error()})
		case len(bad) > 0:
			probs = append(probs, bad...)
		default:
			metadata.ApplyProfile(p, *prof)
		}
	}
	prof, bad, err := l.readProfile(account, "default")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		probs = append(probs, metadata.Problem{Path: "", Message: "the account's default " + err.Error()})
	case len(bad) > 0:
		probs = append(probs, bad...)
	default:
		metadata.ApplyProfile(p, *prof)
	}
	return probs
}

// readProfile reads the profile name of account; fs.ErrNotExist when there
// is none. A profile file with problems gives them (each with the
// profile's Source, errors only) and no pack.
func (l *Lodger) readProfile(account, name string) (*metadata.Pack, []metadata.Problem, error) {
	if l.cfg.ProfileDir == "" {
		return nil, nil, fs.ErrNotExist
	}
	if !validProfileName(name) || !validProfileName(account) {
		return nil, nil, fmt.Errorf("profile %q: a name is 1 to 64 letters, digits, '-', '_' or '.'", name)
	}
	files := l.cfg.Profiles
	if files == nil {
		files = datafiles.Dir(l.cfg.ProfileDir)
	}
	for _, ext := range []string{".json", ".xml"} {
		b, err := files.Read(account+"/"+name+ext, maxProfileBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if errors.Is(err, datafiles.ErrNotFile) {
			return nil, nil, fmt.Errorf("profile %q: not a file of at most %d bytes", name, maxProfileBytes)
		}
		if err != nil {
			return nil, nil, err
		}
		// Named as the operator finds it: under the data directory's
		// profiles/ (the last element of ProfileDir), not by its full
		// path on the server.
		source := fmt.Sprintf("profile %q (%s)", name, filepath.ToSlash(filepath.Join(filepath.Base(l.cfg.ProfileDir), account, name+ext)))
		p, probs := metadata.ParseProfile(name+ext, b, l.cfg.Metadata)
		if metadata.HasErrors(probs) {
			var bad []metadata.Problem
			var msgs []string
			for _, pr := range probs {
				if !pr.Warning {
					msgs = append(msgs, pr.String())
					pr.Source = source
					pr.Message += " (the operator must correct the profile)"
					bad = append(bad, pr)
				}
			}
			l.log.Error("profile", "account", account, "profile", name, "problems", strings.Join(msgs, "; "))
			return nil, bad, nil
		}
		p.Source = source
		return p, nil, nil
	}
	return nil, nil, fs.ErrNotExist
}

func validProfileName(s string) bool {
	if s == "" || len(s) > 64 || s == "." || s == ".." {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
