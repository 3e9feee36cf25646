package portal

import (
	"encoding/json"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/pipeline"
)

// maxSuggestBytes bounds the address a suggestion is asked for: the
// correction box takes 1,000 characters.
const maxSuggestBytes = 4000

// suggestion is what /portal/suggest answers: the engine's verdict on the
// address typed so far and the address it suggests, if any.
type suggestion struct {
	Status     string   `json:"status,omitempty"`
	Nation     string   `json:"nation,omitempty"`
	Message    string   `json:"message,omitempty"`
	Suggestion []string `json:"suggestion,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// suggest answers GET /portal/suggest?address=…: the live check behind the
// correction box (static/app.js asks as the customer types). It reads
// nothing of any account and changes nothing: it is the address check,
// for a signed-in user.
func (h *Handler) suggest(r *request) {
	text := r.ctx.QueryArgs().Peek("address")
	var s suggestion
	status := fasthttp.StatusOK
	if len(text) > maxSuggestBytes {
		s.Error, status = "the address is too long", fasthttp.StatusRequestEntityTooLarge
	} else if lines, ok := pipeline.PostalText(string(text)); !ok {
		s.Error, status = "type the address on 1 to 7 lines", fasthttp.StatusUnprocessableEntity
	} else if v, sug, ok := h.mr.SuggestAddress(lines); !ok {
		s.Error, status = "no address check on this server", fasthttp.StatusNotFound
	} else {
		s = suggestion{Status: v.Status, Nation: v.Nation, Message: v.Message, Suggestion: sug}
	}
	b, _ := json.Marshal(s)
	r.ctx.SetStatusCode(status)
	r.ctx.SetContentType("application/json")
	r.ctx.SetBody(b)
}
