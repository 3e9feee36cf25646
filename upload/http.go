package upload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/upload/inspect"
)

// Principal is who calls, as the server authenticated them.
type Principal struct {
	Account string
	User    string // user name, or the API key id for Bearer calls
}

// Config tunes the upload handler. The zero value means the documented
// defaults.
type Config struct {
	// MaxMultipartBytes is the combined size limit of a multipart upload
	// (default 20 MB, as the specification sets).
	MaxMultipartBytes int64
	Host              string // reported in end_session's files[].host; default the hostname
}

// Handler serves the upload endpoints.
type Handler struct {
	store *Store
	asm   Assembler
	cfg   Config
	log   *slog.Logger
}

// Assembler turns an ended session into a mailing: it validates the files
// and metadata and commits the mailing (see Lodger). It is an interface so
// that the handler can be tested on its own.
type Assembler interface {
	// End ends a session: it returns the answer, and whether the session
	// was ended (false leaves it open for corrected files). ss.EndedBy is
	// who asks to end it.
	End(ss Session, files []File) (EndResult, error)
}

// NewHandler returns the upload endpoints over store, ending sessions with
// asm.
func NewHandler(store *Store, asm Assembler, cfg Config, log *slog.Logger) *Handler {
	if cfg.MaxMultipartBytes <= 0 {
		cfg.MaxMultipartBytes = 20 << 20
	}
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}
	if log == nil {
		log = slog.Default()
	}
	return &Handler{store: store, asm: asm, cfg: cfg, log: log}
}

var (
	pathGetSession = []byte("/publicinterface/get_session_id.")
	pathEndSession = []byte("/publicinterface/end_session.")
	pathMultipart  = []byte("/publicinterface/mpf_upload")
	pathPut        = []byte("/direct_upload/")
)

// IsUploadPath reports whether a request path belongs to the upload
// interface.
func IsUploadPath(p []byte) bool {
	return bytes.HasPrefix(p, pathGetSession) || bytes.HasPrefix(p, pathEndSession) ||
		bytes.Equal(p, pathMultipart) || bytes.HasPrefix(p, pathPut) || bytes.HasPrefix(p, pathFailovers)
}

// IsStreamingPath reports whether a path's body is streamed to disk rather
// than read into memory first.
func IsStreamingPath(p []byte) bool {
	if i := bytes.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return bytes.HasPrefix(p, pathPut) || bytes.Equal(p, pathMultipart)
}

// RefuseDeclaredTooLarge answers 413 to a request that declares (by
// Content-Length) a body larger than its path accepts, with the message
// and in the format the body would have got, and reports whether it did.
// The server asks before it sends "100 Continue", so a client that waits
// for it is refused before it sends a byte of the body rather than
// finding a closed connection half-way through.
func (h *Handler) RefuseDeclaredTooLarge(ctx *fasthttp.RequestCtx) bool {
	cl := int64(ctx.Request.Header.ContentLength())
	if cl < 0 {
		return false // chunked: counted as it arrives
	}
	p := ctx.Request.Header.RequestURI()
	if i := bytes.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	switch {
	case bytes.Equal(p, pathMultipart) && cl > h.cfg.MaxMultipartBytes:
		h.refuse(ctx, FormatJSON, rejectTooLarge, fasthttp.StatusRequestEntityTooLarge, "multipart uploads are limited to %d bytes in all; use the standard method for larger mailings", h.cfg.MaxMultipartBytes)
	case bytes.HasPrefix(p, pathPut) && cl > h.store.opt.MaxFileBytes:
		_, name, _ := strings.Cut(strings.TrimPrefix(string(ctx.Request.URI().PathOriginal()), string(pathPut)), "/")
		if n, err := url.PathUnescape(name); err == nil {
			name = n
		}
		h.refuse(ctx, FormatText, rejectTooLarge, fasthttp.StatusRequestEntityTooLarge, "%s is larger than %d bytes", name, h.store.opt.MaxFileBytes)
	default:
		return false
	}
	return true
}

// Serve answers an authenticated upload request.
func (h *Handler) Serve(ctx *fasthttp.RequestCtx, p Principal) {
	pth := ctx.Path()
	switch {
	case bytes.HasPrefix(pth, pathGetSession):
		h.getSessionID(ctx, p, string(pth[len(pathGetSession):]))
	case bytes.HasPrefix(pth, pathEndSession):
		h.endSession(ctx, p, string(pth[len(pathEndSession):]))
	case bytes.Equal(pth, pathMultipart):
		h.multipart(ctx, p)
	case bytes.HasPrefix(pth, pathPut):
		h.put(ctx, p)
	case bytes.HasPrefix(pth, pathFailovers):
		h.failovers(ctx, p, string(pth[len(pathFailovers):]))
	default:
		add(h.store.m.rejections, rejectBadRequest, 1)
		ctx.Error("not found\n", fasthttp.StatusNotFound)
	}
}

func reply(ctx *fasthttp.RequestCtx, f Format, status int, body []byte) {
	ctx.SetStatusCode(status)
	ctx.SetContentType(f.ContentType())
	ctx.SetBody(body)
}

func fail(ctx *fasthttp.RequestCtx, f Format, status int, format string, args ...any) {
	if status == fasthttp.StatusServiceUnavailable {
		ctx.Response.Header.Set("Retry-After", "300")
	}
	reply(ctx, f, status, encodeError(f, status, fmt.Sprintf(format, args...)))
}

// refuse answers a request with an error status and counts it under
// reason (one of rejectReasons) in lodge_upload_rejections_total.
func (h *Handler) refuse(ctx *fasthttp.RequestCtx, f Format, reason string, status int, format string, args ...any) {
	add(h.store.m.rejections, reason, 1)
	fail(ctx, f, status, format, args...)
}

// refusal is an answer other than 2xx: its status, its reason (one of
// rejectReasons) and its message; status 0 is none.
type refusal struct {
	status      int
	reason, msg string
}

// account reads the account query parameter (trimmed, upper-cased) and
// checks it names the caller's account; when it does not, the request is
// answered (400 or 403) and ok is false.
func (h *Handler) account(ctx *fasthttp.RequestCtx, f Format, p Principal) (account string, ok bool) {
	account = strings.ToUpper(strings.TrimSpace(string(ctx.QueryArgs().Peek("account"))))
	if account == "" {
		h.refuse(ctx, f, rejectBadRequest, fasthttp.StatusBadRequest, "the account parameter is required")
		return "", false
	}
	if account != p.Account {
		h.refuse(ctx, f, rejectForbidden, fasthttp.StatusForbidden, "these credentials are not for account %s", account)
		return "", false
	}
	return account, true
}

// getSessionID opens a session for the caller's account.
func (h *Handler) getSessionID(ctx *fasthttp.RequestCtx, p Principal, suffix string) {
	f, ok := ParseFormat(suffix)
	if !ok {
		h.refuse(ctx, FormatText, rejectBadRequest, fasthttp.StatusNotFound, "unknown format %q: use get_session_id.text, .json or .xml", suffix)
		return
	}
	if !ctx.IsGet() && !ctx.IsPost() {
		h.refuse(ctx, f, rejectBadRequest, fasthttp.StatusMethodNotAllowed, "use GET")
		return
	}
	if _, ok := h.account(ctx, f, p); !ok {
		return
	}
	ss, err := h.store.CreateSession(p.Account, p.User)
	if err != nil {
		h.internal(ctx, f, "create session", err)
		return
	}
	reply(ctx, f, fasthttp.StatusOK, encodeSessionID(f, SessionIDResult{User: p.User, Account: p.Account, SessionID: ss.EPID}))
}

// session loads a session for a caller: 404 when there is none (or it
// expired or was abandoned), 403 when it is another account's. A session
// belongs to its account: any valid credential of the account continues
// it, whoever opened it (and whether or not that key was revoked since).
func (h *Handler) session(ctx *fasthttp.RequestCtx, f Format, p Principal, epid string) (Session, bool) {
	ss, err := h.store.Session(epid)
	switch {
	case errors.Is(err, ErrNoSession):
		h.refuse(ctx, f, rejectNoSession, fasthttp.StatusNotFound, "no session %q", epid)
		return ss, false
	case err != nil:
		h.internal(ctx, f, "read session", err)
		return ss, false
	case ss.Account != p.Account:
		h.refuse(ctx, f, rejectForbidden, fasthttp.StatusForbidden, "session %s belongs to another account", epid)
		return ss, false
	case ss.State == StateExpired:
		h.refuse(ctx, f, rejectExpired, fasthttp.StatusNotFound, "session %s expired and its files were deleted", epid)
		return ss, false
	case ss.State == StateAbandoned:
		h.refuse(ctx, f, rejectAbandoned, fasthttp.StatusNotFound, "session %s was abandoned (%s) and its files were deleted: send the corrected request again", epid, ss.Reason)
		return ss, false
	}
	return ss, true
}

// nameReason is the rejection reason of a name CheckName refused with
// status: a type not accepted (403), or the name itself.
func nameReason(status int) string {
	if status == fasthttp.StatusForbidden {
		return rejectFileType
	}
	return rejectFileName
}

// AcceptedExtensions are the file types the upload interface takes.
var AcceptedExtensions = []string{"pdf", "ps", "xps", "json", "xml", "zip"}

// CheckName checks an uploaded file's name and returns its extension, or
// the HTTP status and message the specification gives for what is wrong:
// 400 for a path, 500 for no extension, 403 for a type not accepted. Every
// name it accepts can be referenced from metadata (upload/metadata refuses
// paths, drives, control characters and bytes that are not UTF-8 in
// file_name), so that no file is stored that no letter could use.
func CheckName(name string) (ext string, status int, msg string) {
	switch {
	case name == "" || name == "." || name == "..":
		return "", fasthttp.StatusBadRequest, "a file name is required"
	case strings.ContainsAny(name, "/\\") || strings.Contains(name, ".."):
		return "", fasthttp.StatusBadRequest, fmt.Sprintf("file name %q contains a path; send the name alone", name)
	case len(name) >= 2 && name[1] == ':' && ('a' <= name[0]|0x20 && name[0]|0x20 <= 'z'):
		return "", fasthttp.StatusBadRequest, fmt.Sprintf("file name %q names a drive; send the name alone", name)
	case !utf8.ValidString(name):
		return "", fasthttp.StatusBadRequest, fmt.Sprintf("file name %q is not UTF-8", name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return "", fasthttp.StatusBadRequest, "file name contains control characters"
	case len(name) > 255:
		return "", fasthttp.StatusBadRequest, "file name longer than 255 bytes"
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || i == len(name)-1 {
		return "", fasthttp.StatusInternalServerError, fmt.Sprintf("file name %q has no extension", name)
	}
	ext = strings.ToLower(name[i+1:])
	for _, a := range AcceptedExtensions {
		if ext == a {
			return ext, 0, ""
		}
	}
	return "", fasthttp.StatusForbidden, fmt.Sprintf("file type .%s is not accepted: send pdf, ps, xps, json, xml or zip", ext)
}

// put stores one file: PUT /direct_upload/<session>/<filename>.
func (h *Handler) put(ctx *fasthttp.RequestCtx, p Principal) {
	f := FormatText
	if !ctx.IsPut() && !ctx.IsPost() {
		h.refuse(ctx, f, rejectBadRequest, fasthttp.StatusMethodNotAllowed, "upload files with PUT")
		return
	}
	// split the raw path: an encoded slash in the name is still a path
	raw := string(ctx.Request.URI().PathOriginal())
	raw = strings.TrimPrefix(raw, string(pathPut))
	epid, rawName, ok := strings.Cut(raw, "/")
	if !ok {
		h.refuse(ctx, f, rejectBadRequest, fasthttp.StatusBadRequest, "PUT /direct_upload/<session>/<filename>")
		return
	}
	name, err := url.PathUnescape(rawName)
	if err != nil {
		h.refuse(ctx, f, rejectFileName, fasthttp.StatusBadRequest, "file name is not a valid URL path segment")
		return
	}
	ss, ok := h.session(ctx, f, p, epid)
	if !ok {
		return
	}
	ext, status, msg := CheckName(name)
	if status != 0 {
		h.refuse(ctx, f, nameReason(status), status, "%s", msg)
		return
	}
	file, no := h.receive(ss, p.User, name, ext, ctx.Request.Header.ContentLength(), BodyReader(ctx))
	if no.status != 0 {
		if no.status == fasthttp.StatusRequestEntityTooLarge || no.status == fasthttp.StatusForbidden || no.status == fasthttp.StatusServiceUnavailable {
			ctx.SetConnectionClose() // the rest of the body is not read
		}
		h.refuse(ctx, f, no.reason, no.status, "%s", no.msg)
		return
	}
	reply(ctx, f, fasthttp.StatusCreated, []byte(fmt.Sprintf("%s %d %s\n", file.Name, file.Size, file.SHA1)))
}

// BodyReader streams the request body whether fasthttp buffered it or
// not; a chunked body that is cut short fails rather than ending.
func BodyReader(ctx *fasthttp.RequestCtx) io.Reader {
	if r := ctx.RequestBodyStream(); r != nil {
		if ctx.Request.Header.ContentLength() == -1 { // chunked
			return &chunkedBody{r: r, conn: ctx.Conn()}
		}
		return r
	}
	return bytes.NewReader(ctx.PostBody())
}

// chunkedBody tells a chunked body that ended from one whose connection
// dropped between two chunks. fasthttp (v1.77.0) reports both as io.EOF:
// its stream passes on the io.EOF of reading the next chunk's size line
// from a closed connection. A body that ended properly leaves the
// connection open for the answer, so an io.EOF on a connection the client
// has closed is taken as a cut-off body: io.ErrUnexpectedEOF, and nothing
// is stored. (A client that half-closes after a complete chunked body is
// refused too; it gets no answer either way.)
type chunkedBody struct {
	r    io.Reader
	conn net.Conn
}

func (b *chunkedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && peerClosed(b.conn) {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// receive stores a file whose name was checked, checking its content
// against its extension first. What the client did wrong (a file too
// large, cut short, of the wrong type) is its error, answered and not
// logged as the server's: only a failure to store is logged at ERROR.
func (h *Handler) receive(ss Session, by, name, ext string, declared int, body io.Reader) (File, refusal) {
	check := func(head []byte) (string, error) { return checkContent(name, ext, head) }
	file, err := h.store.PutFile(ss, by, name, int64(declared), body, check)
	var rejected *rejectedError
	var cut *readError
	switch {
	case err == nil:
		return file, refusal{}
	case errors.As(err, &rejected):
		return file, refusal{fasthttp.StatusForbidden, rejectFileType, rejected.Error()}
	case errors.Is(err, ErrTooLarge):
		return file, refusal{fasthttp.StatusRequestEntityTooLarge, rejectTooLarge, fmt.Sprintf("%s is larger than %d bytes", name, h.store.opt.MaxFileBytes)}
	case errors.Is(err, ErrBodyTooLarge):
		return file, refusal{fasthttp.StatusRequestEntityTooLarge, rejectTooLarge, fmt.Sprintf("multipart uploads are limited to %d bytes in all", h.cfg.MaxMultipartBytes)}
	case errors.Is(err, ErrNoSpace), errors.Is(err, syscall.ENOSPC):
		h.log.Warn("upload refused: disk short of space", "session", ss.EPID, "file", name)
		return file, refusal{fasthttp.StatusServiceUnavailable, rejectNoSpace, "the server is short of disk space: retry later"}
	case errors.Is(err, ErrSessionClosed):
		return file, refusal{fasthttp.StatusConflict, rejectSessionEnded, fmt.Sprintf("session %s has ended; open a new session", ss.EPID)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		// the client's fault (a truncated body or multipart part): a 500
		// would tell it to send the same again
		return file, refusal{fasthttp.StatusBadRequest, rejectCutOff, fmt.Sprintf("the content of %s ended early: %v", name, err)}
	case errors.As(err, &cut):
		// the body could not be read: the client's connection failed or
		// stalled, or it sent less than it declared
		h.log.Info("upload cut off", "session", ss.EPID, "file", name, "err", err)
		return file, refusal{fasthttp.StatusBadRequest, rejectCutOff, fmt.Sprintf("the content of %s could not be read: %v", name, cut.err)}
	default:
		h.log.Error("upload: storing a file", "session", ss.EPID, "file", name, "err", err)
		return file, refusal{fasthttp.StatusInternalServerError, rejectServerError, "the file could not be stored: " + err.Error()}
	}
}

// endSession ends a session: GET /publicinterface/end_session.<fmt>?session_id=.
func (h *Handler) endSession(ctx *fasthttp.RequestCtx, p Principal, suffix string) {
	f, ok := ParseFormat(suffix)
	if !ok {
		h.refuse(ctx, FormatText, rejectBadRequest, fasthttp.StatusNotFound, "unknown format %q: use end_session.text, .json or .xml", suffix)
		return
	}
	epid := strings.TrimSpace(string(ctx.QueryArgs().Peek("session_id")))
	if epid == "" {
		h.refuse(ctx, f, rejectBadRequest, fasthttp.StatusBadRequest, "the session_id parameter is required")
		return
	}
	ss, ok := h.session(ctx, f, p, epid)
	if !ok {
		return
	}
	res, err := h.end(ss, p.User)
	if err != nil {
		h.internal(ctx, f, "end session", err)
		return
	}
	status := fasthttp.StatusOK
	if res.Result != "ok" {
		status = fasthttp.StatusBadRequest
		add(h.store.m.rejections, rejectMailing, 1)
	}
	reply(ctx, f, status, encodeEnd(f, res))
}

// end ends a session once, by the user or key by: a second call answers
// as the first did (from the caller's reading of the session when it
// has the answer: an ended session's answer never changes).
func (h *Handler) end(ss Session, by string) (EndResult, error) {
	if ss.State == StateEnded && ss.Result != nil {
		return *ss.Result, nil
	}
	cur, files, unlock, err := h.store.lockEnd(ss.EPID)
	if err != nil {
		return EndResult{}, err
	}
	defer unlock()
	if cur.State == StateEnded && cur.Result != nil {
		return *cur.Result, nil
	}
	cur.EndedBy = by
	return h.asm.End(cur, files)
}

// EndFiles lists files as end_session reports them.
func (h *Handler) EndFiles(epid string, files []File) []EndFile {
	out := make([]EndFile, 0, len(files))
	for _, f := range files {
		apath := f.Name
		if f.Archive != "" {
			apath = f.Archive + "!" + f.Name
		}
		if f.Portal {
			apath = "portal!" + f.Name
		}
		out = append(out, EndFile{Name: f.Name, Size: f.Size, Received: f.Received, Declared: f.Declared, Chunks: f.Chunks,
			Intent: f.Intent, First: f.First, Last: f.Last, Host: h.cfg.Host, APath: apath,
			GPath: path.Join("blobs", epid, f.Blob), SHA1: f.SHA1})
	}
	return out
}

// internal answers a failure of the server's: 500, or 503 when it is only
// busy (every page-counting slot taken: end_session and mpf_upload).
func (h *Handler) internal(ctx *fasthttp.RequestCtx, f Format, what string, err error) {
	if errors.Is(err, inspect.ErrBusy) {
		h.log.Warn("upload: "+what, "err", err)
		h.refuse(ctx, f, rejectBusy, fasthttp.StatusServiceUnavailable, "%v", err)
		ctx.Response.Header.Set("Retry-After", "30") // a turn comes within seconds, not minutes
		return
	}
	h.log.Error("upload: "+what, "err", err)
	h.refuse(ctx, f, rejectServerError, fasthttp.StatusInternalServerError, "%s failed; retry later", what)
}
