package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// An API key secret is
//
//	lk_<id>_<secret>
//
// id: keyIDLen characters of lower-case base32 (50 random bits), the public
// name the key is looked up and revoked by; secret: 32 random bytes
// (256 bits) in unpadded base64url, 43 characters. The store keeps the
// SHA-256 of the whole string. A secret with 256 bits of entropy needs no
// slow, salted hash: nobody can search its space, so a fast hash is as safe
// as argon2 would be and costs nothing per request.
const (
	keyPrefixText = "lk_"
	keyIDLen      = 10
	keySecretLen  = 43 // base64url of 32 bytes, no padding
	keyTokenLen   = len(keyPrefixText) + keyIDLen + 1 + keySecretLen
)

const base32Lower = "abcdefghijklmnopqrstuvwxyz234567"

// newKeySecret draws a new key id and secret string.
func newKeySecret() (id, secret string) {
	var r [keyIDLen + 32]byte
	rand.Read(r[:]) // never fails (crypto/rand since Go 1.24)
	idb := make([]byte, keyIDLen)
	for i := range idb {
		idb[i] = base32Lower[r[i]&31] // 32 divides 256: unbiased
	}
	id = string(idb)
	return id, keyPrefixText + id + "_" + base64.RawURLEncoding.EncodeToString(r[keyIDLen:])
}

// keyHash is what the store keeps of a secret.
func keyHash[T string | []byte](secret T) [32]byte {
	return sha256.Sum256([]byte(secret))
}

// parseKeyToken returns the id of a token of the right shape.
func parseKeyToken(tok []byte) (id string, ok bool) {
	if len(tok) != keyTokenLen || string(tok[:len(keyPrefixText)]) != keyPrefixText || tok[len(keyPrefixText)+keyIDLen] != '_' {
		return "", false
	}
	idb := tok[len(keyPrefixText) : len(keyPrefixText)+keyIDLen]
	for _, c := range idb {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return "", false
		}
	}
	for _, c := range tok[len(keyPrefixText)+keyIDLen+1:] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "", false
		}
	}
	return string(idb), true
}

// looksLikeKey says whether b holds something shaped like the start of an
// API key secret: lk_, ten base32 characters and an underscore.
func looksLikeKey(b []byte) bool {
	for i := 0; i+len(keyPrefixText)+keyIDLen+1 <= len(b); i++ {
		if b[i] != 'l' && b[i] != 'L' || b[i+1] != 'k' && b[i+1] != 'K' || b[i+2] != '_' {
			continue
		}
		j := i + len(keyPrefixText)
		ok := true
		for _, c := range b[j : j+keyIDLen] {
			if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
				ok = false
				break
			}
		}
		if ok && b[j+keyIDLen] == '_' {
			return true
		}
	}
	return false
}
