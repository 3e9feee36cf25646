package smpp

import (
	"bytes"
	"fmt"
	"strings"
	"time"
)

// Receipt is an SMSC delivery receipt: a deliver_sm with esm_class's
// receipt type (0x04).
type Receipt struct {
	// MessageID is the id the SMSC gave the part in submit_sm_resp
	// (receipted_message_id, else the text's id: field).
	MessageID string
	// State is the message's final state: one of the States (the
	// message_state TLV, else the text's stat: field, upper-cased).
	State string
	// Err is the text's err: field (network specific, "000" when none),
	// else the network_error_code TLV as "type:code"; may be empty.
	Err string
	// Done is the text's done date: (YYMMDDhhmm or YYMMDDhhmmss), read
	// as UTC since SMPP 3.4 does not say the SMSC's zone; zero when
	// absent or unreadable.
	Done time.Time
	// To is the number the message was sent to (the receipt's
	// source_addr).
	To string
}

// Receipt states (SMPP 3.4 Appendix B and message_state §5.3.2.35).
// DELIVRD is success; EXPIRED, DELETED, UNDELIV, REJECTD and UNKNOWN say
// the message was not delivered; ACCEPTD and ENROUTE are not final.
const (
	StateEnroute   = "ENROUTE"
	StateDelivered = "DELIVRD"
	StateExpired   = "EXPIRED"
	StateDeleted   = "DELETED"
	StateUndeliv   = "UNDELIV"
	StateAccepted  = "ACCEPTD"
	StateUnknown   = "UNKNOWN"
	StateRejected  = "REJECTD"
)

var messageStates = [...]string{1: StateEnroute, 2: StateDelivered, 3: StateExpired, 4: StateDeleted,
	5: StateUndeliv, 6: StateAccepted, 7: StateUnknown, 8: StateRejected}

// ESMClassReceipt is esm_class's message type of an SMSC delivery
// receipt (bits 2 to 5).
const (
	ESMClassReceipt  byte = 0x04
	esmClassTypeMask byte = 0x3C
)

// IsReceipt reports whether a deliver_sm is an SMSC delivery receipt.
func IsReceipt(m *ShortMessage) bool { return m.ESMClass&esmClassTypeMask == ESMClassReceipt }

// maxStateLen bounds a stat: value a receipt may carry, of ASCII
// letters, digits and _.
const (
	maxStateLen = 16
	stateChars  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
)

// ParseReceipt reads a delivery receipt: the standard text (SMPP 3.4
// Appendix B: "id:… sub:… dlvrd:… submit date:… done date:… stat:…
// err:… text:…", in short_message or message_payload) and the
// receipted_message_id, message_state and network_error_code TLVs, which
// win over the text. A receipt with no message id or no state is an
// error.
func ParseReceipt(m *ShortMessage) (Receipt, error) {
	r := Receipt{To: m.Source.Addr}
	text := string(m.Message)
	if len(m.Message) == 0 {
		if p, ok := m.TLV(TagMessagePayload); ok {
			text = string(p)
		}
	}
	// the free text comes last and may hold anything: fields are looked
	// for before it only
	head := text
	if i := fieldAt(text, "text"); i >= 0 {
		head = text[:i]
	}
	if v, ok := m.TLV(TagReceiptedMessageID); ok {
		r.MessageID = string(bytes.TrimSuffix(v, []byte{0}))
	} else if v, ok := receiptField(head, "id"); ok {
		r.MessageID = v
	}
	if r.MessageID == "" || len(r.MessageID) >= maxMessageID {
		return r, fmt.Errorf("smpp: delivery receipt: no message id of 1 to %d octets (receipted_message_id or id:) in %.80q", maxMessageID-1, text)
	}
	if v, ok := m.TLV(TagMessageState); ok && int(v[0]) < len(messageStates) && messageStates[v[0]] != "" {
		r.State = messageStates[v[0]]
	} else if v, ok := receiptField(head, "stat"); ok && v != "" && len(v) <= maxStateLen && strings.Trim(v, stateChars) == "" {
		r.State = strings.ToUpper(v)
	} else {
		return r, fmt.Errorf("smpp: delivery receipt for %q: no state (message_state 1 to 8, or stat: of 1 to %d letters) in %.80q", r.MessageID, maxStateLen, text)
	}
	if v, ok := receiptField(head, "err"); ok {
		r.Err = v
	} else if v, ok := m.TLV(TagNetworkErrorCode); ok {
		r.Err = fmt.Sprintf("%d:%d", v[0], uint16(v[1])<<8|uint16(v[2]))
	}
	if v, ok := receiptField(head, "done date"); ok {
		for _, layout := range []string{"0601021504", "060102150405"} {
			if t, err := time.Parse(layout, v); err == nil {
				r.Done = t
				break
			}
		}
	}
	return r, nil
}

// fieldAt returns where "key:" starts in s, at the start or after a
// space, case-insensitively; -1 when absent.
func fieldAt(s, key string) int {
	k := key + ":"
	for i := 0; i+len(k) <= len(s); i++ {
		if (i == 0 || s[i-1] == ' ') && strings.EqualFold(s[i:i+len(k)], k) {
			return i
		}
	}
	return -1
}

// receiptField returns the value after "key:" up to the next space.
func receiptField(s, key string) (string, bool) {
	i := fieldAt(s, key)
	if i < 0 {
		return "", false
	}
	v := s[i+len(key)+1:]
	if e := strings.IndexByte(v, ' '); e >= 0 {
		v = v[:e]
	}
	return v, true
}
