package upload

import (
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"
)

// Intake is one mailing sent in one go, its files taken one after another
// from a stream the caller reads: mpf_upload's multipart body, and the
// customer portal's upload form (package portal). Every file goes
// through the checks and the durable storage of any upload (CheckName,
// the content check against the extension, Store.PutFile), and the
// session ends as end_session ends it (the Handler's Assembler), so that
// there is one intake whatever the door. One intake, one mailing: unless
// End accepted the mailing, Close abandons the session and deletes its
// files, so that nothing of a refused request is left half-made.
type Intake struct {
	h     *Handler
	ss    Session
	by    string
	parts map[string]int // file name → its number (from 1)
	n     int
	ended bool
}

// Refusal is a file or request an Intake refused for the client's doing.
// Status is the HTTP status the upload interface answers it with, Reason
// its rejection reason (lodge_upload_rejections_total), Msg what is wrong
// (naming the file where there is one). Name is the file's name, Part
// its number (from 1); for a name sent twice, First is the number of the
// file that had it first.
type Refusal struct {
	Status int
	Reason string
	Msg    string
	Name   string
	Part   int
	First  int
}

func (r *Refusal) Error() string { return r.Msg }

// Begin opens the session of an Intake for p's account. The caller must
// Close it.
func (h *Handler) Begin(p Principal) (*Intake, error) {
	ss, err := h.store.CreateSession(p.Account, p.User)
	if err != nil {
		return nil, err
	}
	return &Intake{h: h, ss: ss, by: p.User, parts: map[string]int{}}, nil
}

// EPID is the session's identifier: the mailing's, once it ends.
func (in *Intake) EPID() string { return in.ss.EPID }

// Files is how many files were stored.
func (in *Intake) Files() int { return in.n }

// Add stores body as the next file of the mailing, under name as a
// browser sends it (a path such as C:\fakepath\letter.pdf counts by its
// last element). The name and the content are checked as every upload's
// are; kinds, when given, narrows the extensions accepted (a door that
// takes only documents). A second file of a name is refused: it would
// replace the first, and the letters would go out with whichever came
// last. Every error is a *Refusal: its Status says whose fault it is
// (500 and above: the server's, which receive logged).
func (in *Intake) Add(name string, body io.Reader, kinds ...string) (File, error) {
	part := in.n + 1
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	ext, status, msg := CheckName(name)
	if status != 0 {
		return File{}, &Refusal{Status: status, Reason: nameReason(status), Msg: msg, Name: name, Part: part}
	}
	if len(kinds) > 0 && !slices.Contains(kinds, ext) {
		return File{}, &Refusal{Status: fasthttp.StatusForbidden, Reason: rejectFileType, Name: name, Part: part,
			Msg: fmt.Sprintf("%s: file type .%s is not accepted here: send %s", name, ext, strings.Join(kinds, ", "))}
	}
	if first, dup := in.parts[name]; dup {
		return File{}, &Refusal{Status: fasthttp.StatusBadRequest, Reason: rejectDuplicate, Name: name, Part: part, First: first,
			Msg: fmt.Sprintf("%s was sent twice: send each file once, under names of their own", name)}
	}
	in.parts[name] = part
	f, no := in.h.receive(in.ss, in.by, name, ext, -1, body)
	if no.status != 0 {
		// a status of 500 or more is the server's (logged by receive), told
		// all the same
		return File{}, &Refusal{Status: no.status, Reason: no.reason, Msg: no.msg, Name: name, Part: part}
	}
	in.n++
	return f, nil
}

// End ends the session as end_session does and returns its answer; an
// error is the server's. An answer other than "ok" leaves the session for
// Close to abandon.
func (in *Intake) End() (EndResult, error) {
	res, err := in.h.end(in.ss, in.by)
	if err == nil && res.Result == "ok" {
		in.ended = true
	}
	return res, err
}

// Close abandons the session, deleting its files, unless End accepted its
// mailing; why (what the client was told) stays with the session for
// whoever tries to continue it.
func (in *Intake) Close(why string) error {
	if in.ended {
		return nil
	}
	in.ended = true // once
	return in.h.store.Abandon(in.ss.EPID, why)
}
