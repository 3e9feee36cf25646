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
		fail(ctx, f, fasthttp.StatusMethodNotAllowed, "POST a multipart form")
		return
	}
	account := strings.ToUpper(strings.TrimSpace(string(ctx.QueryArgs().Peek("account"))))
	if account == "" {
		fail(ctx, f, fasthttp.StatusBadRequest, "the account parameter is required")
		return
	}
	if account != p.Account {
		fail(ctx, f, fasthttp.StatusForbidden, "these credentials are not for account %s", account)
		return
	}
	if cl := ctx.Request.Header.ContentLength(); int64(cl) > h.cfg.MaxMultipartBytes {
		ctx.SetConnectionClose()
		fail(ctx, f, fasthttp.StatusRequestEntityTooLarge, "multipart uploads are limited to %d bytes in all; use the standard method for larger mailings", h.cfg.MaxMultipartBytes)
		return
	}
	mt, params, err := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		fail(ctx, f, fasthttp.StatusBadRequest, "send multipart/form-data with a boundary")
		return
	}
	ss, err := h.store.CreateSession(p.Account, p.User)
	if err != nil {
		h.internal(ctx, f, "create session", err)
		return
	}
	// One request, one mailing: a request that fails leaves no session
	// open with its files behind.
	ended := false
	defer func() {
		if !ended {
			if err := h.store.Abandon(ss.EPID); err != nil {
				h.log.Error("abandon multipart session", "session", ss.EPID, "err", err)
			}
		}
	}()
	body := &countingReader{r: bodyReader(ctx), max: h.cfg.MaxMultipartBytes}
	mr := multipart.NewReader(body, params["boundary"])
	n := 0
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			h.multipartError(ctx, f, err)
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
			fail(ctx, f, status, "part %d: %s", n+1, msg)
			return
		}
		if _, status, msg := h.receive(ss, name, ext, -1, part); status != 0 {
			if errors.Is(body.err(), errMultipartTooLarge) {
				h.multipartError(ctx, f, errMultipartTooLarge)
				return
			}
			fail(ctx, f, status, "part %d: %s", n+1, msg)
			return
		}
		n++
	}
	// the parser may have found the closing boundary in what it read
	// before it saw the error: the limit holds all the same
	if errors.Is(body.err(), errMultipartTooLarge) {
		h.multipartError(ctx, f, errMultipartTooLarge)
		return
	}
	if n == 0 {
		fail(ctx, f, fasthttp.StatusBadRequest, "no file parts: send each file as a part named \"file\"")
		return
	}
	res, err := h.end(ss)
	if err != nil {
		h.internal(ctx, f, "end session", err)
		return
	}
	status := fasthttp.StatusOK
	if res.Result != "ok" {
		status = fasthttp.StatusBadRequest
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

func (h *Handler) multipartError(ctx *fasthttp.RequestCtx, f Format, err error) {
	if errors.Is(err, errMultipartTooLarge) {
		ctx.SetConnectionClose()
		fail(ctx, f, fasthttp.StatusRequestEntityTooLarge, "multipart uploads are limited to %d bytes in all", h.cfg.MaxMultipartBytes)
		return
	}
	fail(ctx, f, fasthttp.StatusBadRequest, "malformed multipart body: %s", fmt.Sprint(err))
}
