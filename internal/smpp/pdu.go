package smpp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// CommandID is a PDU's command_id. The high bit marks a response.
type CommandID uint32

// The commands this package reads and writes. Any other command_id
// decodes to a PDU whose Body is *Raw: a request of that kind is answered
// with generic_nack (ESME_RINVCMDID).
const (
	GenericNack         CommandID = 0x80000000
	SubmitSM            CommandID = 0x00000004
	SubmitSMResp        CommandID = 0x80000004
	DeliverSM           CommandID = 0x00000005
	DeliverSMResp       CommandID = 0x80000005
	Unbind              CommandID = 0x00000006
	UnbindResp          CommandID = 0x80000006
	BindTransceiver     CommandID = 0x00000009
	BindTransceiverResp CommandID = 0x80000009
	EnquireLink         CommandID = 0x00000015
	EnquireLinkResp     CommandID = 0x80000015
)

var commandNames = map[CommandID]string{
	GenericNack:         "generic_nack",
	SubmitSM:            "submit_sm",
	SubmitSMResp:        "submit_sm_resp",
	DeliverSM:           "deliver_sm",
	DeliverSMResp:       "deliver_sm_resp",
	Unbind:              "unbind",
	UnbindResp:          "unbind_resp",
	BindTransceiver:     "bind_transceiver",
	BindTransceiverResp: "bind_transceiver_resp",
	EnquireLink:         "enquire_link",
	EnquireLinkResp:     "enquire_link_resp",
}

func (id CommandID) String() string {
	if n, ok := commandNames[id]; ok {
		return n
	}
	return fmt.Sprintf("command 0x%08X", uint32(id))
}

// Known reports whether this package reads the command's body.
func (id CommandID) Known() bool { _, ok := commandNames[id]; return ok }

// IsResponse reports whether the command is a response (generic_nack
// included).
func (id CommandID) IsResponse() bool { return id&0x80000000 != 0 }

// Bounds of the codec. command_length counts the whole PDU, its 16-octet
// header included. SMPP 3.4 sets no maximum; 65,536 is far above any PDU
// this package writes (a submit_sm is under 400 octets) and bounds what a
// peer can make it allocate.
const (
	HeaderLen    = 16
	MaxPDULen    = 65536
	MaxShortMsg  = 254 // sm_length's maximum (SMPP 3.4 §5.2.21)
	InterfaceV34 = 0x34
)

// The largest C-octet strings of SMPP 3.4 §4, terminating NUL included.
const (
	maxSystemID     = 16
	maxPassword     = 9
	maxSystemType   = 13
	maxAddressRange = 41
	maxServiceType  = 6
	maxAddr         = 21
	maxTime         = 17
	maxMessageID    = 65
)

// Optional parameter (TLV) tags this package knows. Other tags are kept
// as they came and written back unchanged.
const (
	TagReceiptedMessageID   uint16 = 0x001E // C-string, the message id a receipt is about
	TagUserMessageReference uint16 = 0x0204 // 2 octets, the ESME's reference
	TagSARMsgRefNum         uint16 = 0x020C // 2 octets
	TagSARTotalSegments     uint16 = 0x020E // 1 octet
	TagSARSegmentSeqnum     uint16 = 0x020F // 1 octet
	TagSCInterfaceVersion   uint16 = 0x0210 // 1 octet, in bind responses
	TagNetworkErrorCode     uint16 = 0x0423 // 3 octets: network type, error code
	TagMessagePayload       uint16 = 0x0424 // the message, instead of short_message
	TagMessageState         uint16 = 0x0427 // 1 octet, in receipts
)

// fixedTLVLen is the value length a known fixed-size TLV must have.
var fixedTLVLen = map[uint16]int{
	TagUserMessageReference: 2,
	TagSARMsgRefNum:         2,
	TagSARTotalSegments:     1,
	TagSARSegmentSeqnum:     1,
	TagSCInterfaceVersion:   1,
	TagNetworkErrorCode:     3,
	TagMessageState:         1,
}

// TLV is an optional parameter.
type TLV struct {
	Tag   uint16
	Value []byte
}

// PDU is one SMPP protocol data unit. Body is nil for commands without a
// body (unbind, enquire_link and their responses, generic_nack) and for a
// response whose body is absent (a peer may omit it when Status is not
// OK); otherwise *Bind, *BindResp, *ShortMessage (submit_sm, deliver_sm),
// *SMResp (their responses) or *Raw (a command this package does not
// read).
type PDU struct {
	ID     CommandID
	Status Status
	Seq    uint32
	Body   Body
}

// Body is a PDU's body; the types of this package only.
type Body interface{ isBody() }

// Bind is the body of bind_transceiver.
type Bind struct {
	SystemID         string
	Password         string
	SystemType       string
	InterfaceVersion byte
	AddrTON, AddrNPI byte
	AddressRange     string
}

// BindResp is the body of bind_transceiver_resp.
type BindResp struct {
	SystemID string
	TLVs     []TLV
}

// Address is a source or destination address with its type of number
// and numbering plan indicator.
type Address struct {
	TON, NPI byte
	Addr     string
}

// ShortMessage is the body of submit_sm and deliver_sm (the same fields
// in SMPP 3.4).
type ShortMessage struct {
	ServiceType          string
	Source, Dest         Address
	ESMClass             byte
	ProtocolID           byte
	PriorityFlag         byte
	ScheduleDeliveryTime string
	ValidityPeriod       string
	RegisteredDelivery   byte
	ReplaceIfPresent     byte
	DataCoding           byte
	SMDefaultMsgID       byte
	Message              []byte // short_message, at most MaxShortMsg octets
	TLVs                 []TLV
}

// SMResp is the body of submit_sm_resp and deliver_sm_resp.
type SMResp struct {
	MessageID string
}

// Raw is the body of a command this package does not read, kept as it
// came.
type Raw struct {
	Bytes []byte
}

func (*Bind) isBody()         {}
func (*BindResp) isBody()     {}
func (*ShortMessage) isBody() {}
func (*SMResp) isBody()       {}
func (*Raw) isBody()          {}

// TLV returns the value of the first optional parameter with the tag.
func (m *ShortMessage) TLV(tag uint16) ([]byte, bool) { return findTLV(m.TLVs, tag) }

func findTLV(tlvs []TLV, tag uint16) ([]byte, bool) {
	for _, t := range tlvs {
		if t.Tag == tag {
			return t.Value, true
		}
	}
	return nil, false
}

// ErrMalformed is matched (errors.Is) by every error of a PDU that breaks
// SMPP 3.4 or this package's bounds; the error is a *MalformedError
// naming the command, field and offset.
var ErrMalformed = errors.New("smpp: malformed PDU")

// MalformedError locates what is wrong in a PDU: Offset counts octets
// from the start of the PDU (its command_length).
type MalformedError struct {
	Command CommandID
	Field   string
	Offset  int
	Reason  string
}

func (e *MalformedError) Error() string {
	what := "PDU" // its command_length is wrong: its command_id was not read
	if e.Command != 0 {
		what = e.Command.String()
	}
	return fmt.Sprintf("smpp: malformed %s: %s at offset %d: %s", what, e.Field, e.Offset, e.Reason)
}

func (e *MalformedError) Is(target error) bool { return target == ErrMalformed }

// ReadPDU reads one PDU from r. command_length is checked before the rest
// is read, so a peer cannot make it allocate more than MaxPDULen octets.
// An io error is returned as it is (io.EOF before the first octet, else
// io.ErrUnexpectedEOF); a PDU that breaks the rules, as a *MalformedError.
func ReadPDU(r io.Reader) (*PDU, error) {
	var h [HeaderLen]byte
	if _, err := io.ReadFull(r, h[:4]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(h[:4])
	if n < HeaderLen || n > MaxPDULen {
		return nil, &MalformedError{Command: 0, Field: "command_length", Offset: 0,
			Reason: fmt.Sprintf("%d is outside %d..%d", n, HeaderLen, MaxPDULen)}
	}
	b := make([]byte, n)
	copy(b, h[:4])
	if _, err := io.ReadFull(r, b[4:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return Decode(b)
}

// Decode reads one whole PDU: b is exactly command_length octets.
func Decode(b []byte) (*PDU, error) {
	if len(b) < HeaderLen {
		return nil, &MalformedError{Field: "header", Offset: 0,
			Reason: fmt.Sprintf("%d octets, a header is %d", len(b), HeaderLen)}
	}
	n := binary.BigEndian.Uint32(b)
	p := &PDU{
		ID:     CommandID(binary.BigEndian.Uint32(b[4:])),
		Status: Status(binary.BigEndian.Uint32(b[8:])),
		Seq:    binary.BigEndian.Uint32(b[12:]),
	}
	if n < HeaderLen || n > MaxPDULen {
		return nil, &MalformedError{Command: p.ID, Field: "command_length", Offset: 0,
			Reason: fmt.Sprintf("%d is outside %d..%d", n, HeaderLen, MaxPDULen)}
	}
	if int(n) != len(b) {
		return nil, &MalformedError{Command: p.ID, Field: "command_length", Offset: 0,
			Reason: fmt.Sprintf("says %d octets, the PDU has %d", n, len(b))}
	}
	d := &decoder{b: b, off: HeaderLen, cmd: p.ID}
	empty := len(b) == HeaderLen
	switch p.ID {
	case GenericNack, Unbind, UnbindResp, EnquireLink, EnquireLinkResp:
	case BindTransceiver:
		p.Body = &Bind{
			SystemID:         d.cstring("system_id", maxSystemID),
			Password:         d.cstring("password", maxPassword),
			SystemType:       d.cstring("system_type", maxSystemType),
			InterfaceVersion: d.byte("interface_version"),
			AddrTON:          d.byte("addr_ton"),
			AddrNPI:          d.byte("addr_npi"),
			AddressRange:     d.cstring("address_range", maxAddressRange),
		}
	case BindTransceiverResp:
		if !empty {
			p.Body = &BindResp{SystemID: d.cstring("system_id", maxSystemID), TLVs: d.tlvs()}
		}
	case SubmitSM, DeliverSM:
		p.Body = d.shortMessage()
	case SubmitSMResp, DeliverSMResp:
		if !empty {
			p.Body = &SMResp{MessageID: d.cstring("message_id", maxMessageID)}
		}
	default:
		p.Body = &Raw{Bytes: bytes.Clone(b[HeaderLen:])}
		d.off = len(b)
	}
	if d.err == nil && d.off != len(b) {
		d.fail("body", "%d octets after the last field", len(b)-d.off)
	}
	if d.err != nil {
		return nil, d.err
	}
	return p, nil
}

type decoder struct {
	b   []byte
	off int
	cmd CommandID
	err error
}

func (d *decoder) fail(field, format string, args ...any) {
	if d.err == nil {
		d.err = &MalformedError{Command: d.cmd, Field: field, Offset: d.off, Reason: fmt.Sprintf(format, args...)}
	}
}

func (d *decoder) byte(field string) byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.b) {
		d.fail(field, "the PDU ends")
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

// cstring reads a C-octet string of at most max octets, its NUL
// included.
func (d *decoder) cstring(field string, max int) string {
	if d.err != nil {
		return ""
	}
	if d.off >= len(d.b) {
		d.fail(field, "the PDU ends")
		return ""
	}
	rest := d.b[d.off:min(len(d.b), d.off+max)]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		if len(rest) == max {
			d.fail(field, "no NUL within %d octets (its maximum)", max)
		} else {
			d.fail(field, "no NUL before the PDU ends")
		}
		return ""
	}
	s := string(rest[:i])
	d.off += i + 1
	return s
}

func (d *decoder) address(field string) Address {
	return Address{
		TON:  d.byte(field + "_ton"),
		NPI:  d.byte(field + "_npi"),
		Addr: d.cstring(field, maxAddr),
	}
}

func (d *decoder) time(field string) string {
	at := d.off
	s := d.cstring(field, maxTime)
	if d.err == nil && len(s) != 0 && len(s) != maxTime-1 {
		d.off = at
		d.fail(field, "%d characters, not 0 or %d", len(s), maxTime-1)
	}
	return s
}

func (d *decoder) shortMessage() *ShortMessage {
	m := &ShortMessage{ServiceType: d.cstring("service_type", maxServiceType)}
	m.Source = d.address("source_addr")
	m.Dest = d.address("dest_addr")
	m.ESMClass = d.byte("esm_class")
	m.ProtocolID = d.byte("protocol_id")
	m.PriorityFlag = d.byte("priority_flag")
	m.ScheduleDeliveryTime = d.time("schedule_delivery_time")
	m.ValidityPeriod = d.time("validity_period")
	m.RegisteredDelivery = d.byte("registered_delivery")
	m.ReplaceIfPresent = d.byte("replace_if_present_flag")
	m.DataCoding = d.byte("data_coding")
	m.SMDefaultMsgID = d.byte("sm_default_msg_id")
	at := d.off
	n := int(d.byte("sm_length"))
	if d.err != nil {
		return nil
	}
	if n > MaxShortMsg {
		d.off = at
		d.fail("sm_length", "%d is over %d", n, MaxShortMsg)
		return nil
	}
	if d.off+n > len(d.b) {
		d.fail("short_message", "sm_length %d, %d octets left", n, len(d.b)-d.off)
		return nil
	}
	m.Message = bytes.Clone(d.b[d.off : d.off+n])
	d.off += n
	m.TLVs = d.tlvs()
	return m
}

// tlvs reads optional parameters to the end of the PDU.
func (d *decoder) tlvs() []TLV {
	var out []TLV
	for d.err == nil && d.off < len(d.b) {
		if len(d.b)-d.off < 4 {
			d.fail("tlv", "%d octets left, a tag and length are 4", len(d.b)-d.off)
			return nil
		}
		tag := binary.BigEndian.Uint16(d.b[d.off:])
		n := int(binary.BigEndian.Uint16(d.b[d.off+2:]))
		field := fmt.Sprintf("tlv 0x%04X", tag)
		if d.off+4+n > len(d.b) {
			d.fail(field, "length %d, %d octets left", n, len(d.b)-d.off-4)
			return nil
		}
		v := d.b[d.off+4 : d.off+4+n]
		if reason := checkTLV(tag, v); reason != "" {
			d.fail(field, "%s", reason)
			return nil
		}
		out = append(out, TLV{Tag: tag, Value: bytes.Clone(v)})
		d.off += 4 + n
	}
	return out
}

// checkTLV says what is wrong with a known TLV's value, or "".
func checkTLV(tag uint16, v []byte) string {
	if n, ok := fixedTLVLen[tag]; ok && len(v) != n {
		return fmt.Sprintf("length %d, it is %d", len(v), n)
	}
	if tag == TagReceiptedMessageID {
		if len(v) == 0 || len(v) > maxMessageID || bytes.IndexByte(v, 0) != len(v)-1 {
			return fmt.Sprintf("not a C-string of at most %d octets", maxMessageID)
		}
	}
	return ""
}

// Append encodes p after b. It checks what Decode checks: a PDU that
// Append writes, Decode reads back the same.
func (p *PDU) Append(b []byte) ([]byte, error) {
	start := len(b)
	b = binary.BigEndian.AppendUint32(b, 0) // command_length, set below
	b = binary.BigEndian.AppendUint32(b, uint32(p.ID))
	b = binary.BigEndian.AppendUint32(b, uint32(p.Status))
	b = binary.BigEndian.AppendUint32(b, p.Seq)
	e := &encoder{b: b, start: start, cmd: p.ID}
	switch body := p.Body.(type) {
	case nil:
		switch p.ID {
		case GenericNack, Unbind, UnbindResp, EnquireLink, EnquireLinkResp,
			BindTransceiverResp, SubmitSMResp, DeliverSMResp:
		default:
			if p.ID.Known() {
				e.fail("body", "%s needs a body", p.ID)
			}
		}
	case *Bind:
		e.want(BindTransceiver)
		e.cstring("system_id", body.SystemID, maxSystemID)
		e.cstring("password", body.Password, maxPassword)
		e.cstring("system_type", body.SystemType, maxSystemType)
		e.b = append(e.b, body.InterfaceVersion, body.AddrTON, body.AddrNPI)
		e.cstring("address_range", body.AddressRange, maxAddressRange)
	case *BindResp:
		e.want(BindTransceiverResp)
		e.cstring("system_id", body.SystemID, maxSystemID)
		e.tlvs(body.TLVs)
	case *ShortMessage:
		e.want(SubmitSM, DeliverSM)
		e.cstring("service_type", body.ServiceType, maxServiceType)
		e.b = append(e.b, body.Source.TON, body.Source.NPI)
		e.cstring("source_addr", body.Source.Addr, maxAddr)
		e.b = append(e.b, body.Dest.TON, body.Dest.NPI)
		e.cstring("destination_addr", body.Dest.Addr, maxAddr)
		e.b = append(e.b, body.ESMClass, body.ProtocolID, body.PriorityFlag)
		e.time("schedule_delivery_time", body.ScheduleDeliveryTime)
		e.time("validity_period", body.ValidityPeriod)
		e.b = append(e.b, body.RegisteredDelivery, body.ReplaceIfPresent, body.DataCoding, body.SMDefaultMsgID)
		if len(body.Message) > MaxShortMsg {
			e.fail("short_message", "%d octets, at most %d", len(body.Message), MaxShortMsg)
		}
		e.b = append(e.b, byte(len(body.Message)))
		e.b = append(e.b, body.Message...)
		e.tlvs(body.TLVs)
	case *SMResp:
		e.want(SubmitSMResp, DeliverSMResp)
		e.cstring("message_id", body.MessageID, maxMessageID)
	case *Raw:
		if p.ID.Known() {
			e.fail("body", "raw body for %s", p.ID)
		}
		e.b = append(e.b, body.Bytes...)
	default:
		e.fail("body", "%T is not a body of this package", body)
	}
	if e.err == nil && len(e.b)-start > MaxPDULen {
		e.off(start)
		e.fail("command_length", "%d octets, at most %d", len(e.b)-start, MaxPDULen)
	}
	if e.err != nil {
		return b[:start], e.err
	}
	binary.BigEndian.PutUint32(e.b[start:], uint32(len(e.b)-start))
	return e.b, nil
}

type encoder struct {
	b     []byte
	start int
	cmd   CommandID
	at    int // offset of the field being written, for errors
	err   error
}

func (e *encoder) off(at int) { e.at = at - e.start }

func (e *encoder) fail(field, format string, args ...any) {
	if e.err == nil {
		e.err = &MalformedError{Command: e.cmd, Field: field, Offset: e.at, Reason: fmt.Sprintf(format, args...)}
	}
}

func (e *encoder) want(ids ...CommandID) {
	for _, id := range ids {
		if e.cmd == id {
			return
		}
	}
	e.off(len(e.b))
	e.fail("body", "the body does not belong to %s", e.cmd)
}

func (e *encoder) cstring(field, s string, max int) {
	e.off(len(e.b))
	if len(s) >= max {
		e.fail(field, "%d octets, at most %d", len(s), max-1)
	}
	if i := bytes.IndexByte([]byte(s), 0); i >= 0 {
		e.fail(field, "NUL at octet %d", i)
	}
	e.b = append(e.b, s...)
	e.b = append(e.b, 0)
}

func (e *encoder) time(field, s string) {
	if len(s) != 0 && len(s) != maxTime-1 {
		e.off(len(e.b))
		e.fail(field, "%d characters, not 0 or %d", len(s), maxTime-1)
	}
	e.cstring(field, s, maxTime)
}

func (e *encoder) tlvs(tlvs []TLV) {
	for _, t := range tlvs {
		e.off(len(e.b))
		field := fmt.Sprintf("tlv 0x%04X", t.Tag)
		if len(t.Value) > 0xFFFF {
			e.fail(field, "%d octets, at most 65535", len(t.Value))
		} else if reason := checkTLV(t.Tag, t.Value); reason != "" {
			e.fail(field, "%s", reason)
		}
		e.b = binary.BigEndian.AppendUint16(e.b, t.Tag)
		e.b = binary.BigEndian.AppendUint16(e.b, uint16(len(t.Value)))
		e.b = append(e.b, t.Value...)
	}
}
