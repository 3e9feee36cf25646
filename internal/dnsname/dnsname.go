// Package dnsname tells whether a string is a DNS host name: what the
// email, fax-gateway and bounce domains lodge is configured with must be.
package dnsname

import "strings"

// Valid reports whether s (lower case) is a DNS name of letters, digits
// and hyphens in dot-separated labels of 1 to 63 characters, no label
// starting or ending with a hyphen, 253 characters at most.
func Valid(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
