package data

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxMOFile bounds the GNU gettext catalogue ReadMO accepts, in bytes
// (iso-codes' largest iso_3166-1.mo is about 30 KiB).
const MaxMOFile = 4 << 20

// ReadMO reads a GNU gettext binary catalogue (.mo) and calls fn once per
// translated message with its msgid and msgstr, in the file's order: a
// message's context ("ctx\x04id") is dropped and of plural forms the first
// is kept; the header (empty msgid) and untranslated messages are skipped.
//
// The format: a 28-byte header (magic 0x950412de in the file's byte order,
// revision, count N, offset O of the original strings' table, offset T of
// the translations' table, hash table size and offset), then at O and T N
// pairs of 32-bit (length, offset) naming each string. Every length and
// offset is checked against the file before use; a string that is not
// valid UTF-8 is an error, as is a file over MaxMOFile bytes.
func ReadMO(r io.Reader, name string, fn func(msgid, msgstr string)) error {
	b, err := io.ReadAll(io.LimitReader(r, MaxMOFile+1))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > MaxMOFile {
		return fmt.Errorf("%s: larger than %d bytes", name, MaxMOFile)
	}
	if len(b) < 28 {
		return fmt.Errorf("%s: %d bytes, shorter than a .mo header (28)", name, len(b))
	}
	var bo binary.ByteOrder
	switch binary.LittleEndian.Uint32(b) {
	case 0x950412de:
		bo = binary.LittleEndian
	case 0xde120495:
		bo = binary.BigEndian
	default:
		return fmt.Errorf("%s: not a .mo file (magic %#08x)", name, binary.LittleEndian.Uint32(b))
	}
	if rev := bo.Uint32(b[4:]) >> 16; rev > 1 {
		return fmt.Errorf("%s: .mo major revision %d, want 0 or 1", name, rev)
	}
	size := uint64(len(b))
	n, orig, trans := uint64(bo.Uint32(b[8:])), uint64(bo.Uint32(b[12:])), uint64(bo.Uint32(b[16:]))
	// Both tables must lie inside the file: this also bounds n by the
	// file's size before anything is read.
	if orig+8*n > size || trans+8*n > size {
		return fmt.Errorf("%s: %d messages: the string tables at %d and %d run past the end (%d bytes)", name, n, orig, trans, size)
	}
	str := func(table, i uint64, what string) (string, error) {
		at := table + 8*i
		l, off := uint64(bo.Uint32(b[at:])), uint64(bo.Uint32(b[at+4:]))
		if off+l > size {
			return "", fmt.Errorf("%s: message %d: %s of %d bytes at %d runs past the end (%d bytes)", name, i, what, l, off, size)
		}
		s := string(b[off : off+l])
		if !utf8.ValidString(s) {
			return "", fmt.Errorf("%s: message %d: %s is not UTF-8", name, i, what)
		}
		return s, nil
	}
	for i := uint64(0); i < n; i++ {
		id, err := str(orig, i, "msgid")
		if err != nil {
			return err
		}
		s, err := str(trans, i, "msgstr")
		if err != nil {
			return err
		}
		if j := strings.IndexByte(id, 4); j >= 0 {
			id = id[j+1:]
		}
		id, _, _ = strings.Cut(id, "\x00")
		s, _, _ = strings.Cut(s, "\x00")
		if id == "" || s == "" {
			continue
		}
		fn(id, s)
	}
	return nil
}
