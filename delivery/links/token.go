// Package links makes and serves the links of electronic letters: the link
// to a letter's PDF that a template's {{link}} becomes, and the tracking
// image of an email. Both carry a token that needs no storage: it names
// the letter (its mailing's EPID and its index), what the link is for and
// until when it works, signed with the server's key (HMAC-SHA-256, cut to
// 128 bits), in base64url:
//
//	GET /l/<token>      the letter's PDF (application/pdf, inline,
//	                    not cached); records an opening of the document
//	GET /o/<token>.gif  a 1x1 transparent GIF; records an opening of the
//	                    email
//
// A token that is forged, altered, expired, of the other kind or
// malformed is answered 404, as a path that does not exist is: nothing to
// learn. Tokens cannot be guessed (128-bit signatures) but are not
// secret about what they name: anyone holding one can read the EPID and
// letter index in it. Openings are recorded at most once a minute per
// letter and kind (a mail client may fetch an image many times), through
// Store; a failure to record is logged and the answer served all the
// same.
//
// The key is 32 random bytes kept in a file of the data directory
// (LoadOrCreateKey), mode 0600, made on first use; replacing it makes
// every link given so far stop working. Nodes sharing a database keep it
// there instead (LoadOrCreateSharedKey, the shared file links.key), made
// once by whichever node starts first, so that a link signed by one node
// works on every other.
package links

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/lodge-mail/lodge/datafiles"
	"github.com/lodge-mail/lodge/internal/durable"
)

// Kinds of link.
const (
	KindDoc  = "doc"  // the letter's PDF
	KindOpen = "open" // the email's tracking image
)

// Token layout: kind (1 byte), expiry (Unix seconds, 4 bytes, big
// endian), letter index (uvarint), EPID (the rest, 1 to maxEPID bytes),
// then macLen bytes of HMAC-SHA-256 over a domain label and all that.
const (
	macLen  = 16
	maxEPID = 64
	// MaxTokenLen bounds the tokens Verify reads (base64url characters).
	MaxTokenLen = 160
	label       = "lodge links v1\x00"
)

var kindByte = map[string]byte{KindDoc: 'd', KindOpen: 'o'}

// Errors of Verify.
var (
	ErrInvalid = errors.New("not a valid link")
	ErrExpired = errors.New("the link has expired")
)

// KeySize is the size of the keys LoadOrCreateKey makes; a key shorter
// than MinKeySize signs nothing Verify accepts.
const (
	KeySize    = 32
	MinKeySize = 16
)

// Sign returns the token of a link of kind (KindDoc or KindOpen) to
// letter idx of mailing epid, working until expires (to the second). It
// panics on an unknown kind, an empty or too long EPID, a negative index
// or an expiry outside 1970 to 2106: a programming error.
func Sign(key []byte, epid string, idx int, kind string, expires time.Time) string {
	k, ok := kindByte[kind]
	exp := expires.Unix()
	if !ok || epid == "" || len(epid) > maxEPID || idx < 0 || exp < 0 || exp > 1<<32-1 {
		panic(fmt.Sprintf("links.Sign(%q, %d, %q, %v): bad arguments", epid, idx, kind, expires))
	}
	b := make([]byte, 0, 1+4+binary.MaxVarintLen64+len(epid)+macLen)
	b = append(b, k)
	b = binary.BigEndian.AppendUint32(b, uint32(exp))
	b = binary.AppendUvarint(b, uint64(idx))
	b = append(b, epid...)
	b = append(b, mac(key, b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func mac(key, payload []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(label))
	h.Write(payload)
	return h.Sum(nil)[:macLen]
}

// Verify checks a token at now and returns what it names. A token that
// was not made by Sign with key (or was altered, or is malformed) is
// ErrInvalid; one past its expiry, ErrExpired. A token is read only as
// Sign writes it (base64url without padding or line breaks: one token per
// letter, kind and expiry). The signature is compared in constant time,
// before anything else of the token is believed.
func Verify(key []byte, token string, now time.Time) (epid string, idx int, kind string, err error) {
	if len(token) > MaxTokenLen || len(key) < MinKeySize {
		return "", 0, "", ErrInvalid
	}
	for i := 0; i < len(token); i++ { // the decoder would skip CR and LF
		if c := token[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "", 0, "", ErrInvalid
		}
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(b) < 1+4+1+1+macLen {
		return "", 0, "", ErrInvalid
	}
	payload, sig := b[:len(b)-macLen], b[len(b)-macLen:]
	if !hmac.Equal(sig, mac(key, payload)) {
		return "", 0, "", ErrInvalid
	}
	switch payload[0] {
	case 'd':
		kind = KindDoc
	case 'o':
		kind = KindOpen
	default:
		return "", 0, "", ErrInvalid
	}
	exp := int64(binary.BigEndian.Uint32(payload[1:5]))
	u, n := binary.Uvarint(payload[5:])
	if n <= 0 || u > 1<<31-1 {
		return "", 0, "", ErrInvalid
	}
	rest := payload[5+n:]
	if len(rest) == 0 || len(rest) > maxEPID {
		return "", 0, "", ErrInvalid
	}
	if now.Unix() >= exp {
		return "", 0, "", ErrExpired
	}
	return string(rest), int(u), kind, nil
}

// LoadOrCreateKey returns the key in the file at path, making it (32
// random bytes, mode 0600, durably) when there is none. Two processes
// making it at once agree on one. A key file of another size, or that
// others than its owner may read, is an error.
func LoadOrCreateKey(path string) ([]byte, error) {
	key, err := readKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	key = make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".links-key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	// a link, unlike a rename, fails when the name exists: the first
	// maker's key stays
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKey(path)
		}
		return nil, err
	}
	if err := durable.SyncDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return key, nil
}

// SharedKeyName is the name of the key among the shared files.
const SharedKeyName = "links.key"

// LoadOrCreateSharedKey is LoadOrCreateKey for nodes sharing a database:
// the key is the file SharedKeyName of files (datafiles.NewPostgres),
// made when there is none. Nodes making it at once agree on one: every
// node signs and verifies with the same key. A key of another size is an
// error. (lodge settings import copies a node's links.key there, so that
// the links it gave keep working.)
func LoadOrCreateSharedKey(files datafiles.Files) ([]byte, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	got, err := files.Create(SharedKeyName, key, 0o600)
	if err != nil {
		return nil, fmt.Errorf("links key: %w", err)
	}
	if len(got) != KeySize {
		return nil, fmt.Errorf("links key %s: %d bytes, want %d (remove it to make a new one: every link given so far stops working)", files.Where(SharedKeyName), len(got), KeySize)
	}
	return got, nil
}

func readKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("links key %s: mode %v lets others read it (chmod 600 %s)", path, fi.Mode().Perm(), path)
	}
	key := make([]byte, KeySize+1)
	n, _ := f.ReadAt(key, 0)
	if n != KeySize {
		return nil, fmt.Errorf("links key %s: %d bytes, want %d (delete it to make a new one: every link given so far stops working)", path, n, KeySize)
	}
	return key[:KeySize], nil
}
