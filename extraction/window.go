package extraction

import (
	"fmt"
	"net/mail"
	"strings"

	"github.com/lodge-mail/lodge/internal/pagetext"
)

// Window is what the window zone of a page says.
type Window struct {
	Reference string   `json:"ref,omitempty"`
	Email     string   `json:"email,omitempty"`
	Fax       string   `json:"fax,omitempty"`
	SMS       string   `json:"sms,omitempty"`
	Postal    []string `json:"postal,omitempty"`
	// Masks are the boxes of the channel lines (ref:, email:, fax:,
	// sms:): production paints them white.
	Masks []pagetext.Rect `json:"masks,omitempty"`
	// Problem says why the lines cannot be a letter's address ("" when
	// they can).
	Problem string `json:"problem,omitempty"`
}

// MaxPostalLines is the most postal lines a window holds: more is body
// text, not an address (an Australian address has at most six lines with
// the recipient's; a foreign one, seven).
const MaxPostalLines = 8

// channel lines, in the order the service in the field writes them.
var channelKeys = []string{"ref", "email", "fax", "sms"}

// HasAddress reports whether the window holds something that starts a
// letter: a channel line, or at least two postal lines (one line alone,
// such as "Page 2 of 3", is a running head, not an address).
func (w *Window) HasAddress() bool {
	return w.Reference != "" || w.Email != "" || w.Fax != "" || w.SMS != "" || len(w.Postal) >= 2 || w.Problem != ""
}

// Same reports whether w (a later page's window) names the recipient of
// o (the current letter's): the same postal lines, compared as
// production compares them (case, punctuation and spacing aside), and
// either no channel lines (continuation pages repeat the address, not
// the reference) or the same ones. The same address with another
// reference is another letter to the same person.
func (w *Window) Same(o *Window) bool {
	if len(w.Postal) != len(o.Postal) {
		return false
	}
	for i := range w.Postal {
		if foldLine(w.Postal[i]) != foldLine(o.Postal[i]) {
			return false
		}
	}
	if w.Reference == "" && w.Email == "" && w.Fax == "" && w.SMS == "" && len(w.Postal) > 0 {
		return true
	}
	return w.Reference == o.Reference && w.Email == o.Email && w.Fax == o.Fax && w.SMS == o.SMS
}

// foldLine is a line in capitals with every run of characters other than
// letters and digits as one space.
func foldLine(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToUpper(s), func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 0x7f)
	}), " ")
}

// readWindow reads the lines of a window zone, top to bottom: channel
// lines first (each at most once; ref:, email:, fax:, sms:, in any
// order), then the postal lines.
func readWindow(lines []Line) Window {
	var w Window
	postal := false
	for _, l := range lines {
		if l.Cut {
			w.problem(fmt.Sprintf("the line %q runs past the edge of the envelope window zone: the window would show part of it", l.Text))
		}
		key, value, ok := channelLine(l.Text)
		if !ok {
			postal = true
			w.Postal = append(w.Postal, l.Text)
			continue
		}
		if postal {
			w.problem(fmt.Sprintf("the %s: line comes after address lines: channel lines go above the address", key))
			continue
		}
		w.Masks = append(w.Masks, l.Box)
		var dst *string
		switch key {
		case "ref":
			dst = &w.Reference
		case "email":
			dst = &w.Email
		case "fax":
			dst = &w.Fax
		case "sms":
			dst = &w.SMS
		}
		if *dst != "" {
			w.problem(fmt.Sprintf("the window has two %s: lines", key))
			continue
		}
		if msg := checkChannel(key, value); msg != "" {
			w.problem(msg)
		}
		*dst = value
	}
	if len(w.Postal) > MaxPostalLines {
		w.problem(fmt.Sprintf("the window holds %d lines below the channel lines: more than an address (%d at most)", len(w.Postal), MaxPostalLines))
	}
	for _, l := range w.Postal {
		if strings.ContainsRune(l, '\uFFFD') {
			w.problem(fmt.Sprintf("the address cannot be read: its font does not say which letters it draws (%q)", l))
			break
		}
	}
	return w
}

func (w *Window) problem(msg string) {
	if w.Problem == "" {
		w.Problem = msg
	}
}

// channelLine splits "key:value" for the channel keys (the key in any
// case, spaces around the colon allowed).
func channelLine(s string) (key, value string, ok bool) {
	k, v, found := strings.Cut(s, ":")
	if !found {
		return "", "", false
	}
	k = strings.ToLower(strings.TrimSpace(k))
	for _, c := range channelKeys {
		if k == c {
			return c, strings.TrimSpace(v), true
		}
	}
	return "", "", false
}

// checkChannel says what is wrong with a channel line's value.
func checkChannel(key, v string) string {
	switch {
	case v == "":
		return fmt.Sprintf("the %s: line is empty", key)
	case key == "ref" && len(v) > 100:
		return "the ref: line is longer than 100 characters"
	case key == "email" || key == "sms" && strings.Contains(v, "@"):
		if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
			return fmt.Sprintf("the %s: line %q is not an email address", key, v)
		}
	case key == "fax" || key == "sms":
		digits := 0
		for i, r := range v {
			switch {
			case r >= '0' && r <= '9':
				digits++
			case r == '+' && i == 0, r == ' ', r == '-', r == '(', r == ')':
			default:
				return fmt.Sprintf("the %s: line %q is not a phone number", key, v)
			}
		}
		if digits < 6 || digits > 15 {
			return fmt.Sprintf("the %s: line %q is not a phone number (%d digits)", key, v, digits)
		}
	}
	return ""
}
