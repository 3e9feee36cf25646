package smpp

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/internal/testenv"
)

// TestSplitKnown: encodings written out from 3GPP TS 23.038's tables.
func TestSplitKnown(t *testing.T) {
	f := func(text string, wantCoding byte, wantParts ...string) {
		t.Helper()
		coding, parts, err := Split(text, 0x2A)
		if err != nil {
			t.Fatalf("%.30q: %v", text, err)
		}
		if coding != wantCoding || len(parts) != len(wantParts) {
			t.Fatalf("%.30q: coding %d, %d parts; want %d, %d", text, coding, len(parts), wantCoding, len(wantParts))
		}
		for i, w := range wantParts {
			if got := hex.EncodeToString(parts[i]); got != strings.ReplaceAll(w, " ", "") {
				t.Fatalf("%.30q part %d:\n got %s\nwant %s", text, i+1, got, w)
			}
		}
	}
	f("", CodingGSM, "")
	f("Hello", CodingGSM, "48656c6c6f")
	f("@£$¥èéùìòÇ\nØø\rÅå", CodingGSM, "000102030405060708090a0b0c0d0e0f")
	f("Δ_ΦΓΛΩΠΨΣΘΞÆæßÉ", CodingGSM, "101112131415161718191a1c1d1e1f")
	f(" !\"#¤%&'()*+,-./", CodingGSM, "202122232425262728292a2b2c2d2e2f")
	f("¡ÄÖÑÜ§¿äöñüà", CodingGSM, "405b5c5d5e5f607b7c7d7e7f")
	f("€^{}\\[~]|\f", CodingGSM, "1b65 1b14 1b28 1b29 1b2f 1b3c 1b3d 1b3e 1b40 1b0a")
	f("ç", CodingUCS2, "00e7") // 0x09 is Ç: ç is not GSM
	f("Привет", CodingUCS2, "041f 0440 0438 0432 0435 0442")
	f("a😀", CodingUCS2, "0061 d83d de00")
	f("`", CodingUCS2, "0060") // the grave accent is in neither table
	f("Hi €5, ok? 你好", CodingUCS2, "0048 0069 0020 20ac 0035 002c 0020 006f 006b 003f 0020 4f60 597d")

	a := func(n int) string { return strings.Repeat("61", n) }
	f(strings.Repeat("a", 160), CodingGSM, a(160))
	f(strings.Repeat("a", 161), CodingGSM, "050003 2a 02 01"+a(153), "050003 2a 02 02"+a(8))
	// 152 septets then € (escape, 0x65): the escape goes with its septet
	f(strings.Repeat("a", 152)+"€"+strings.Repeat("a", 10), CodingGSM, "050003 2a 02 01"+a(152), "050003 2a 02 02 1b65"+a(10))
	// € as septets 153 and 154 of 306: the same, and a third part
	f(strings.Repeat("a", 152)+"€"+strings.Repeat("a", 152), CodingGSM,
		"050003 2a 03 01"+a(152), "050003 2a 03 02 1b65"+a(151), "050003 2a 03 03"+a(1))
	// € ending a part exactly (septets 152 and 153) stays there
	f(strings.Repeat("a", 151)+"€"+strings.Repeat("a", 10), CodingGSM, "050003 2a 02 01"+a(151)+"1b65", "050003 2a 02 02"+a(10))
	zh := func(n int) string { return strings.Repeat("0436", n) }
	f(strings.Repeat("ж", 70), CodingUCS2, zh(70))
	f(strings.Repeat("ж", 71), CodingUCS2, "050003 2a 02 01"+zh(67), "050003 2a 02 02"+zh(4))
	// a surrogate pair across units 67 and 68: kept whole in part 2
	f(strings.Repeat("ж", 66)+"😀"+strings.Repeat("ж", 5), CodingUCS2, "050003 2a 02 01"+zh(66), "050003 2a 02 02 d83dde00"+zh(5))
	f(strings.Repeat("ж", 65)+"😀"+strings.Repeat("ж", 5), CodingUCS2, "050003 2a 02 01"+zh(65)+"d83dde00", "050003 2a 02 02"+zh(5))
}

func TestSplitRefuses(t *testing.T) {
	f := func(name, text string, want string) {
		t.Helper()
		_, parts, err := Split(text, 1)
		if !errors.Is(err, ErrInvalidMessage) || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %d parts, %v; want ErrInvalidMessage saying %q", name, len(parts), err, want)
		}
		if !IsPermanent(err) {
			t.Fatalf("%s: %v is not permanent", name, err)
		}
	}
	f("not UTF-8", "ab\xffc", "octet 2")
	f("256 GSM parts", strings.Repeat("a", 255*GSMPart+1), "256 parts")
	f("256 UCS-2 parts", strings.Repeat("ж", 255*UCS2Part+1), "256 parts")
	if _, parts, err := Split(strings.Repeat("a", 255*GSMPart), 1); err != nil || len(parts) != 255 {
		t.Fatalf("255 parts: %d, %v", len(parts), err)
	}
}

func TestDecodePartHostile(t *testing.T) {
	f := func(coding, esm byte, sm string, want string) {
		t.Helper()
		text, _, err := DecodePart(coding, esm, []byte(sm))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%x: %q, %v; want an error saying %q", sm, text, err, want)
		}
	}
	f(0, 0x40, "", "no header")
	f(0, 0x40, "\x09\x00\x03", "header length 9")
	f(0, 0x40, "\x03\x00\x05\x01abc", "runs past the header")
	f(0, 0x40, "\x04\x00\x02\x01\x02abc", "concatenation element at octet 1: length 2")
	f(0, 0x40, "\x05\x00\x03\x01\x02\x00abc", "part 0 of 2")
	f(0, 0x40, "\x05\x00\x03\x01\x02\x03abc", "part 3 of 2")
	f(0, 0, "ab\x80", "octet 0x80 at 2")
	f(0, 0, "ab\x1b", "escape at the end (octet 2)")
	f(0, 0, "a\x1b\x41", "escape then 0x41 at octet 1")
	f(8, 0, "\x00a\x00", "3 octets")
	f(3, 0, "abc", "data_coding 0x03")

	text, c, err := DecodePart(0, 0x40, []byte("\x06\x08\x04\x12\x34\x03\x02ok"))
	if err != nil || text != "ok" || c != (Concat{Ref: 0x1234, Total: 3, Seq: 2}) {
		t.Fatalf("16-bit reference: %q %+v %v", text, c, err)
	}
	// other header elements are skipped
	text, c, err = DecodePart(8, 0x40, []byte("\x08\x24\x01\x01\x00\x03\x07\x02\x01\x00a"))
	if err != nil || text != "a" || c != (Concat{Ref: 7, Total: 2, Seq: 1}) {
		t.Fatalf("with a national language element: %q %+v %v", text, c, err)
	}
}

// joinParts reads parts back into the text, checking their headers.
func joinParts(t *testing.T, coding byte, parts [][]byte, ref byte) string {
	t.Helper()
	var sb strings.Builder
	for i, p := range parts {
		var esm byte
		if len(parts) > 1 {
			esm = ESMClassUDHI
		}
		text, c, err := DecodePart(coding, esm, p)
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		if len(parts) > 1 && c != (Concat{Ref: uint16(ref), Total: len(parts), Seq: i + 1}) {
			t.Fatalf("part %d: header %+v", i+1, c)
		}
		sb.WriteString(text)
	}
	return sb.String()
}

func FuzzText(f *testing.F) {
	testenv.LimitMinimization(f, "10s")
	for _, s := range []string{"", "Hello", "€[]", "ç😀", strings.Repeat("a€", 120), strings.Repeat("ж😀", 40), "\x00\n\r"} {
		f.Add(s, byte(7))
	}
	f.Fuzz(func(t *testing.T, text string, ref byte) {
		coding, parts, err := Split(text, ref)
		if err != nil {
			if utf8.ValidString(text) {
				t.Fatalf("%q: %v", text, err)
			}
			return
		}
		for i, p := range parts {
			limit := GSMSingle
			if coding == CodingUCS2 {
				limit = 2 * UCS2Single
			}
			if len(parts) > 1 {
				limit = 6 + GSMPart
				if coding == CodingUCS2 {
					limit = 6 + 2*UCS2Part
				}
			}
			if len(p) > limit {
				t.Fatalf("part %d of %d: %d octets, at most %d", i+1, len(parts), len(p), limit)
			}
		}
		if got := joinParts(t, coding, parts, ref); got != text {
			t.Fatalf("%q came back as %q", text, got)
		}
		if _, ok := toGSM(text); ok != (coding == CodingGSM) {
			t.Fatalf("%q: coding %d though GSM is %v", text, coding, ok)
		}
		for i, p := range parts {
			if len(parts) > 1 && len(p) <= 6 {
				t.Fatalf("part %d of %d carries no text", i+1, len(parts))
			}
		}
	})
}
