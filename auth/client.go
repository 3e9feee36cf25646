package auth

import (
	"bytes"
	"net/netip"
)

// TrustedPeer reports whether ip lies in one of the trusted proxies'
// prefixes. An IPv4-mapped IPv6 address counts as the IPv4 address.
func TrustedPeer(ip netip.Addr, trusted []netip.Prefix) bool {
	ip = ip.Unmap()
	for _, p := range trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// ClientAddr returns the client a request is counted under by the failure
// throttle (the client argument of Authenticate and AuthenticateRequest):
// the peer's address, unless the peer is a trusted proxy. Then it is the
// right-most address in X-Forwarded-For (forwardedFor: its header lines
// in the order received, each a comma-separated list) that is not itself
// a trusted proxy: each proxy appends the address it got the request
// from, so everything to the left of the last untrusted hop may be forged
// by the client. When every listed address is a trusted proxy, the
// left-most is taken; when an entry that must be looked at is not an
// address (such as "unknown"), the nearest trusted hop. Entries may
// carry a port (192.0.2.1:4711, [2001:db8::1]:4711).
func ClientAddr(peer netip.Addr, forwardedFor [][]byte, trusted []netip.Prefix) string {
	peer = peer.Unmap()
	if !TrustedPeer(peer, trusted) {
		return peer.String()
	}
	client := peer
	for i := len(forwardedFor) - 1; i >= 0; i-- {
		line := forwardedFor[i]
		for len(line) > 0 {
			var entry []byte
			if j := bytes.LastIndexByte(line, ','); j >= 0 {
				line, entry = line[:j], line[j+1:]
			} else {
				line, entry = nil, line
			}
			entry = bytes.Trim(entry, " \t")
			if len(entry) == 0 {
				continue // empty list elements are allowed (RFC 9110 section 5.6.1)
			}
			a, ok := parseForwarded(entry)
			if !ok {
				return client.String()
			}
			client = a
			if !TrustedPeer(a, trusted) {
				return a.String()
			}
		}
	}
	return client.String()
}

// parseForwarded reads one X-Forwarded-For entry: an address, optionally
// with a port, IPv6 in brackets when it has one.
func parseForwarded(b []byte) (netip.Addr, bool) {
	if len(b) > 64 {
		return netip.Addr{}, false
	}
	s := string(b)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.WithZone("").Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().WithZone("").Unmap(), true
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil && a.Is6() {
			return a.WithZone("").Unmap(), true
		}
	}
	return netip.Addr{}, false
}
