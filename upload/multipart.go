package upload

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"path"
	"strings"

	"github.com/valyala/fasthttp"
)

// countingReader counts bytes and fails once more than max were read.
type countingReader struct {
	r   io.Reader
	n   int64
	max int64
}

var errMultipartTooLarge = errors.New("multipart upload larger than the limit")

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		return n, errMultipartTooLarge
	}
	return n, err
}

// multipart takes one mailing in one request: POST
// /publicinterface/mpf_upload?account=, every file a part named "file".
// The files are streamed into a new session, which is then ended; the
// answer is end_session's JSON. More than MaxMultipartBytes in all is 413,
// refused from Content-Length before the body is read when it is declared.
func (h *Handler) multipart(ctx *fasthttp.RequestCtx, p Principal) {
	f := FormatJSON
	if !ctx.IsPost() {
		h.refuse(ctx, f, rejectBadRequest, fasthttp.StatusMethodNotAllowed, "POST a multipart form")
		return
	}
	if _, ok := h.account(ctx, f, p); !ok {
		return
	}
	if cl := ctx.Request.Header.ContentLength(); int64(cl) > h.cfg.MaxMultipartBytes {
		ctx.SetConnectionClose()
		h.refuse(ctx, f, rejectTooLarge, fasthttp.StatusRequestEntityTooLarge, "multipart uploads are limited to %d bytes in all; use the standard method for larger mailings", h.cfg.MaxMultipartBytes)
		return
	}
	mt, params, err := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		h.refuse(ctx, f, rejectBadRequest, fasthttp.StatusBadRequest, "send multipart/form-data with a boundary")
		return
	}
	ss, err := h.store.CreateSession(p.Account, p.User)
	if err != nil {
		h.internal(ctx, f, "create session", err)
		return
	}
	// One request, one mailing: a request that fails abandons its session,
	// with its files, and the session keeps why (what the client was told)
	// for whoever tries to continue it.
	ended := false
	why := "the request failed"
	refuse := func(reason string, status int, format string, args ...any) {
		why = fmt.Sprintf(format, args...)
		h.refuse(ctx, f, reason, status, "%s", why)
	}
	defer func() {
		if !ended {
			if err := h.store.Abandon(ss.EPID, why); err != nil {
				h.log.Error("abandon multipart session", "session", ss.EPID, "err", err)
			}
		}
	}()
	tooLarge := func() {
		ctx.SetConnectionClose()
		refuse(rejectTooLarge, fasthttp.StatusRequestEntityTooLarge, "multipart uploads are limited to %d bytes in all", h.cfg.MaxMultipartBytes)
	}
	body := &countingReader{r: bodyReader(ctx), max: h.cfg.MaxMultipartBytes}
	mr := multipart.NewReader(body, params["boundary"])
	n := 0
	// A name is one file of the mailing: a second part of the same name
	// would silently replace the first, and the letters go out with
	// whichever came last.
	partOf := map[string]int{} // file name → its part number
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if errors.Is(err, errMultipartTooLarge) {
				tooLarge()
			} else {
				refuse(rejectBadRequest, fasthttp.StatusBadRequest, "malformed multipart body: %v", err)
			}
			return
		}
		if part.FormName() != "file" {
			io.Copy(io.Discard, part)
			continue
		}
		// browsers may send C:\fakepath\name.pdf: the name is what counts
		name := path.Base(strings.ReplaceAll(part.FileName(), "\\", "/"))
		ext, status, msg := CheckName(name)
		if status != 0 {
			refuse(nameReason(status), status, "part %d: %s", n+1, msg)
			return
		}
		if first, dup := partOf[name]; dup {
			refuse(rejectDuplicate, fasthttp.StatusBadRequest, "parts %d and %d are both named %s: send each file once, under names of their own", first, n+1, name)
			return
		}
		partOf[name] = n + 1
		if _, no := h.receive(ss, p.User, name, ext, -1, part); no.status != 0 {
			if errors.Is(body.err(), errMultipartTooLarge) {
				tooLarge()
				return
			}
			refuse(no.reason, no.status, "part %d: %s", n+1, no.msg)
			return
		}
		n++
	}
	// the parser may have found the closing boundary in what it read
	// before it saw the error: the limit holds all the same
	if errors.Is(body.err(), errMultipartTooLarge) {
		tooLarge()
		return
	}
	if n == 0 {
		refuse(rejectBadRequest, fasthttp.StatusBadRequest, "no file parts: send each file as a part named \"file\"")
		return
	}
	res, err := h.end(ss, p.User)
	if err != nil {
		why = "end session failed"
		h.internal(ctx, f, "end session", err)
		return
	}
	status := fasthttp.StatusOK
	if res.Result != "ok" {
		// the session is abandoned below, not kept open for corrected
		// files as end_session's would be
		status = fasthttp.StatusBadRequest
		if len(res.Errs) > 1 {
			res.Error = fmt.Sprintf("%d problems: correct them and send the whole request again", len(res.Errs))
		}
		why = "the mailing was rejected: " + res.Error
		add(h.store.m.rejections, rejectMailing, 1)
	} else {
		ended = true
	}
	reply(ctx, f, status, encodeEnd(f, res))
}

func (c *countingReader) err() error {
	if c.n > c.max {
		return errMultipartTooLarge
	}
	return nil
}
