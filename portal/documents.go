package portal

// The documents library's pages (/portal/documents): the account's
// documents listed, uploaded (a multipart form), previewed and deleted.
// A mailing's metadata names a library document by its name (spec
// section 1); the documents themselves are package library's.

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/library"
	"github.com/lodge-mail/lodge/upload"
	"github.com/lodge-mail/lodge/upload/inspect"
)

// documentsFormSlack is what a documents upload form may hold besides the
// document: the boundaries, part headers and the CSRF token. A body
// declared larger than the library's MaxBytes and this is refused (413)
// before any of it is read; one that grows past it is cut off.
const documentsFormSlack = 64 << 10

type documentsData struct {
	Rows    []docRow
	MaxMB   string
	MaxDocs int
}

type docRow struct {
	library.Document
	Size string // as people read it: 12 KB, 3.4 MB
}

// sizeText says a size in B, KB or MB (of 1,024).
func sizeText(n int64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 0, 64) + " KB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
}

// documentRoutes serves /portal/documents and what is under it; rest is
// the path after "documents/".
func (h *Handler) documentRoutes(r *request, rest string, post bool) {
	if h.cfg.Library == nil {
		h.notFound(r)
		return
	}
	switch {
	case rest == "" && !post:
		h.documentsPage(r, fasthttp.StatusOK, "")
	case rest == "upload" && post:
		h.uploadDocument(r)
	case rest == "view" && !post:
		h.viewDocument(r)
	case rest == "delete":
		h.deleteDocument(r, post)
	default:
		h.notFound(r)
	}
}

func (h *Handler) documentsPage(r *request, status int, msg string) {
	docs, err := h.cfg.Library.List(r.se.Account)
	if err != nil {
		h.internalError(r, err)
		return
	}
	opt := h.cfg.Library.Options()
	d := documentsData{MaxMB: megabytes(opt.MaxBytes), MaxDocs: opt.MaxDocuments}
	for _, doc := range docs {
		d.Rows = append(d.Rows, docRow{doc, sizeText(doc.Size)})
	}
	h.page(r, status, "documents", "Documents", d, msg)
}

// uploadDocument stores the form's document in the account's library:
// POST /portal/documents/upload, multipart with the CSRF token first,
// then the file.
func (h *Handler) uploadDocument(r *request) {
	ctx := r.ctx
	lib := h.cfg.Library
	max := lib.Options().MaxBytes + documentsFormSlack
	tooLarge := func() {
		unread(ctx)
		h.documentsPage(r, fasthttp.StatusRequestEntityTooLarge, fmt.Sprintf("The document is larger than %s MB: it was not uploaded.", megabytes(lib.Options().MaxBytes)))
	}
	mr, body, why := h.openUploadForm(r, max)
	switch why {
	case formTooLarge:
		tooLarge()
		return
	case formNotMultipart:
		h.documentsPage(r, fasthttp.StatusBadRequest, "Send the document with the form below.")
		return
	case formCSRF:
		return
	}
	var part *multipart.Part
	var err error
	for {
		part, err = mr.NextPart()
		if err != nil {
			if errors.Is(err, upload.ErrBodyTooLarge) || body.N > max {
				tooLarge()
			} else if errors.Is(err, io.EOF) {
				h.documentsPage(r, fasthttp.StatusBadRequest, "Choose a document to upload.")
			} else {
				h.documentsPage(r, fasthttp.StatusBadRequest, "The form arrived incomplete: nothing was uploaded. Please send it again.")
			}
			return
		}
		if part.FormName() == "file" {
			break
		}
		io.Copy(io.Discard, part) // a field this form does not have
	}
	if part.FileName() == "" {
		h.documentsPage(r, fasthttp.StatusBadRequest, "Choose a document to upload.")
		return
	}
	d, err := lib.Put(r.se.Account, r.se.User, part.FileName(), -1, part)
	var refused *library.RefusedError
	var readErr *library.ReadError
	switch {
	case err == nil:
		h.sessions.setFlash(r.id, fmt.Sprintf("Uploaded %s (%s). Name it in a mailing's metadata as its file_name.", d.Name, pagesOf(d.Pages)))
		ctx.Redirect(Prefix+"documents", fasthttp.StatusSeeOther)
	case errors.Is(err, library.ErrTooLarge) || body.N > max:
		tooLarge()
	case errors.As(err, &refused):
		h.documentsPage(r, fasthttp.StatusUnprocessableEntity, "Not uploaded: "+refused.Msg)
	case errors.Is(err, library.ErrFull):
		h.documentsPage(r, fasthttp.StatusConflict, fmt.Sprintf("Your library holds %d documents, as many as it may: delete one first.", lib.Options().MaxDocuments))
	case errors.As(err, &readErr):
		h.documentsPage(r, fasthttp.StatusBadRequest, "The form arrived incomplete: nothing was uploaded. Please send it again.")
	case errors.Is(err, inspect.ErrBusy):
		ctx.Response.Header.Set("Retry-After", "5")
		h.documentsPage(r, fasthttp.StatusServiceUnavailable, "The server is busy counting other documents' pages: please try again in a moment.")
	default:
		h.internalError(r, err)
	}
}

func pagesOf(n int) string {
	if n == 1 {
		return "1 page"
	}
	return strconv.Itoa(n) + " pages"
}

// docOf reads the document the query's name gives, of the session's
// account: another account's is not found, as a missing one is.
func (h *Handler) docOf(r *request, name string) (library.Document, bool) {
	d, err := h.cfg.Library.Get(r.se.Account, name)
	if errors.Is(err, library.ErrNotFound) {
		h.notFound(r)
		return d, false
	}
	if err != nil {
		h.internalError(r, err)
		return d, false
	}
	return d, true
}

// documentTypes are the media types documents are served as.
var documentTypes = map[string]string{"pdf": "application/pdf", "ps": "application/postscript", "xps": "application/vnd.ms-xpsdocument"}

// viewDocument serves a document: a PDF inline (the browser shows it),
// PostScript and XPS, which browsers cannot show, as a download.
func (h *Handler) viewDocument(r *request) {
	name := string(r.ctx.QueryArgs().Peek("name"))
	d, f, err := h.cfg.Library.Read(r.se.Account, name)
	if errors.Is(err, library.ErrNotFound) {
		h.notFound(r)
		return
	}
	if err != nil {
		h.internalError(r, err)
		return
	}
	disp := "attachment"
	if d.Kind == "pdf" {
		disp = "inline"
	}
	r.ctx.SetContentType(documentTypes[d.Kind])
	r.ctx.Response.Header.Set("Content-Disposition", mime.FormatMediaType(disp, map[string]string{"filename": d.Name}))
	r.ctx.SetBodyStream(f, int(d.Size)) // closed once sent
}

// deleteDocument asks (GET) and deletes (POST, with the CSRF token that
// Serve checked).
func (h *Handler) deleteDocument(r *request, post bool) {
	if !post {
		d, ok := h.docOf(r, string(r.ctx.QueryArgs().Peek("name")))
		if ok {
			h.page(r, fasthttp.StatusOK, "document_delete", "Delete "+d.Name, d, "")
		}
		return
	}
	name := string(r.ctx.PostArgs().Peek("name"))
	err := h.cfg.Library.Delete(r.se.Account, name)
	if errors.Is(err, library.ErrNotFound) {
		h.notFound(r)
		return
	}
	if err != nil {
		h.internalError(r, err)
		return
	}
	h.sessions.setFlash(r.id, "Deleted "+name+". Mailings already accepted keep their own copy.")
	r.ctx.Redirect(Prefix+"documents", fasthttp.StatusSeeOther)
}
