// Package jsonstr decodes JSON string tokens without allocating: the one
// decoder of escapes for the JSON-RPC server and the metadata reader.
package jsonstr

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// Surrogates says what becomes of a lone UTF-16 surrogate escape
// ("\ud800" with no partner), which is no character.
type Surrogates uint8

const (
	// Replace writes U+FFFD, as encoding/json does.
	Replace Surrogates = iota
	// KeepInvalid writes the three bytes a UTF-8 encoder would give the
	// surrogate: not valid UTF-8, so that text checks refuse it just as
	// they refuse those bytes sent raw.
	KeepInvalid
)

// Append appends the contents of the JSON string token v (quotes
// included; a tokenizer has validated it) to dst, decoding escapes. A
// token cut short decodes as far as it goes, never beyond v.
func Append(dst, v []byte, lone Surrogates) []byte {
	if len(v) < 2 {
		return dst
	}
	v = v[1 : len(v)-1]
	if bytes.IndexByte(v, '\\') < 0 {
		return append(dst, v...)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 >= len(v) {
			dst = append(dst, c)
			continue
		}
		i++
		switch v[i] {
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			if i+4 >= len(v) {
				dst = utf8.AppendRune(dst, utf8.RuneError)
				i = len(v)
				continue
			}
			r := Hex4(v[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(v) && v[i+1] == '\\' && v[i+2] == 'u' {
				if r2 := Hex4(v[i+3 : i+7]); utf16.DecodeRune(r, r2) != utf8.RuneError {
					r = utf16.DecodeRune(r, r2)
					i += 6
				}
			}
			if utf16.IsSurrogate(r) {
				if lone == KeepInvalid {
					dst = append(dst, 0xe0|byte(r>>12), 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f)
					continue
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, v[i])
		}
	}
	return dst
}

// Hex4 reads four hex digits (a tokenizer has checked them).
func Hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// Kind names the type of a JSON value by its first byte ("nothing" for
// none), for messages like "want a string, got an array".
func Kind(v []byte) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
