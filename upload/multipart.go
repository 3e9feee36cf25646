package upload

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"

	"github.com/valyala/fasthttp"
)

// CountingReader counts the bytes read through it and fails with
// ErrBodyTooLarge once more than Max were read: a streamed upload body
// (mpf_upload's, the portal's upload forms') bounded as it arrives.
type CountingReader struct {
	R   io.Reader
	N   int64
	Max int64
}

// ErrBodyTooLarge is CountingReader's error past its Max.
var ErrBodyTooLarge = errors.New("multipart upload larger than the limit")

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	if c.N > c.Max {
		return n, ErrBodyTooLarge
	}
	return n, err
}

// Err is ErrBodyTooLarge once more than Max bytes were read, else nil.
func (c *CountingReader) Err() error {
	if c.N > c.Max {
		return ErrBodyTooLarge
	}
	return nil
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
	in, err := h.Begin(p)
	if err != nil {
		h.internal(ctx, f, "create session", err)
		return
	}
	// One request, one mailing: a request that fails abandons its session,
	// with its files, and the session keeps why (what the client was told)
	// for whoever tries to continue it.
	why := "the request failed"
	refuse := func(reason string, status int, format string, args ...any) {
		why = fmt.Sprintf(format, args...)
		h.refuse(ctx, f, reason, status, "%s", why)
	}
	defer func() {
		if err := in.Close(why); err != nil {
			h.log.Error("abandon multipart session", "session", in.EPID(), "err", err)
		}
	}()
	tooLarge := func() {
		ctx.SetConnectionClose()
		refuse(rejectTooLarge, fasthttp.StatusRequestEntityTooLarge, "multipart uploads are limited to %d bytes in all", h.cfg.MaxMultipartBytes)
	}
	body := &CountingReader{R: BodyReader(ctx), Max: h.cfg.MaxMultipartBytes}
	mr := multipart.NewReader(body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if errors.Is(err, ErrBodyTooLarge) {
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
		if _, err := in.Add(part.FileName(), part); err != nil {
			no := err.(*Refusal)
			switch {
			case errors.Is(body.Err(), ErrBodyTooLarge):
				tooLarge()
			case no.First != 0:
				refuse(no.Reason, no.Status, "parts %d and %d are both named %s: send each file once, under names of their own", no.First, no.Part, no.Name)
			default:
				refuse(no.Reason, no.Status, "part %d: %s", no.Part, no.Msg)
			}
			return
		}
	}
	// the parser may have found the closing boundary in what it read
	// before it saw the error: the limit holds all the same
	if errors.Is(body.Err(), ErrBodyTooLarge) {
		tooLarge()
		return
	}
	if in.Files() == 0 {
		refuse(rejectBadRequest, fasthttp.StatusBadRequest, "no file parts: send each file as a part named \"file\"")
		return
	}
	res, err := in.End()
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
	}
	reply(ctx, f, status, encodeEnd(f, res))
}
