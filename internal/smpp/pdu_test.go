package smpp

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testenv"
)

// frame builds a PDU from its parts, command_length counted.
func frame(id CommandID, status Status, seq uint32, body ...[]byte) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint32(b[4:], uint32(id))
	binary.BigEndian.PutUint32(b[8:], uint32(status))
	binary.BigEndian.PutUint32(b[12:], seq)
	for _, p := range body {
		b = append(b, p...)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	return b
}

func unhex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// smFields is a submit_sm body up to and including sm_length and the
// message: service_type "", source 1/1 "61400000000", dest 1/1
// "61412345678", esm_class 0, protocol 0, priority 0, no times,
// registered_delivery 1, replace 0, data_coding 0, default 0.
func smFields(msg string) []byte {
	b := []byte{0, 1, 1}
	b = append(b, "61400000000\x00"...)
	b = append(b, 1, 1)
	b = append(b, "61412345678\x00"...)
	b = append(b, 0, 0, 0, 0, 0, 1, 0, 0, 0, byte(len(msg)))
	return append(b, msg...)
}

// TestEncodeGolden: the octets of PDUs written by hand from SMPP 3.4's
// layouts.
func TestEncodeGolden(t *testing.T) {
	f := func(p *PDU, want string) {
		t.Helper()
		got, err := p.Append(nil)
		if err != nil {
			t.Fatalf("%s: %v", p.ID, err)
		}
		if w := unhex(want); !bytes.Equal(got, w) {
			t.Fatalf("%s:\n got %x\nwant %x", p.ID, got, w)
		}
		back, err := Decode(got)
		if err != nil {
			t.Fatalf("%s: decoding: %v", p.ID, err)
		}
		if !reflect.DeepEqual(back, p) {
			t.Fatalf("%s: decoded %+v, want %+v", p.ID, back, p)
		}
	}
	f(&PDU{ID: EnquireLink, Seq: 7}, "00000010 00000015 00000000 00000007")
	f(&PDU{ID: GenericNack, Status: StatusInvCmdID, Seq: 9}, "00000010 80000000 00000003 00000009")
	f(&PDU{ID: BindTransceiver, Seq: 1, Body: &Bind{SystemID: "lodge", Password: "secret", InterfaceVersion: 0x34}},
		"00000022 00000009 00000000 00000001"+"6c6f64676500"+"73656372657400"+"00"+"34 00 00"+"00")
	f(&PDU{ID: BindTransceiverResp, Seq: 1, Body: &BindResp{SystemID: "smsc", TLVs: []TLV{{TagSCInterfaceVersion, []byte{0x34}}}}},
		"0000001a 80000009 00000000 00000001"+"736d736300"+"0210 0001 34")
	f(&PDU{ID: SubmitSM, Seq: 2, Body: &ShortMessage{
		Source: Address{1, 1, "61400000000"}, Dest: Address{1, 1, "61412345678"}, RegisteredDelivery: 1,
		Message: []byte("Hi"), TLVs: []TLV{{TagUserMessageReference, []byte{0x12, 0x34}}}}},
		"0000003f 00000004 00000000 00000002"+hex.EncodeToString(smFields("Hi"))+"0204 0002 1234")
	f(&PDU{ID: SubmitSMResp, Seq: 2, Body: &SMResp{MessageID: "ab1"}}, "00000014 80000004 00000000 00000002 61623100")
	// a refusal without a body
	f(&PDU{ID: SubmitSMResp, Status: StatusThrottled, Seq: 3}, "00000010 80000004 00000058 00000003")
	// an unknown command's body is kept
	f(&PDU{ID: 0x00000103, Seq: 4, Body: &Raw{Bytes: []byte{1, 2, 3}}}, "00000013 00000103 00000000 00000004 010203")
}

// TestDecodeHostile: every malformed PDU is a located error, never a
// panic.
func TestDecodeHostile(t *testing.T) {
	f := func(name string, b []byte, field string, offset int) {
		t.Helper()
		p, err := Decode(b)
		if err == nil {
			t.Fatalf("%s: decoded %+v", name, p)
		}
		var me *MalformedError
		if !errors.Is(err, ErrMalformed) || !errors.As(err, &me) {
			t.Fatalf("%s: %v is not a MalformedError", name, err)
		}
		if me.Field != field || me.Offset != offset {
			t.Fatalf("%s: %v: field %q at %d, want %q at %d", name, err, me.Field, me.Offset, field, offset)
		}
		// from a stream, a PDU whose length is told right fails the same
		if len(b) >= HeaderLen && binary.BigEndian.Uint32(b) == uint32(len(b)) {
			if _, rerr := ReadPDU(bytes.NewReader(b)); rerr == nil || rerr.Error() != err.Error() {
				t.Fatalf("%s: ReadPDU says %v, Decode %v", name, rerr, err)
			}
		}
	}
	lying := func(b []byte, n uint32) []byte {
		b = bytes.Clone(b)
		binary.BigEndian.PutUint32(b, n)
		return b
	}
	enq := frame(EnquireLink, 0, 1)
	f("empty", nil, "header", 0)
	f("truncated header", enq[:15], "header", 0)
	f("zero length", lying(enq, 0), "command_length", 0)
	f("length under the header", lying(enq, 15), "command_length", 0)
	f("huge length", lying(enq, 0xFFFFFFFF), "command_length", 0)
	f("length over the bound", lying(enq, MaxPDULen+1), "command_length", 0)
	f("length longer than the PDU", lying(enq, 20), "command_length", 0)
	f("length shorter than the PDU", lying(frame(EnquireLink, 0, 1, []byte{0, 0}), 16), "command_length", 0)
	f("enquire_link with a body", frame(EnquireLink, 0, 1, []byte{1, 2, 3, 4}), "body", 16)
	f("generic_nack with a body", frame(GenericNack, 3, 1, []byte{0}), "body", 16)
	f("bind without a body", frame(BindTransceiver, 0, 1), "system_id", 16)
	f("bind: system_id unterminated at its maximum", frame(BindTransceiver, 0, 1, bytes.Repeat([]byte("a"), 40)), "system_id", 16)
	f("bind: system_id unterminated at the end", frame(BindTransceiver, 0, 1, []byte("abc")), "system_id", 16)
	f("bind: password too long", frame(BindTransceiver, 0, 1, []byte("id\x00passwordXX\x00")), "password", 19)
	f("bind: ends before interface_version", frame(BindTransceiver, 0, 1, []byte("id\x00pw\x00\x00")), "interface_version", 23)
	f("bind: ends before address_range", frame(BindTransceiver, 0, 1, []byte("id\x00pw\x00\x00\x34\x00\x00")), "address_range", 26)
	f("bind: octets after address_range", frame(BindTransceiver, 0, 1, []byte("id\x00pw\x00\x00\x34\x00\x00\x00\x01")), "body", 27)
	f("bind_resp: system_id unterminated", frame(BindTransceiverResp, 0, 1, []byte("smsc")), "system_id", 16)
	f("submit_sm_resp: message_id unterminated", frame(SubmitSMResp, 0, 1, bytes.Repeat([]byte("9"), 70)), "message_id", 16)
	f("submit_sm_resp: octets after message_id", frame(SubmitSMResp, 0, 1, []byte("id\x00x")), "body", 19)
	f("submit_sm without a body", frame(SubmitSM, 0, 1), "service_type", 16)
	f("submit_sm: service_type too long", frame(SubmitSM, 0, 1, []byte("CMTXXX\x00")), "service_type", 16)
	f("submit_sm: source_addr too long", frame(SubmitSM, 0, 1, []byte{0, 1, 1}, bytes.Repeat([]byte("1"), 22), []byte{0}), "source_addr", 19)
	sm := smFields("hello")
	smLen := 16 + len(sm) - 6 // offset of sm_length
	f("submit_sm: sm_length past the end", frame(SubmitSM, 0, 1, sm[:len(sm)-2]), "short_message", smLen+1)
	over := bytes.Clone(sm)
	over[len(sm)-6] = 255
	f("submit_sm: sm_length 255", frame(SubmitSM, 0, 1, over), "sm_length", smLen)
	f("submit_sm: ends before sm_length", frame(SubmitSM, 0, 1, sm[:len(sm)-6]), "sm_length", smLen)
	badTime := append([]byte{0, 1, 1}, "1\x00"...)
	badTime = append(badTime, 1, 1)
	badTime = append(badTime, "2\x00"...)
	badTime = append(badTime, 0, 0, 0)
	badTime = append(badTime, "2501\x00"...)
	f("submit_sm: schedule_delivery_time of 4 characters", frame(SubmitSM, 0, 1, badTime), "schedule_delivery_time", 28)
	end := 16 + len(sm)
	f("submit_sm: a TLV header cut short", frame(SubmitSM, 0, 1, sm, []byte{0x02, 0x04, 0x00}), "tlv", end)
	f("submit_sm: a TLV past the end", frame(SubmitSM, 0, 1, sm, unhex("0424 0100 616263")), "tlv 0x0424", end)
	f("submit_sm: a TLV of length 65535 in a short PDU", frame(SubmitSM, 0, 1, sm, unhex("1401 ffff")), "tlv 0x1401", end)
	f("submit_sm: user_message_reference of 3 octets", frame(SubmitSM, 0, 1, sm, unhex("0204 0003 010203")), "tlv 0x0204", end)
	f("submit_sm: sar_total_segments of 0 octets", frame(SubmitSM, 0, 1, sm, unhex("020e 0000")), "tlv 0x020E", end)
	f("deliver_sm: receipted_message_id without NUL", frame(DeliverSM, 0, 1, sm, unhex("001e 0003 616263")), "tlv 0x001E", end)
	f("deliver_sm: receipted_message_id with an inner NUL", frame(DeliverSM, 0, 1, sm, unhex("001e 0004 61006200")), "tlv 0x001E", end)
	f("deliver_sm: message_state of 2 octets", frame(DeliverSM, 0, 1, sm, unhex("0427 0002 0002")), "tlv 0x0427", end)
	f("deliver_sm: a good TLV then a bad one", frame(DeliverSM, 0, 1, sm, unhex("0427 0001 02 0423 0002 0000")), "tlv 0x0423", end+5)
}

// TestDecodeKept: unknown commands decode raw (the client nacks the
// requests), unknown TLVs are kept, responses may omit their body.
func TestDecodeKept(t *testing.T) {
	f := func(b []byte, want *PDU) {
		t.Helper()
		p, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p, want) {
			t.Fatalf("decoded %+v, want %+v", p, want)
		}
	}
	f(frame(0x00000099, 0, 5, []byte("xyz")), &PDU{ID: 0x99, Seq: 5, Body: &Raw{Bytes: []byte("xyz")}})
	f(frame(0x80000099, 0, 5), &PDU{ID: 0x80000099, Seq: 5, Body: &Raw{Bytes: []byte{}}})
	f(frame(BindTransceiverResp, StatusInvPassword, 1), &PDU{ID: BindTransceiverResp, Status: StatusInvPassword, Seq: 1})
	f(frame(DeliverSMResp, 0, 1, []byte{0}), &PDU{ID: DeliverSMResp, Seq: 1, Body: &SMResp{}})
	sm := smFields("")
	p, err := Decode(frame(DeliverSM, 0, 1, sm, unhex("1401 0002 abcd 0424 0000 001e 0004 61626300")))
	if err != nil {
		t.Fatal(err)
	}
	m := p.Body.(*ShortMessage)
	want := []TLV{{0x1401, []byte{0xab, 0xcd}}, {TagMessagePayload, []byte{}}, {TagReceiptedMessageID, []byte("abc\x00")}}
	if !reflect.DeepEqual(m.TLVs, want) {
		t.Fatalf("TLVs %v, want %v", m.TLVs, want)
	}
	if v, ok := m.TLV(0x1401); !ok || !bytes.Equal(v, []byte{0xab, 0xcd}) {
		t.Fatalf("TLV(0x1401) = %x, %v", v, ok)
	}
}

// TestReadPDUBounds: a lying command_length is refused before anything
// is allocated or read past the header; a stream that ends mid-PDU is
// io.ErrUnexpectedEOF.
func TestReadPDUBounds(t *testing.T) {
	huge := []byte{0x7F, 0xFF, 0xFF, 0xFF}
	r := &countingReader{r: io.MultiReader(bytes.NewReader(huge), neverEnds{})}
	if _, err := ReadPDU(r); !errors.Is(err, ErrMalformed) || r.n != 4 {
		t.Fatalf("huge length: %v after %d octets", err, r.n)
	}
	if _, err := ReadPDU(bytes.NewReader(frame(EnquireLink, 0, 1)[:10])); err != io.ErrUnexpectedEOF {
		t.Fatalf("cut PDU: %v", err)
	}
	if _, err := ReadPDU(bytes.NewReader(nil)); err != io.EOF {
		t.Fatalf("nothing: %v", err)
	}
	var two []byte
	two = append(two, frame(EnquireLink, 0, 1)...)
	two = append(two, frame(UnbindResp, 0, 2)...)
	br := bytes.NewReader(two)
	for _, want := range []CommandID{EnquireLink, UnbindResp} {
		if p, err := ReadPDU(br); err != nil || p.ID != want {
			t.Fatalf("stream: %v %v, want %s", p, err, want)
		}
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

type neverEnds struct{}

func (neverEnds) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0xAA
	}
	return len(p), nil
}

// TestEncodeRefuses: Append checks what Decode checks.
func TestEncodeRefuses(t *testing.T) {
	f := func(p *PDU, field string) {
		t.Helper()
		b, err := p.Append([]byte("keep"))
		var me *MalformedError
		if !errors.As(err, &me) || me.Field != field {
			t.Fatalf("%s: %v, want an error of %s", p.ID, err, field)
		}
		if string(b) != "keep" {
			t.Fatalf("%s: the buffer became %q", p.ID, b)
		}
	}
	f(&PDU{ID: BindTransceiver, Body: &Bind{SystemID: strings.Repeat("a", 16)}}, "system_id")
	f(&PDU{ID: BindTransceiver, Body: &Bind{SystemID: "a\x00b"}}, "system_id")
	f(&PDU{ID: BindTransceiver}, "body")
	f(&PDU{ID: SubmitSM, Body: &Bind{}}, "body")
	f(&PDU{ID: SubmitSM, Body: &ShortMessage{Message: make([]byte, 255)}}, "short_message")
	f(&PDU{ID: SubmitSM, Body: &ShortMessage{ValidityPeriod: "1d"}}, "validity_period")
	f(&PDU{ID: SubmitSM, Body: &ShortMessage{Dest: Address{Addr: strings.Repeat("1", 21)}}}, "destination_addr")
	f(&PDU{ID: SubmitSM, Body: &ShortMessage{TLVs: []TLV{{TagMessageState, nil}}}}, "tlv 0x0427")
	f(&PDU{ID: SubmitSM, Body: &ShortMessage{TLVs: []TLV{{TagMessagePayload, make([]byte, 70000)}}}}, "tlv 0x0424")
	f(&PDU{ID: SubmitSM, Body: &ShortMessage{TLVs: []TLV{{TagMessagePayload, make([]byte, 65535)}}}}, "command_length")
	f(&PDU{ID: EnquireLink, Body: &Raw{}}, "body")
}

func FuzzDecode(f *testing.F) {
	testenv.LimitMinimization(f, "10s")
	sm := smFields("hello")
	for _, b := range [][]byte{
		frame(EnquireLink, 0, 1),
		frame(GenericNack, StatusInvCmdID, 2),
		frame(BindTransceiver, 0, 1, []byte("lodge\x00secret\x00\x00\x34\x00\x00\x00")),
		frame(BindTransceiverResp, 0, 1, []byte("smsc\x00"), unhex("0210 0001 34")),
		frame(SubmitSM, 0, 3, sm, unhex("0204 0002 1234 020c 0002 0001 020e 0001 02 020f 0001 01")),
		frame(DeliverSM, 0, 4, smFields("id:1 stat:DELIVRD"), unhex("001e 0002 3100 0427 0001 02 0423 0003 010002 0424 0003 616263 1401 0000")),
		frame(SubmitSMResp, 0, 3, []byte("abc\x00")),
		frame(SubmitSMResp, StatusThrottled, 3),
		frame(0x0103, 0, 9, []byte("data")),
	} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			var me *MalformedError
			if !errors.As(err, &me) || me.Offset < 0 || me.Offset > len(b) || me.Field == "" {
				t.Fatalf("error %v is not located inside the %d octets", err, len(b))
			}
			return
		}
		enc, err := p.Append(nil)
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", p, err)
		}
		p2, err := Decode(enc)
		if err != nil {
			t.Fatalf("encoded %x does not decode: %v", enc, err)
		}
		if !reflect.DeepEqual(p, p2) {
			t.Fatalf("decode, encode, decode changed\n%+v\nto\n%+v", p, p2)
		}
		enc2, err := p2.Append(nil)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encodings differ: %x, %x (%v)", enc, enc2, err)
		}
	})
}
