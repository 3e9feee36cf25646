package smpp

import (
	"fmt"
	"strings"
)

// Type of number and numbering plan values this package writes.
const (
	TONUnknown       byte = 0
	TONInternational byte = 1
	TONNational      byte = 2
	TONAlphanumeric  byte = 5
	NPIUnknown       byte = 0
	NPIISDN          byte = 1 // E.164
)

// MaxAlphanumeric is the longest alphanumeric sender a handset shows
// (11 GSM characters, 3GPP TS 23.040 §9.1.2.5).
const MaxAlphanumeric = 11

const maxDigits = maxAddr - 1

// NumberAddress reads a phone number: "+" and digits is international
// (TON 1, NPI 1, the "+" dropped); digits starting with 0 are a national
// number (TON 2, NPI 1), as "0412 345 678" would be without its spaces;
// other digits (a short code, or an international number without its
// "+") are of unknown type (TON 0, NPI 1) for the SMSC to read. At most
// 20 digits; nothing but digits.
func NumberAddress(s string) (Address, error) {
	digits, plus := strings.CutPrefix(s, "+")
	if digits == "" || len(digits) > maxDigits || strings.Trim(digits, "0123456789") != "" {
		return Address{}, fmt.Errorf("%w: %q is not a phone number (an optional + and 1 to %d digits)", ErrInvalidMessage, s, maxDigits)
	}
	switch {
	case plus:
		return Address{TON: TONInternational, NPI: NPIISDN, Addr: digits}, nil
	case digits[0] == '0':
		return Address{TON: TONNational, NPI: NPIISDN, Addr: digits}, nil
	}
	return Address{TON: TONUnknown, NPI: NPIISDN, Addr: digits}, nil
}

// SourceAddress reads a sender: empty (the SMSC's default sender: TON 0,
// NPI 0), a phone number (NumberAddress), or an alphanumeric name of 1 to
// 11 letters, digits, spaces and . - _ & ' ! ? (TON 5, NPI 0) with at
// least one character that is not a digit.
func SourceAddress(s string) (Address, error) {
	if s == "" {
		return Address{}, nil
	}
	if a, err := NumberAddress(s); err == nil {
		return a, nil
	}
	if strings.HasPrefix(s, "+") || strings.Trim(s, "0123456789") == "" {
		return Address{}, fmt.Errorf("%w: sender %q is not a phone number (an optional + and 1 to %d digits)", ErrInvalidMessage, s, maxDigits)
	}
	if len(s) > MaxAlphanumeric {
		return Address{}, fmt.Errorf("%w: alphanumeric sender %q has %d characters, at most %d", ErrInvalidMessage, s, len(s), MaxAlphanumeric)
	}
	for i, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune(" .-_&'!?", r)) {
			return Address{}, fmt.Errorf("%w: alphanumeric sender %q: %q at octet %d is not a letter, digit, space or . - _ & ' ! ?", ErrInvalidMessage, s, r, i)
		}
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return Address{}, fmt.Errorf("%w: alphanumeric sender %q starts or ends with a space", ErrInvalidMessage, s)
	}
	return Address{TON: TONAlphanumeric, NPI: NPIUnknown, Addr: s}, nil
}
