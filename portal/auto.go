package portal

// Upload to the auto processor. /portal/auto takes PDF, PostScript or XPS
// files (and a title) in one multipart form and lodges them as one
// mailing of the session's account through the upload interface's
// Intake: the same name and content checks, durable storage and
// end_session as mpf_upload, with a metadata file of the form's own
// (portal.json: the title and cust_hold, no letters) so that the mailing
// goes to the auto processor on customer hold and nothing is produced
// before the customer confirms. /portal/auto/EPID then shows the letters
// the auto processor read (while it reads: a reload link; no script),
// links each held one to the correction form, and confirms by releasing
// the mailing's customer hold (the release action of the mailing page).
//
// A refused upload (a file of the wrong type or content, too many files
// or bytes, a refused mailing) is answered with the form and a message
// naming the file; its session is abandoned with every file already
// stored (Intake.Close), so that no mailing or part of one is left.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/upload"
	"github.com/lodge-mail/lodge/upload/inspect"
)

// Defaults of the upload page's limits (Config.MaxUploadFiles,
// Config.MaxUploadBytes).
const (
	DefaultMaxUploadFiles = 20
	DefaultMaxUploadBytes = 20 << 20 // the form in all, as mpf_upload's default
	// maxTitleChars bounds the mailing's title typed in the form.
	maxTitleChars = 200
	// autoMetadata is the metadata file the form's fields become. Only
	// documents are taken from the customer, so no upload can have it.
	autoMetadata = "portal.json"
)

// autoKinds are the extensions the upload page takes: documents the auto
// processor reads letters from.
var autoKinds = []string{"pdf", "ps", "xps"}

// selfCheckedCSRF are the POST routes whose forms are multipart: their
// CSRF token is the form's first part, which the route reads and checks
// itself before it does anything (Serve's check reads urlencoded forms
// only, and a multipart body is not read whole into memory).
var selfCheckedCSRF = map[string]bool{
	"auto":             true, // autoUpload
	"documents/upload": true, // uploadDocument
}

// csrfRefused is the answer to a POST without the session's CSRF token.
const csrfRefused = "the form's security token is missing or out of date: reload the page and try again\n"

type autoForm struct {
	Title    string
	MaxFiles int
	MaxMB    string
	Problems []string // the refused upload's problems, each naming its file
}

func (h *Handler) maxUploadFiles() int {
	if h.cfg.MaxUploadFiles > 0 {
		return h.cfg.MaxUploadFiles
	}
	return DefaultMaxUploadFiles
}

func (h *Handler) maxUploadBytes() int64 {
	if h.cfg.MaxUploadBytes > 0 {
		return h.cfg.MaxUploadBytes
	}
	return DefaultMaxUploadBytes
}

// megabytes says n bytes in MB (of 2^20 bytes), as the form states it.
func megabytes(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64)
}

func (h *Handler) autoPage(r *request, post bool) {
	if h.cfg.Uploads == nil {
		h.notFound(r)
		return
	}
	if post {
		h.autoUpload(r)
		return
	}
	h.autoFormPage(r, fasthttp.StatusOK, "", autoForm{})
}

func (h *Handler) autoFormPage(r *request, status int, msg string, d autoForm) {
	d.MaxFiles, d.MaxMB = h.maxUploadFiles(), megabytes(h.maxUploadBytes())
	h.page(r, status, "auto", "Upload letters", d, msg)
}

// formRefusal is why openUploadForm refused a form.
type formRefusal int

const (
	formOK           formRefusal = iota
	formTooLarge                 // declared larger than the limit
	formNotMultipart             // not multipart/form-data with a boundary
	formCSRF                     // its token is wrong: answered 403 already
)

// openUploadForm opens a multipart upload form of at most max bytes (its
// body fails with upload.ErrBodyTooLarge past that) and checks its CSRF token,
// which the form sends as its first field, before anything else is read
// or done.
func (h *Handler) openUploadForm(r *request, max int64) (*multipart.Reader, *upload.CountingReader, formRefusal) {
	ctx := r.ctx
	if int64(ctx.Request.Header.ContentLength()) > max {
		return nil, nil, formTooLarge
	}
	mt, params, err := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, nil, formNotMultipart
	}
	body := &upload.CountingReader{R: upload.BodyReader(ctx), Max: max}
	mr := multipart.NewReader(body, params["boundary"])
	part, err := mr.NextPart()
	var tok []byte
	if err == nil && part.FormName() == "csrf" {
		tok, _ = io.ReadAll(io.LimitReader(part, 256))
	}
	if !csrfOK(r.se, tok) {
		unread(ctx)
		ctx.Error(csrfRefused, fasthttp.StatusForbidden)
		return nil, nil, formCSRF
	}
	return mr, body, formOK
}

// autoUpload lodges the form's files as one auto mailing on customer
// hold and leads to its review.
func (h *Handler) autoUpload(r *request) {
	ctx := r.ctx
	maxBytes, maxFiles := h.maxUploadBytes(), h.maxUploadFiles()
	var d autoForm
	tooLarge := func() {
		unread(ctx)
		h.autoFormPage(r, fasthttp.StatusRequestEntityTooLarge, fmt.Sprintf("The upload is larger than %s MB in all: nothing was uploaded. Send fewer or smaller files at a time.", megabytes(maxBytes)), d)
	}
	mr, body, refused := h.openUploadForm(r, maxBytes)
	switch refused {
	case formTooLarge:
		tooLarge()
		return
	case formNotMultipart:
		h.autoFormPage(r, fasthttp.StatusBadRequest, "Send the files with the form below.", d)
		return
	case formCSRF:
		return
	}

	var in *upload.Intake
	why := "the upload was refused"
	defer func() {
		if in != nil {
			if err := in.Close(why); err != nil {
				h.cfg.Log.Error("portal: abandoning a refused upload", "session", in.EPID(), "err", err)
			}
		}
	}()
	refuse := func(status int, msg string) {
		why = msg
		h.autoFormPage(r, status, msg, d)
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if errors.Is(err, upload.ErrBodyTooLarge) || body.N > maxBytes {
				why = "larger than the limit"
				tooLarge()
				return
			}
			refuse(fasthttp.StatusBadRequest, "The form arrived incomplete: nothing was uploaded. Please send it again.")
			return
		}
		switch part.FormName() {
		case "title":
			b, _ := io.ReadAll(io.LimitReader(part, 4*maxTitleChars+1))
			t := strings.TrimSpace(string(b))
			d.Title = t
			switch {
			case !utf8.ValidString(t) || strings.ContainsFunc(t, unicode.IsControl):
				d.Title = ""
				refuse(fasthttp.StatusBadRequest, "The title holds characters that cannot be used: nothing was uploaded.")
				return
			case utf8.RuneCountInString(t) > maxTitleChars:
				refuse(fasthttp.StatusBadRequest, fmt.Sprintf("The title is longer than %d characters: nothing was uploaded.", maxTitleChars))
				return
			}
		case "file":
			if part.FileName() == "" {
				io.Copy(io.Discard, part) // an empty file field: no file chosen
				continue
			}
			if in == nil {
				if in, err = h.cfg.Uploads.Begin(upload.Principal{Account: r.se.Account, User: r.se.User}); err != nil {
					h.internalError(r, err)
					return
				}
			}
			if in.Files() == maxFiles {
				refuse(fasthttp.StatusBadRequest, fmt.Sprintf("More than %d files: nothing was uploaded. Send at most %d files at a time.", maxFiles, maxFiles))
				return
			}
			if _, err := in.Add(part.FileName(), part, autoKinds...); err != nil {
				if errors.Is(body.Err(), upload.ErrBodyTooLarge) {
					why = "larger than the limit"
					tooLarge()
					return
				}
				var no *upload.Refusal
				if !errors.As(err, &no) || no.Status >= 500 {
					why = "the server could not store a file"
					h.internalError(r, err)
					return
				}
				msg := no.Msg
				if !strings.Contains(msg, no.Name) {
					msg = no.Name + ": " + msg
				}
				refuse(no.Status, msg+". Nothing was uploaded: correct it and send the files again.")
				return
			}
		default:
			io.Copy(io.Discard, part)
		}
	}
	if errors.Is(body.Err(), upload.ErrBodyTooLarge) {
		why = "larger than the limit"
		tooLarge()
		return
	}
	if in == nil || in.Files() == 0 {
		refuse(fasthttp.StatusBadRequest, "Choose at least one PDF, PostScript or XPS file.")
		return
	}
	meta, err := autoMetadataFile(d.Title)
	if err != nil {
		h.internalError(r, err)
		return
	}
	if _, err := in.Add(autoMetadata, bytes.NewReader(meta), "json"); err != nil {
		h.internalError(r, err)
		return
	}
	res, err := in.End()
	switch {
	case errors.Is(err, inspect.ErrBusy):
		why = "the server was busy"
		ctx.Response.Header.Set("Retry-After", "30")
		refuse(fasthttp.StatusServiceUnavailable, "The server is busy reading other documents: nothing was uploaded. Please send the files again in a minute.")
		return
	case err != nil:
		why = "end session failed"
		h.internalError(r, err)
		return
	case res.Result != "ok":
		why = "the mailing was rejected: " + res.Error
		d.Problems = res.Errs
		h.autoFormPage(r, fasthttp.StatusBadRequest, "The files were refused: nothing was uploaded. Correct what is listed below and send them again.", d)
		return
	}
	h.cfg.Log.Info("portal: letters uploaded for the auto processor", "epid", in.EPID(), "account", r.se.Account, "user", r.se.User, "files", in.Files()-1)
	h.sessions.setFlash(r.id, fmt.Sprintf("%d file%s uploaded as mailing %s, on hold until you confirm it.", in.Files()-1, plural(in.Files()-1), in.EPID()))
	ctx.Redirect(Prefix+"auto/"+in.EPID(), fasthttp.StatusSeeOther)
}

// autoMetadataFile is the metadata of an upload: its title, on customer
// hold, without letters (so the auto processor reads them).
func autoMetadataFile(title string) ([]byte, error) {
	m := map[string]any{"cust_hold": true}
	if title != "" {
		m["title"] = title
	}
	return json.Marshal(m)
}

type reviewData struct {
	M       pipeline.Mailing
	Reading bool // the auto processor has not recorded the letters yet
	Pages   int
	Rows    []reviewRow
	Counts  []statusCount
	From    int
	Prev    int
	Next    int // 0: none
}

type reviewRow struct {
	L      pipeline.Letter
	CanFix bool
}

// correctable says whether the letter's address can be corrected: it is
// held for it (Mailroom.Correct).
func correctable(l pipeline.Letter) bool {
	return l.Status == pipeline.Held && (l.Hold == pipeline.HoldAddress || l.Hold == pipeline.HoldWindow)
}

// reviewPage shows what the auto processor read from an uploaded
// mailing's documents.
func (h *Handler) reviewPage(r *request, epid string) {
	if h.cfg.Uploads == nil {
		h.notFound(r)
		return
	}
	m, ok := h.mailingOf(r, epid)
	if !ok {
		return
	}
	if !m.Auto {
		r.ctx.Redirect(Prefix+"mailings/"+m.EPID, fasthttp.StatusSeeOther)
		return
	}
	d := reviewData{M: m, Reading: m.Letters == 0}
	for _, f := range m.Files {
		d.Pages += f.Pages
	}
	if !d.Reading {
		pg, ok := h.letterPageOf(r, m)
		if !ok {
			return
		}
		for _, l := range pg.Letters {
			d.Rows = append(d.Rows, reviewRow{L: l, CanFix: correctable(l)})
		}
		d.Counts, d.From, d.Prev, d.Next = pg.Counts, pg.From, pg.Prev, pg.Next
	}
	h.page(r, fasthttp.StatusOK, "auto_review", "Review "+m.EPID, d, "")
}
