package smpp

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// data_coding values this package writes.
const (
	CodingGSM  byte = 0x00 // SMSC default alphabet: GSM 03.38, one septet per octet
	CodingUCS2 byte = 0x08 // UCS-2, written as UTF-16BE (surrogate pairs kept whole)
)

// ESMClassUDHI is esm_class's UDH indicator: short_message starts with a
// user data header (concatenated parts carry one).
const ESMClassUDHI byte = 0x40

// Lengths of a short message (3GPP TS 23.040): a single message holds 160
// GSM septets or 70 UCS-2 units; a part of a concatenated one, after its
// 6-octet header, 153 septets or 67 units. A message has at most MaxParts
// parts (the 8-bit concatenation header counts to 255).
const (
	GSMSingle  = 160
	GSMPart    = 153
	UCS2Single = 70
	UCS2Part   = 67
	MaxParts   = 255
)

const esc = 0x1B

// gsmBasic is the GSM 03.38 default alphabet, septet by septet (3GPP TS
// 23.038 §6.2.1). 0x1B is the escape to the extension table; 0x09 is
// 'Ç' as 23.038 draws it and handsets show it (Android's GsmAlphabet),
// so 'ç' is not in the alphabet.
var gsmBasic = [128]rune{
	'@', '£', '$', '¥', 'è', 'é', 'ù', 'ì', 'ò', 'Ç', '\n', 'Ø', 'ø', '\r', 'Å', 'å',
	'Δ', '_', 'Φ', 'Γ', 'Λ', 'Ω', 'Π', 'Ψ', 'Σ', 'Θ', 'Ξ', -1, 'Æ', 'æ', 'ß', 'É',
	' ', '!', '"', '#', '¤', '%', '&', '\'', '(', ')', '*', '+', ',', '-', '.', '/',
	'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', ':', ';', '<', '=', '>', '?',
	'¡', 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O',
	'P', 'Q', 'R', 'S', 'T', 'U', 'V', 'W', 'X', 'Y', 'Z', 'Ä', 'Ö', 'Ñ', 'Ü', '§',
	'¿', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o',
	'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', 'ä', 'ö', 'ñ', 'ü', 'à',
}

// gsmExt is the extension table: escape, then these septets.
var gsmExt = map[byte]rune{
	0x0A: '\f', 0x14: '^', 0x28: '{', 0x29: '}', 0x2F: '\\',
	0x3C: '[', 0x3D: '~', 0x3E: ']', 0x40: '|', 0x65: '€',
}

// gsmEncode maps a rune to its septet, or to escape and its septet
// (second value 1); ok is false when the rune is not in the alphabet.
var gsmEncode = func() map[rune][2]byte {
	m := map[rune][2]byte{}
	for i, r := range gsmBasic {
		if r >= 0 {
			m[r] = [2]byte{byte(i), 0}
		}
	}
	for c, r := range gsmExt {
		m[r] = [2]byte{esc, c}
	}
	return m
}()

// toGSM returns text's septets, or false when a character is not in the
// GSM alphabet.
func toGSM(text string) ([]byte, bool) {
	out := make([]byte, 0, len(text))
	for _, r := range text {
		s, ok := gsmEncode[r]
		if !ok {
			return nil, false
		}
		if s[0] == esc {
			out = append(out, esc, s[1])
		} else {
			out = append(out, s[0])
		}
	}
	return out, true
}

// Split returns the short messages text is sent as, and their
// data_coding: GSM 03.38 septets (one per octet) when every character is
// in the GSM alphabet, else UCS-2. Text of at most 160 septets (70 UCS-2
// units) is one message without header; longer text is split into parts
// of at most 153 septets (67 units), each starting with a concatenation
// header (IEI 0x00, 8-bit reference ref, total, sequence) and sent with
// esm_class ESMClassUDHI. A part never ends between an escape and its
// septet, nor inside a surrogate pair. Text that is not UTF-8 or needs
// more than MaxParts parts is an error wrapping ErrInvalidMessage.
func Split(text string, ref byte) (dataCoding byte, parts [][]byte, err error) {
	if !utf8.ValidString(text) {
		i := 0
		for i < len(text) {
			r, n := utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return 0, nil, fmt.Errorf("%w: the text is not UTF-8 (octet %d)", ErrInvalidMessage, i)
	}
	if septets, ok := toGSM(text); ok {
		if len(septets) <= GSMSingle {
			return CodingGSM, [][]byte{septets}, nil
		}
		var chunks [][]byte
		for len(septets) > 0 {
			n := min(GSMPart, len(septets))
			if n < len(septets) && septets[n-1] == esc {
				n-- // keep the escape with its septet
			}
			chunks = append(chunks, septets[:n])
			septets = septets[n:]
		}
		parts, err := concat(chunks, ref, "153 septets")
		return CodingGSM, parts, err
	}
	units := utf16.Encode([]rune(text))
	if len(units) <= UCS2Single {
		return CodingUCS2, [][]byte{ucs2Bytes(units)}, nil
	}
	var chunks [][]byte
	for len(units) > 0 {
		n := min(UCS2Part, len(units))
		if n < len(units) && utf16.IsSurrogate(rune(units[n-1])) && units[n-1] < 0xDC00 {
			n-- // keep the pair whole
		}
		chunks = append(chunks, ucs2Bytes(units[:n]))
		units = units[n:]
	}
	parts, err = concat(chunks, ref, "67 UCS-2 units")
	return CodingUCS2, parts, err
}

func ucs2Bytes(units []uint16) []byte {
	b := make([]byte, 0, 2*len(units))
	for _, u := range units {
		b = append(b, byte(u>>8), byte(u))
	}
	return b
}

// concat puts the concatenation header before each chunk.
func concat(chunks [][]byte, ref byte, unit string) ([][]byte, error) {
	if len(chunks) > MaxParts {
		return nil, fmt.Errorf("%w: the text needs %d parts of %s, at most %d", ErrInvalidMessage, len(chunks), unit, MaxParts)
	}
	parts := make([][]byte, len(chunks))
	for i, c := range chunks {
		parts[i] = append([]byte{5, 0x00, 3, ref, byte(len(chunks)), byte(i + 1)}, c...)
	}
	return parts, nil
}

// Concat is a part's place in a concatenated message, from its user data
// header (IEI 0x00, 8-bit reference, or 0x08, 16-bit). Total is 0 for a
// message without one.
type Concat struct {
	Ref        uint16
	Total, Seq int
}

// DecodePart reads a short message back: its text (GSM 03.38 septets one
// per octet for data_coding 0, UTF-16BE for 8) and, when esm_class has
// the UDH indicator, its place in a concatenated message. It is how a
// test reads what an SMSC received; errors are located.
func DecodePart(dataCoding, esmClass byte, sm []byte) (text string, c Concat, err error) {
	body := sm
	if esmClass&ESMClassUDHI != 0 {
		if len(sm) == 0 {
			return "", c, fmt.Errorf("smpp: short message: UDH indicator set, no header")
		}
		n := int(sm[0])
		if 1+n > len(sm) {
			return "", c, fmt.Errorf("smpp: short message: header length %d, %d octets follow", n, len(sm)-1)
		}
		udh := sm[1 : 1+n]
		for i := 0; i < len(udh); {
			if i+2 > len(udh) || i+2+int(udh[i+1]) > len(udh) {
				return "", c, fmt.Errorf("smpp: short message: header element at octet %d runs past the header", 1+i)
			}
			iei, v := udh[i], udh[i+2:i+2+int(udh[i+1])]
			switch {
			case iei == 0x00 && len(v) == 3:
				c = Concat{Ref: uint16(v[0]), Total: int(v[1]), Seq: int(v[2])}
			case iei == 0x08 && len(v) == 4:
				c = Concat{Ref: uint16(v[0])<<8 | uint16(v[1]), Total: int(v[2]), Seq: int(v[3])}
			case iei == 0x00 || iei == 0x08:
				return "", c, fmt.Errorf("smpp: short message: concatenation element at octet %d: length %d", 1+i, len(v))
			}
			i += 2 + len(v)
		}
		if c.Total != 0 && (c.Seq < 1 || c.Seq > c.Total) {
			return "", c, fmt.Errorf("smpp: short message: part %d of %d", c.Seq, c.Total)
		}
		body = sm[1+n:]
	}
	switch dataCoding {
	case CodingGSM:
		var sb strings.Builder
		for i := 0; i < len(body); i++ {
			s := body[i]
			if s > 0x7F {
				return "", c, fmt.Errorf("smpp: short message: octet 0x%02X at %d is not a septet", s, len(sm)-len(body)+i)
			}
			if s != esc {
				sb.WriteRune(gsmBasic[s])
				continue
			}
			if i+1 == len(body) {
				return "", c, fmt.Errorf("smpp: short message: escape at the end (octet %d)", len(sm)-len(body)+i)
			}
			r, ok := gsmExt[body[i+1]]
			if !ok {
				return "", c, fmt.Errorf("smpp: short message: escape then 0x%02X at octet %d, not in the extension table", body[i+1], len(sm)-len(body)+i)
			}
			sb.WriteRune(r)
			i++
		}
		return sb.String(), c, nil
	case CodingUCS2:
		if len(body)%2 != 0 {
			return "", c, fmt.Errorf("smpp: short message: UCS-2 text of %d octets", len(body))
		}
		units := make([]uint16, len(body)/2)
		for i := range units {
			units[i] = uint16(body[2*i])<<8 | uint16(body[2*i+1])
		}
		return string(utf16.Decode(units)), c, nil
	}
	return "", c, fmt.Errorf("smpp: short message: data_coding 0x%02X is not read", dataCoding)
}
