package portal

import (
	"bytes"
	"encoding/csv"
	"errors"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/internal/csvsafe"
	"github.com/lodge-mail/lodge/pipeline"
)

// The address check page: addresses pasted one after another, separated
// by a blank line, each judged by the engine; the results shown, or
// downloaded as CSV.
const (
	maxCheckAddresses = 1000
	maxCheckBytes     = 256 << 10
)

type checkRow struct {
	Lines   []string
	Verdict pipeline.Verdict
}

type checkData struct {
	Text string
	Rows []checkRow
}

// checkPage shows the form (GET) or the verdicts of the addresses posted.
func (h *Handler) checkPage(r *request, post bool) {
	if !post {
		h.page(r, fasthttp.StatusOK, "check", "Address check", checkData{}, "")
		return
	}
	text := string(r.ctx.PostArgs().Peek("addresses"))
	d := checkData{Text: text}
	if len(text) > maxCheckBytes {
		h.page(r, fasthttp.StatusRequestEntityTooLarge, "check", "Address check", checkData{}, "At most 256 KiB of addresses at a time.")
		return
	}
	blocks := splitBlocks(text)
	if len(blocks) == 0 {
		h.page(r, fasthttp.StatusUnprocessableEntity, "check", "Address check", d, "Paste at least one address, its lines one under another.")
		return
	}
	if len(blocks) > maxCheckAddresses {
		h.page(r, fasthttp.StatusUnprocessableEntity, "check", "Address check", d, "At most 1,000 addresses at a time; for more, use addr_check or lodge check.")
		return
	}
	for i, b := range blocks {
		lines, ok := pipeline.PostalText(b)
		if !ok {
			h.page(r, fasthttp.StatusUnprocessableEntity, "check", "Address check", d, "Address "+strconv.Itoa(i+1)+" has more than 7 lines: leave a blank line between addresses.")
			return
		}
		v, ok := h.mr.CheckAddress(lines)
		if !ok {
			h.internalError(r, errNoCheck)
			return
		}
		d.Rows = append(d.Rows, checkRow{Lines: lines, Verdict: v})
	}
	if string(r.ctx.PostArgs().Peek("format")) == "csv" {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Write([]string{"address", "status", "nation", "message"})
		for _, row := range d.Rows {
			w.Write([]string{csvsafe.Cell(strings.Join(row.Lines, ", ")), row.Verdict.Status, row.Verdict.Nation, csvsafe.Cell(row.Verdict.Message)})
		}
		w.Flush()
		r.ctx.SetContentType("text/csv; charset=utf-8")
		r.ctx.Response.Header.Set("Content-Disposition", `attachment; filename="addresses-checked.csv"`)
		r.ctx.SetBody(b.Bytes())
		return
	}
	h.page(r, fasthttp.StatusOK, "check", "Address check", d, "")
}

var errNoCheck = errors.New("portal: the mailroom has no address check")

// splitBlocks cuts pasted text into addresses at blank lines.
func splitBlocks(text string) []string {
	var out []string
	var cur []string
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, "\n"))
				cur = nil
			}
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, "\n"))
	}
	return out
}
