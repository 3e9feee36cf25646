package smpp

import (
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testenv"
)

func receiptSM(text string, tlvs ...TLV) *ShortMessage {
	return &ShortMessage{Source: Address{1, 1, "61412345678"}, ESMClass: ESMClassReceipt, Message: []byte(text), TLVs: tlvs}
}

func TestParseReceipt(t *testing.T) {
	f := func(m *ShortMessage, want Receipt) {
		t.Helper()
		got, err := ParseReceipt(m)
		if err != nil {
			t.Fatalf("%q: %v", m.Message, err)
		}
		if got != want {
			t.Fatalf("%q:\n got %+v\nwant %+v", m.Message, got, want)
		}
	}
	done := time.Date(2025, 3, 14, 15, 9, 0, 0, time.UTC)
	std := "id:a1b2c3 sub:001 dlvrd:001 submit date:2503141508 done date:2503141509 stat:DELIVRD err:000 text:Hello there"
	f(receiptSM(std), Receipt{MessageID: "a1b2c3", State: StateDelivered, Err: "000", Done: done, To: "61412345678"})
	// the TLVs win over the text
	f(receiptSM(std, TLV{TagReceiptedMessageID, []byte("A1B2C3\x00")}, TLV{TagMessageState, []byte{5}}),
		Receipt{MessageID: "A1B2C3", State: StateUndeliv, Err: "000", Done: done, To: "61412345678"})
	// seconds in the dates, keys in other cases
	f(receiptSM("Id:77 Sub:001 Dlvrd:000 Submit Date:250314150800 Done Date:250314150930 Stat:expired Err:012 Text:"),
		Receipt{MessageID: "77", State: StateExpired, Err: "012", Done: done.Add(30 * time.Second), To: "61412345678"})
	// the free text cannot pose as a field
	f(receiptSM("id:9 stat:UNDELIV err:001 text: stat:DELIVRD id:10 err:000"),
		Receipt{MessageID: "9", State: StateUndeliv, Err: "001", To: "61412345678"})
	// TLVs only, the error from network_error_code, an unreadable date
	f(receiptSM("done date:yesterday", TLV{TagReceiptedMessageID, []byte("x\x00")}, TLV{TagMessageState, []byte{8}},
		TLV{TagNetworkErrorCode, []byte{3, 0x01, 0x02}}),
		Receipt{MessageID: "x", State: StateRejected, Err: "3:258", To: "61412345678"})
	// the text in message_payload
	f(receiptSM("", TLV{TagMessagePayload, []byte("id:p1 stat:ACCEPTD")}), Receipt{MessageID: "p1", State: StateAccepted, To: "61412345678"})
	// an unknown message_state falls back to the text
	f(receiptSM("id:q stat:DELETED", TLV{TagMessageState, []byte{0x7F}}), Receipt{MessageID: "q", State: StateDeleted, To: "61412345678"})
	// "id:" inside another key does not count
	f(receiptSM("msgid:zz id:yy stat:DELIVRD"), Receipt{MessageID: "yy", State: StateDelivered, To: "61412345678"})
}

func TestParseReceiptRefuses(t *testing.T) {
	f := func(m *ShortMessage, want string) {
		t.Helper()
		r, err := ParseReceipt(m)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%q: %+v, %v; want an error saying %q", m.Message, r, err, want)
		}
	}
	f(receiptSM(""), "no message id")
	f(receiptSM("sub:001 stat:DELIVRD"), "no message id")
	f(receiptSM("id: stat:DELIVRD"), "no message id")
	f(receiptSM("id:"+strings.Repeat("9", 65)+" stat:DELIVRD"), "no message id")
	f(receiptSM("text: id:1 stat:DELIVRD"), "no message id")
	f(receiptSM("id:1 sub:001"), "no state")
	f(receiptSM("id:1 stat:"), "no state")
	f(receiptSM("id:1 stat:"+strings.Repeat("X", 17)), "no state")
	f(receiptSM("id:1 stat:0000\xff\xff000\xff0"), "no state") // upper-casing would grow it past the bound
	f(receiptSM("\xff\x00\x01"), "no message id")
}

func TestIsReceipt(t *testing.T) {
	f := func(esm byte, want bool) {
		t.Helper()
		if got := IsReceipt(&ShortMessage{ESMClass: esm}); got != want {
			t.Fatalf("esm_class 0x%02X: %v", esm, got)
		}
	}
	f(0x04, true)
	f(0x44, true) // with a UDH
	f(0x00, false)
	f(0x08, false) // SME delivery acknowledgement
	f(0x20, false) // intermediate notification
	f(0x40, false)
}

func FuzzParseReceipt(f *testing.F) {
	testenv.LimitMinimization(f, "10s")
	f.Add([]byte("id:a1 sub:001 dlvrd:001 submit date:2503141508 done date:2503141509 stat:DELIVRD err:000 text:x"), []byte("a1\x00"), byte(2))
	f.Add([]byte("Id:77 Stat:expired text: stat:x"), []byte{}, byte(0))
	f.Fuzz(func(t *testing.T, text, id []byte, state byte) {
		m := receiptSM(string(text))
		if len(id) > 0 {
			m.TLVs = append(m.TLVs, TLV{TagReceiptedMessageID, id})
		}
		if state != 0 {
			m.TLVs = append(m.TLVs, TLV{TagMessageState, []byte{state}})
		}
		r, err := ParseReceipt(m)
		if err != nil {
			return
		}
		if r.MessageID == "" || len(r.MessageID) >= maxMessageID || r.State == "" || len(r.State) > maxStateLen {
			t.Fatalf("accepted %+v", r)
		}
	})
}

func TestAddresses(t *testing.T) {
	f := func(source bool, in string, want Address, wantErr string) {
		t.Helper()
		parse := NumberAddress
		if source {
			parse = SourceAddress
		}
		got, err := parse(in)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) || !IsPermanent(err) {
				t.Fatalf("%q: %+v, %v; want a permanent error saying %q", in, got, err, wantErr)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	f(false, "+61412345678", Address{1, 1, "61412345678"}, "")
	f(false, "0412345678", Address{2, 1, "0412345678"}, "")
	f(false, "61412345678", Address{0, 1, "61412345678"}, "")
	f(false, "1234", Address{0, 1, "1234"}, "")
	f(false, "+"+strings.Repeat("1", 20), Address{1, 1, strings.Repeat("1", 20)}, "")
	f(false, "", Address{}, "not a phone number")
	f(false, "+", Address{}, "not a phone number")
	f(false, "+"+strings.Repeat("1", 21), Address{}, "not a phone number")
	f(false, "0412 345 678", Address{}, "not a phone number")
	f(false, "Lodge", Address{}, "not a phone number")
	f(false, "++614", Address{}, "not a phone number")
	f(true, "", Address{}, "")
	f(true, "+61400000000", Address{1, 1, "61400000000"}, "")
	f(true, "0400000000", Address{2, 1, "0400000000"}, "")
	f(true, "Lodge Mail", Address{5, 0, "Lodge Mail"}, "")
	f(true, "ACME-Co.", Address{5, 0, "ACME-Co."}, "")
	f(true, "2Day", Address{5, 0, "2Day"}, "")
	f(true, "Lodge Mail!!", Address{}, "12 characters, at most 11")
	f(true, "Lodgé", Address{}, "'é' at octet 4")
	f(true, "Lo\x00dge", Address{}, "at octet 2")
	f(true, " Lodge", Address{}, "starts or ends with a space")
	f(true, "+6140000000a", Address{}, "not a phone number")
	f(true, strings.Repeat("9", 21), Address{}, "not a phone number")
}

func TestParseURL(t *testing.T) {
	f := func(in string, want Config, wantErr string) {
		t.Helper()
		got, err := ParseURL(in)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("%q: %+v, %v; want an error saying %q", in, got, err, wantErr)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("%q: the error shows the password: %v", in, err)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	f("smpp://lodge:s3cret@smsc.example:2776", Config{Addr: "smsc.example:2776", SystemID: "lodge", Password: "s3cret"}, "")
	f("smpp://lodge:s3cret@smsc.example", Config{Addr: "smsc.example:2775", SystemID: "lodge", Password: "s3cret"}, "")
	f("smpp://lo%40dge:p%3Aw@[::1]:99/?system_type=VMA", Config{Addr: "[::1]:99", SystemID: "lo@dge", Password: "p:w", SystemType: "VMA"}, "")
	f("smpp://lodge@127.0.0.1:1", Config{Addr: "127.0.0.1:1", SystemID: "lodge"}, "")
	f("ssmpp://lodge:s3cret@h:1", Config{}, `scheme "ssmpp"`)
	f("smpp://h:1", Config{}, "no system_id")
	f("smpp://lodge:s3cret@:1", Config{}, "no host")
	f("smpp://lodge:s3cret@h:1/path", Config{}, "no path")
	f("smpp://lodge:s3cret@h:1?window=5", Config{}, `parameter "window"`)
	f("smpp://lodge:s3cret@h:1?system_type=a&system_type=b", Config{}, `parameter "system_type"`)
	f("smpp://sixteen-chars-id:s3cret@h:1", Config{}, "system_id is 16 octets, at most 15")
	f("smpp://lodge:s3cret-too-long@h:1", Config{}, "password is 15 octets, at most 8")
	f("smpp://lodge:s3cret@h:1?%zz", Config{}, "parameters")
	f("%", Config{}, "URL")
}

func FuzzParseURL(f *testing.F) {
	f.Add("smpp://lodge:s3cret@smsc.example:2776?system_type=x")
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := ParseURL(s)
		if err != nil {
			return
		}
		if _, err := cfg.withDefaults(); err != nil || cfg.SystemID == "" || cfg.Addr == "" {
			t.Fatalf("%q gave %+v (%v)", s, cfg, err)
		}
	})
}
