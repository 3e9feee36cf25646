package upload

import (
	"bytes"
	"strconv"

	"github.com/segmentio/encoding/json"
	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/pipeline"
)

var pathFailovers = []byte("/publicinterface/failovers.")

// maxFailovers is the most letters one failovers answer lists (newest
// first); limit asks for fewer.
const maxFailovers = 1000

// Failovers returns an account's letters that failed over from email,
// SMS or fax to post, newest first.
func (l *Lodger) Failovers(account string, limit int) ([]pipeline.Letter, error) {
	return l.mr.Store().Failovers(account, limit)
}

type failoverLister interface {
	Failovers(account string, limit int) ([]pipeline.Letter, error)
}

// FailoverLetter is one entry of the failovers answer, in the layout of
// the service in the field (ListFailoversResult/FailoverLetter in XML).
type FailoverLetter struct {
	Reason     string   `json:"reason" xml:"Reason"`
	EPID       string   `json:"epid" xml:"EPID"`
	Reference  string   `json:"reference" xml:"Reference"`
	Index      int      `json:"index" xml:"Index"`
	ReceivedTS float64  `json:"received_ts" xml:"ReceivedTS"`
	FailoverTS float64  `json:"failover_ts" xml:"FailoverTS"`
	Status     string   `json:"status" xml:"Status"`
	Transport  []string `json:"transport" xml:"Transport>Channel"`
}

// failovers answers GET /publicinterface/failovers.<fmt>?account=CODE
// [&limit=N]: the account's letters that failed over to post.
func (h *Handler) failovers(ctx *fasthttp.RequestCtx, p Principal, suffix string) {
	f, ok := ParseFormat(suffix)
	if !ok || f == FormatText {
		h.refuse(ctx, FormatText, rejectBadRequest, fasthttp.StatusNotFound, "unknown format %q: use failovers.json or .xml", suffix)
		return
	}
	if !ctx.IsGet() {
		h.refuse(ctx, f, rejectBadRequest, fasthttp.StatusMethodNotAllowed, "use GET")
		return
	}
	account, ok := h.account(ctx, f, p)
	if !ok {
		return
	}
	limit := maxFailovers
	if v := ctx.QueryArgs().Peek("limit"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > maxFailovers {
			h.refuse(ctx, f, rejectBadRequest, fasthttp.StatusBadRequest, "limit is 1 to %d", maxFailovers)
			return
		}
		limit = n
	}
	fl, ok := h.asm.(failoverLister)
	if !ok {
		h.refuse(ctx, f, rejectBadRequest, fasthttp.StatusNotFound, "no mailroom here")
		return
	}
	letters, err := fl.Failovers(account, limit)
	if err != nil {
		h.internal(ctx, f, "failovers", err)
		return
	}
	out := make([]FailoverLetter, 0, len(letters))
	for _, l := range letters {
		e := FailoverLetter{Reason: l.Failover.Reason, EPID: l.EPID, Reference: l.Reference, Index: l.Idx,
			ReceivedTS: unixSeconds(l.Received), FailoverTS: unixSeconds(l.Failover.Time), Status: l.Status,
			Transport: []string{pipeline.Transport(l.Failover.From), "POST"}}
		out = append(out, e)
	}
	var body []byte
	if f == FormatJSON {
		var b bytes.Buffer
		json.NewEncoder(&b).Encode(map[string]any{"failovers": out})
		body = b.Bytes()
	} else {
		body = xmlDoc("ListFailoversResult", struct {
			Letters []FailoverLetter `xml:"FailoverLetter"`
		}{out})
	}
	reply(ctx, f, fasthttp.StatusOK, body)
}
