package upload

import (
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/rpc"
)

// maxRefs bounds the references of one get_letter_status call.
const maxRefs = 1000

// letterStatus is one letter as get_letter_status reports it.
type letterStatus struct {
	EPID       string   `json:"epid"`
	Ref        string   `json:"ref"`
	Status     string   `json:"status"`
	Idx        int      `json:"idx"`
	ReceivedTS float64  `json:"received_ts"`
	Transport  any      `json:"transport"` // a string, or an array when there are several
	HoldReason string   `json:"hold_reason,omitempty"`
	Address    *Verdict `json:"address,omitempty"`
}

// GetLetterStatus is the JSON-RPC method get_letter_status: params
// {"account": "ABC12345", "refs": ["myref1", ...]}; result {"letters":
// [...]}, every letter of the account with one of the references.
func (s *Store) GetLetterStatus(dst, params []byte, p rpc.Principal) ([]byte, int, string) {
	var in struct {
		Account string   `json:"account"`
		Refs    []string `json:"refs"`
	}
	if len(params) == 0 || json.Unmarshal(params, &in) != nil {
		return dst, rpc.CodeInvalidParams, `invalid params: want {"account": "ABC12345", "refs": ["reference", ...]}`
	}
	if in.Account != p.Account {
		return dst, rpc.CodeInvalidParams, "invalid params: these credentials are not for account " + in.Account
	}
	if len(in.Refs) == 0 || len(in.Refs) > maxRefs {
		return dst, rpc.CodeInvalidParams, "invalid params: give 1 to 1000 refs"
	}
	out := struct {
		Letters []letterStatus `json:"letters"`
	}{Letters: []letterStatus{}}
	for _, ref := range in.Refs {
		ls, err := s.LettersByRef(p.Account, ref)
		if err != nil {
			return dst, rpc.CodeInternalError, "internal error"
		}
		for _, l := range ls {
			names := make([]string, len(l.Transport))
			for i, t := range l.Transport {
				names[i] = upperTransport(t)
			}
			var tr any = names
			if len(names) == 1 {
				tr = names[0]
			}
			out.Letters = append(out.Letters, letterStatus{EPID: l.EPID, Ref: l.Reference, Status: l.Status, Idx: l.Idx,
				ReceivedTS: float64(l.Received.UnixNano()) / float64(time.Second), Transport: tr, HoldReason: l.HoldReason, Address: l.Address})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return dst, rpc.CodeInternalError, "internal error"
	}
	return append(dst, b...), 0, ""
}

func upperTransport(t string) string {
	switch t {
	case "postal":
		return "POST"
	case "email":
		return "EMAIL"
	case "sms":
		return "SMS"
	case "fax":
		return "FAX"
	}
	return t
}
