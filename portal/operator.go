package portal

// The operator view: for users with the operator role (auth.RoleOperator,
// lodge user add -operator), every account's print batches, a batch's
// letters and print file, and marking a batch printed and then lodged,
// as lodge print done|lodged does (printroom's MarkBatch, with its
// refusals). To anyone else every path under /portal/operator answers 404,
// the same page as a path that does not exist. A batch's print file is
// read through Config.Batches (production.Producer.Batches: from the
// object store several nodes share, so that any node serves it, or by a
// redirect to a presigned URL of it when production gives one), or, when
// it is nil, from the batch's folder in this node's hot folder.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/printroom"
	"github.com/lodge-mail/lodge/production"
)

// BatchFiles reads print batches' files: production.Batches.
type BatchFiles interface {
	Has(ctx context.Context, b pipeline.Batch, name string) (bool, error)
	Open(ctx context.Context, b pipeline.Batch, name string) (io.ReadCloser, int64, error)
	// URL is a presigned URL of the file, or "" when lodge serves it.
	URL(ctx context.Context, b pipeline.Batch, name, filename string) (string, error)
}

func (h *Handler) batchFiles() BatchFiles {
	if h.cfg.Batches != nil {
		return h.cfg.Batches
	}
	return production.Batches{} // the hot folder
}

// batchFileTimeout bounds the object store's answer about a batch file.
const batchFileTimeout = 30 * time.Second

// batchesShown bounds the batches list; a state filter finds the rest.
const batchesShown = 500

// batchStates are the states the list filters by.
var batchStates = []string{pipeline.BatchComposing, pipeline.BatchReady, pipeline.BatchPrinted, pipeline.BatchLodged}

type batchesData struct {
	State   string
	States  []string
	Batches []pipeline.Batch
	Total   int // before the cut to batchesShown
	Cut     bool
}

type batchLetter struct {
	Idx       int
	Reference string
	Status    string
	Sheet     int
	Sheets    int
	Missing   bool
}

type batchData struct {
	B        pipeline.Batch
	Mailing  pipeline.Mailing
	Letters  []batchLetter
	CanPrint bool // ready: can be marked printed
	CanLodge bool // ready or printed: can be marked lodged
	HasPDF   bool
}

func (h *Handler) operatorRoutes(r *request, parts []string, post bool) {
	if !r.se.Operator {
		h.notFound(r)
		return
	}
	room := printroom.Local(h.mr)
	switch {
	case len(parts) == 1 && parts[0] == "batches" && !post:
		h.batchesPage(r, room)
	case len(parts) == 3 && parts[0] == "batches" && post && (parts[2] == "printed" || parts[2] == "lodged"):
		h.markBatch(r, room, parts[1], parts[2])
	case len(parts) >= 2 && parts[0] == "batches" && !post:
		b, err := room.Batch(parts[1])
		if errors.Is(err, pipeline.ErrNotFound) {
			h.notFound(r)
			return
		}
		if err != nil {
			h.internalError(r, err)
			return
		}
		switch {
		case len(parts) == 2:
			h.batchPage(r, room, b)
		case len(parts) == 3 && parts[2] == production.BatchPDF:
			h.batchPDF(r, b)
		default:
			h.notFound(r)
		}
	default:
		h.notFound(r)
	}
}

func (h *Handler) batchesPage(r *request, room printroom.Room) {
	state := string(r.ctx.QueryArgs().Peek("state"))
	if err := printroom.CheckState(state); err != nil {
		h.page(r, fasthttp.StatusBadRequest, "error", "Bad request", nil, "There is no batch state of that name.")
		return
	}
	bs, err := room.Batches(state)
	if err != nil {
		h.internalError(r, err)
		return
	}
	// newest first; the list is oldest first
	slices.Reverse(bs)
	d := batchesData{State: state, States: batchStates, Total: len(bs)}
	if len(bs) > batchesShown {
		bs, d.Cut = bs[:batchesShown], true
	}
	d.Batches = bs
	h.page(r, fasthttp.StatusOK, "operator_batches", "Print batches", d, "")
}

func (h *Handler) batchPage(r *request, room printroom.Room, b pipeline.Batch) {
	d := batchData{B: b, CanPrint: b.State == pipeline.BatchReady,
		CanLodge: b.State == pipeline.BatchReady || b.State == pipeline.BatchPrinted}
	m, err := room.Mailing(b.EPID)
	if err != nil && !errors.Is(err, pipeline.ErrNotFound) {
		h.internalError(r, err)
		return
	}
	d.Mailing = m
	if len(b.Letters) > 0 {
		// the batch's letters are some of its mailing's: read the range
		// they span, as lodge print show does
		lo, hi := b.Letters[0], b.Letters[0]
		for _, idx := range b.Letters {
			lo, hi = min(lo, idx), max(hi, idx)
		}
		ls, err := room.Letters(b.EPID, lo, hi-lo+1)
		if err != nil && !errors.Is(err, pipeline.ErrNotFound) {
			h.internalError(r, err)
			return
		}
		byIdx := make(map[int]*pipeline.Letter, len(ls))
		for i := range ls {
			byIdx[ls[i].Idx] = &ls[i]
		}
		for _, idx := range b.Letters {
			l := byIdx[idx]
			if l == nil {
				d.Letters = append(d.Letters, batchLetter{Idx: idx, Missing: true})
				continue
			}
			d.Letters = append(d.Letters, batchLetter{Idx: idx, Reference: l.Reference, Status: l.Status, Sheet: l.Sheet, Sheets: l.Sheets})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), batchFileTimeout)
	d.HasPDF, err = h.batchFiles().Has(ctx, b, production.BatchPDF)
	cancel()
	if err != nil {
		h.internalError(r, err)
		return
	}
	h.page(r, fasthttp.StatusOK, "operator_batch", "Batch "+b.ID, d, "")
}

// batchPDF sends the batch's print file (from its folder in the hot
// folder, while it is there, or from the object store), or redirects to
// a presigned URL of it in the store when production gives one.
func (h *Handler) batchPDF(r *request, b pipeline.Batch) {
	ctx, cancel := context.WithTimeout(context.Background(), batchFileTimeout)
	defer cancel()
	files := h.batchFiles()
	u, err := files.URL(ctx, b, production.BatchPDF, b.ID+".pdf")
	if err == nil && u != "" {
		r.ctx.Response.Header.Set("Cache-Control", "no-store")
		r.ctx.Redirect(u, fasthttp.StatusSeeOther)
		return
	}
	var f io.ReadCloser
	var size int64
	if err == nil {
		// the body is read after this returns: its reading ends when
		// fasthttp closes it, not at the timeout
		bctx, bcancel := context.WithCancel(context.Background())
		f, size, err = files.Open(bctx, b, production.BatchPDF)
		if err != nil {
			bcancel()
		} else {
			f = &closeCancel{f, bcancel}
		}
	}
	if errors.Is(err, os.ErrNotExist) {
		h.notFound(r)
		return
	}
	if err != nil {
		h.internalError(r, err)
		return
	}
	r.ctx.SetContentType("application/pdf")
	r.ctx.Response.Header.Set("Content-Disposition", `attachment; filename="`+b.ID+`.pdf"`)
	r.ctx.SetBodyStream(f, int(size)) // fasthttp closes f
}

// closeCancel cancels its context when it is closed.
type closeCancel struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *closeCancel) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// markBatch marks a batch printed or lodged now, by the signed-in
// operator, through printroom's MarkBatch: the same checks and the same
// change (the batch and its letters in one durable commit) as lodge print
// done|lodged.
func (h *Handler) markBatch(r *request, room printroom.Room, id, what string) {
	state := pipeline.BatchPrinted
	if what == "lodged" {
		state = pipeline.BatchLodged
	}
	b, err := room.MarkBatch(id, state, time.Time{}, r.se.User)
	back := Prefix + "operator/batches/" + id
	switch {
	case errors.Is(err, pipeline.ErrNotFound):
		h.notFound(r)
		return
	case err != nil:
		// printroom's refusals (ErrInvalid) and the mailroom's of the
		// order (still composing, already printed, lodged: errors without
		// a sentinel) leave the batch as it was; say why
		if _, berr := room.Batch(id); berr != nil && !errors.Is(err, printroom.ErrInvalid) {
			h.internalError(r, err)
			return
		}
		h.page(r, fasthttp.StatusConflict, "error", "Not marked "+state, nil, "The batch was not marked "+state+": "+err.Error()+".")
		return
	}
	status := pipeline.Printed
	if state == pipeline.BatchLodged {
		status = pipeline.Lodged
	}
	h.cfg.Log.Info("portal: batch marked", "batch", b.ID, "state", state, "by", r.se.User)
	h.sessions.setFlash(r.id, fmt.Sprintf("Batch %s marked %s: its %d letters are %s.", b.ID, state, len(b.Letters), status))
	r.ctx.Redirect(back, fasthttp.StatusSeeOther)
}
