package upload

import (
	"crypto/rand"
	"math/big"
)

// EPIDAlphabet is the alphabet of session identifiers: upper-case letters
// and digits without look-alikes (no 0, 1, I, L, O, U), as the service in
// the field uses.
const EPIDAlphabet = "23456789ABCDEFGHJKMNPQRSTVWXYZ"

// EPIDLength is the length of a session identifier: 28 characters of a
// 30-letter alphabet, about 137 bits.
const EPIDLength = 28

// NewEPID returns a random session identifier.
func NewEPID() (string, error) {
	b := make([]byte, EPIDLength)
	max := big.NewInt(int64(len(EPIDAlphabet)))
	for i := range b {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", err
		}
		b[i] = EPIDAlphabet[n.Int64()]
	}
	return string(b), nil
}

// ValidEPID reports whether s has the form of a session identifier.
func ValidEPID(s string) bool {
	if len(s) != EPIDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		ok := false
		for j := 0; j < len(EPIDAlphabet); j++ {
			if s[i] == EPIDAlphabet[j] {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
