package portal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/pipeline"
)

// previewTimeout bounds the making of one preview.
const previewTimeout = 60 * time.Second

// previewPDF serves a letter's preview (production.Producer.PreviewPDF):
// a PDF shown in the browser, made for this request and not kept.
func (h *Handler) previewPDF(r *request, m pipeline.Mailing, idx int) {
	if h.cfg.Preview == nil {
		h.page(r, fasthttp.StatusNotFound, "error", "No preview", nil, "Previews are not available on this server.")
		return
	}
	l, ok := h.letterOf(r, m, idx)
	if !ok {
		return
	}
	if len(l.Documents) == 0 {
		h.page(r, fasthttp.StatusNotFound, "error", "No preview", nil, "This letter has no document to preview: its message is its template's text.")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), previewTimeout)
	defer cancel()
	f, size, err := h.cfg.Preview(ctx, &m, &l)
	switch {
	case err == nil:
	case h.cfg.PreviewBusy != nil && errors.Is(err, h.cfg.PreviewBusy):
		r.ctx.Response.Header.Set("Retry-After", "5")
		h.page(r, fasthttp.StatusServiceUnavailable, "error", "Busy", nil, "Many previews are being made just now: try again in a few seconds.")
		return
	case h.cfg.DocumentError != nil && h.cfg.DocumentError(err):
		h.page(r, fasthttp.StatusUnprocessableEntity, "error", "No preview", nil, "This letter cannot be previewed: "+err.Error())
		return
	default:
		h.internalError(r, err)
		return
	}
	r.ctx.SetContentType("application/pdf")
	r.ctx.Response.Header.Set("Content-Disposition", fmt.Sprintf(`inline; filename="%s-letter-%d.pdf"`, m.EPID, idx+1))
	// fasthttp closes the file once the body is sent; it is already
	// unlinked, so nothing stays behind
	r.ctx.SetBodyStream(f, int(size))
}
