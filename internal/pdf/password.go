package pdf

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxPasswordBytes is the longest password that protects a PDF in full:
// AES-256 (PDF 2.0, revision 6) uses the first 127 bytes of the UTF-8
// password, and readers differ on what they do with more.
const MaxPasswordBytes = 127

// CheckPassword returns why a password cannot protect a PDF that people
// open, or "": it is empty, longer than MaxPasswordBytes, not UTF-8, or
// holds a control character (a line break, a tab: nobody can type it
// into a reader's password box).
func CheckPassword(pw string) string {
	switch {
	case pw == "":
		return "empty password"
	case len(pw) > MaxPasswordBytes:
		return fmt.Sprintf("the password has %d bytes; at most %d are used by PDF readers", len(pw), MaxPasswordBytes)
	case !utf8.ValidString(pw):
		return "the password is not UTF-8 text"
	}
	for _, r := range pw {
		if unicode.IsControl(r) {
			return "the password holds a control character (a line break, tab or the like) that cannot be typed"
		}
	}
	return ""
}
