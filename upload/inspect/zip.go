package inspect

import (
	"bufio"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/internal/durable"
)

// Entry is one file in an archive, as OpenZip validated it.
type Entry struct {
	Name string // the file name: no directories, no path
	Size int64  // uncompressed size, as declared and as Extract enforces
	Kind Kind   // the kind its extension and content agree on
}

// Extracted is one file ExtractTo wrote.
type Extracted struct {
	Entry
	Path string // dir/Name
}

// Archive is a ZIP archive whose central directory, local headers and
// entry heads passed OpenZip's checks. Its methods may be called
// concurrently if the io.ReaderAt allows concurrent ReadAt (an *os.File
// does).
type Archive struct {
	ra      io.ReaderAt
	size    int64
	lim     Limits
	pkg     bool
	entries []*zentry // files, in central directory order
	byName  map[string]*zentry
}

type zentry struct {
	Entry
	method  uint16
	flags   uint16
	crc     uint32
	csize   int64
	hdrOff  int64
	dataOff int64
	dir     bool
}

const (
	sigLocal     = 0x04034b50
	sigCentral   = 0x02014b50
	sigEnd       = 0x06054b50
	sigZip64End  = 0x06064b50
	sigZip64Loc  = 0x07064b50
	endLen       = 22
	zip64LocLen  = 20
	zip64EndLen  = 56
	centralLen   = 46
	localLen     = 30
	maxCDBytes   = 64 << 20
	methodStore  = 0
	methodFlate  = 8
	methodAES    = 99
	flagEncrypt  = 1 << 0
	flagStrong   = 1 << 6
	flagMasked   = 1 << 13
	unixTypeMask = 0xF000
	unixRegular  = 0x8000
	unixDir      = 0x4000
	unixSymlink  = 0xA000
)

var le = binary.LittleEndian

// OpenZip validates a ZIP archive's structure before anything is
// extracted, and refuses it (ErrUnsafe, ErrLimit, ErrMalformed, ErrType)
// when:
//
//   - it has more than MaxEntries entries (checked from the end record,
//     before the central directory is read), spans disks, or its central
//     directory is out of bounds or disagrees with its end record;
//   - a name is empty, not UTF-8, has control characters, is absolute
//     ("/x", "\x"), has a drive letter ("C:"), a backslash, a colon, a ".."
//     element, any directory at all ("dir/a.pdf": document names must not
//     contain paths), starts with a dot, ends with a dot or space, is a
//     Windows device name (CON, NUL, COM1, ...) or is longer than 255
//     bytes. Directory entries ("dir/") are skipped;
//   - two names are equal ignoring case;
//   - an entry is a symbolic link or another non-regular file (Unix mode
//     in the external attributes), is encrypted (flag bits 0, 6 or 13, or
//     method 99), or uses a method other than Store and Deflate;
//   - an entry's declared size exceeds MaxEntryBytes, the sum exceeds
//     MaxTotalBytes, or the ratio of declared uncompressed to compressed
//     size exceeds MaxRatio for an entry or for the archive (above 1 MiB);
//   - a local header is missing or disagrees with the central directory
//     (name, method, encryption), or two entries' byte ranges (local header
//     to end of data) overlap, or data runs into the central directory:
//     overlapping entries are how non-recursive zip bombs reuse one
//     compressed stream many times;
//   - an entry is an archive itself: its name ends in .zip, .jar, .7z,
//     .rar, .gz, .tgz, .tar, .bz2, .xz, .zst or .cab, or its content starts
//     like a ZIP, gzip, 7z, RAR, bzip2, xz or zstd file. An entry named .xps
//     whose content is a ZIP is a document, not a nested archive: it is
//     accepted as XPS and opened (with these limits) only to count pages;
//   - an entry's name and content do not agree (CheckType).
//
// Declared sizes are never trusted when extracting: see Extract.
func OpenZip(ra io.ReaderAt, size int64, lim Limits) (*Archive, error) {
	return openZip(ra, size, lim, false)
}

// openZip with pkg set opens an OPC package (XPS): part names may contain
// directories (but no "..", absolute paths or backslashes), content is not
// type-checked, and MaxPages×2 more entries are allowed.
func openZip(ra io.ReaderAt, size int64, lim Limits, pkg bool) (*Archive, error) {
	lim = lim.WithDefaults()
	maxEntries := uint64(lim.MaxEntries)
	if pkg {
		maxEntries += 2 * uint64(lim.MaxPages)
	}
	end, err := findEnd(ra, size, maxEntries)
	if err != nil {
		return nil, err
	}
	a := &Archive{ra: ra, size: size, lim: lim, pkg: pkg, byName: map[string]*zentry{}}
	all, err := a.readCentral(end)
	if err != nil {
		return nil, err
	}
	if err := a.checkLocal(all, end.cdOff); err != nil {
		return nil, err
	}
	if !pkg {
		for _, e := range a.entries {
			if err := a.checkContent(e); err != nil {
				return nil, err
			}
		}
	}
	return a, nil
}

type zipEnd struct {
	records      uint64
	cdOff, cdLen int64
}

func findEnd(ra io.ReaderAt, size int64, maxEntries uint64) (zipEnd, error) {
	var z zipEnd
	if size < endLen {
		return z, malformed("not a ZIP archive: too short")
	}
	n := min(size, endLen+0xFFFF)
	buf := make([]byte, n)
	if err := readAt(ra, buf, size-n); err != nil {
		return z, err
	}
	i := len(buf) - endLen
	for ; i >= 0; i-- {
		if le.Uint32(buf[i:]) == sigEnd && i+endLen+int(le.Uint16(buf[i+20:])) <= len(buf) {
			break
		}
	}
	if i < 0 {
		return z, malformed("not a ZIP archive: no end of central directory record")
	}
	e := buf[i:]
	endOff := size - n + int64(i)
	disk, cdDisk := le.Uint16(e[4:]), le.Uint16(e[6:])
	here, records := uint64(le.Uint16(e[8:])), uint64(le.Uint16(e[10:]))
	cdLen, cdOff := uint64(le.Uint32(e[12:])), uint64(le.Uint32(e[16:]))
	limitOff := endOff // the central directory ends before this
	if endOff >= zip64LocLen {
		var loc [zip64LocLen]byte
		if err := readAt(ra, loc[:], endOff-zip64LocLen); err != nil {
			return z, err
		}
		if le.Uint32(loc[:]) == sigZip64Loc {
			if le.Uint32(loc[4:]) != 0 || le.Uint32(loc[16:]) > 1 {
				return z, unsafeErr("multi-disk ZIP archives are not accepted")
			}
			off := le.Uint64(loc[8:])
			if off > uint64(endOff-zip64LocLen) || uint64(endOff-zip64LocLen)-off < zip64EndLen {
				return z, malformed("ZIP64 end record out of bounds")
			}
			var r [zip64EndLen]byte
			if err := readAt(ra, r[:], int64(off)); err != nil {
				return z, err
			}
			if le.Uint32(r[:]) != sigZip64End {
				return z, malformed("ZIP64 end record missing")
			}
			disk, cdDisk = 0, 0
			if le.Uint32(r[16:]) != 0 || le.Uint32(r[20:]) != 0 {
				disk = 1
			}
			here, records = le.Uint64(r[24:]), le.Uint64(r[32:])
			cdLen, cdOff = le.Uint64(r[40:]), le.Uint64(r[48:])
			limitOff = int64(off)
		}
	}
	if disk != 0 || cdDisk != 0 || here != records {
		return z, unsafeErr("multi-disk ZIP archives are not accepted")
	}
	if records > maxEntries {
		return z, limitErr("the archive has %d entries, more than the limit of %d", records, maxEntries)
	}
	if cdOff > uint64(limitOff) || cdLen > uint64(limitOff)-cdOff {
		return z, malformed("ZIP central directory out of bounds")
	}
	if records > cdLen/centralLen {
		return z, malformed("ZIP end record declares %d entries, more than its central directory of %d bytes can hold", records, cdLen)
	}
	if cdLen > maxCDBytes {
		return z, limitErr("ZIP central directory of %d bytes is larger than %d", cdLen, maxCDBytes)
	}
	z.records, z.cdOff, z.cdLen = records, int64(cdOff), int64(cdLen)
	return z, nil
}

func readAt(ra io.ReaderAt, p []byte, off int64) error {
	n, err := ra.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return malformed("reading at offset %d: %v", off, err)
}

// readCentral parses and checks the central directory. It returns every
// record (directories too, for the overlap check) and fills a.entries.
func (a *Archive) readCentral(end zipEnd) ([]*zentry, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(a.ra, end.cdOff, end.cdLen), 64<<10)
	var (
		all                []*zentry
		total, totalPacked int64
		fixed              [centralLen]byte
		seen               = map[string]string{}
	)
	for i := uint64(0); i < end.records; i++ {
		if _, err := io.ReadFull(br, fixed[:]); err != nil {
			return nil, malformed("ZIP central directory truncated at entry %d", i+1)
		}
		if le.Uint32(fixed[:]) != sigCentral {
			return nil, malformed("ZIP central directory entry %d has a bad signature", i+1)
		}
		e := &zentry{
			flags:  le.Uint16(fixed[8:]),
			method: le.Uint16(fixed[10:]),
			crc:    le.Uint32(fixed[16:]),
		}
		csize, usize := uint64(le.Uint32(fixed[20:])), uint64(le.Uint32(fixed[24:]))
		nameLen, extraLen, commentLen := int(le.Uint16(fixed[28:])), int(le.Uint16(fixed[30:])), int(le.Uint16(fixed[32:]))
		diskStart := le.Uint16(fixed[34:])
		extAttr := le.Uint32(fixed[38:])
		hdrOff := uint64(le.Uint32(fixed[42:]))
		varLen := make([]byte, nameLen+extraLen+commentLen)
		if _, err := io.ReadFull(br, varLen); err != nil {
			return nil, malformed("ZIP central directory truncated at entry %d", i+1)
		}
		name := string(varLen[:nameLen])
		extra := varLen[nameLen : nameLen+extraLen]
		// ZIP64 extended information: the 64-bit values of saturated fields.
		needU, needC, needO := usize == 0xFFFFFFFF, csize == 0xFFFFFFFF, hdrOff == 0xFFFFFFFF
		for len(extra) >= 4 {
			id, n := le.Uint16(extra), int(le.Uint16(extra[2:]))
			if 4+n > len(extra) {
				break
			}
			body := extra[4 : 4+n]
			extra = extra[4+n:]
			if id != 0x0001 {
				continue
			}
			take := func(need *bool, v *uint64) {
				if *need && len(body) >= 8 {
					*v, body, *need = le.Uint64(body), body[8:], false
				}
			}
			take(&needU, &usize)
			take(&needC, &csize)
			take(&needO, &hdrOff)
		}
		if needU || needC || needO {
			return nil, malformed("ZIP entry %q: ZIP64 sizes missing", name)
		}
		if diskStart != 0 && diskStart != 0xFFFF {
			return nil, unsafeErr("multi-disk ZIP archives are not accepted")
		}
		if csize > uint64(a.size) || hdrOff > uint64(a.size) {
			return nil, malformed("ZIP entry %q lies outside the archive", name)
		}
		e.Name, e.csize, e.hdrOff = name, int64(csize), int64(hdrOff)
		e.dir = strings.HasSuffix(name, "/")
		all = append(all, e)

		if err := checkName(name, a.pkg); err != nil {
			return nil, err
		}
		if e.flags&(flagEncrypt|flagStrong|flagMasked) != 0 || e.method == methodAES {
			return nil, newErr([]error{ErrUnsafe, ErrEncrypted}, "ZIP entry %q is encrypted", name)
		}
		mode := extAttr >> 16
		switch t := mode & unixTypeMask; {
		case t == unixSymlink:
			return nil, unsafeErr("ZIP entry %q is a symbolic link", name)
		case t == unixDir && !e.dir:
			return nil, unsafeErr("ZIP entry %q is a directory without a trailing slash", name)
		case t != 0 && t != unixRegular && t != unixDir:
			return nil, unsafeErr("ZIP entry %q is not a regular file (mode %o)", name, mode)
		}
		if e.dir {
			if usize != 0 || csize > 2 { // an empty deflate stream is 2 bytes
				return nil, unsafeErr("ZIP directory entry %q has data", name)
			}
			continue
		}
		if e.method != methodStore && e.method != methodFlate {
			return nil, unsafeErr("ZIP entry %q uses compression method %d; only stored and deflated entries are accepted", name, e.method)
		}
		if usize > uint64(a.lim.MaxEntryBytes) {
			return nil, limitErr("ZIP entry %q is %d bytes uncompressed, more than the limit of %d", name, usize, a.lim.MaxEntryBytes)
		}
		e.Size = int64(usize)
		if e.method == methodStore && csize != usize {
			return nil, malformed("stored ZIP entry %q declares %d bytes stored but %d bytes of data", name, csize, usize)
		}
		if e.Size > ratioFloor && (csize == 0 || e.Size/int64(csize) > a.lim.MaxRatio) {
			return nil, limitErr("ZIP entry %q expands %s (%d bytes from %d): more than the limit of %d:1 (a zip bomb?)",
				name, ratio(e.Size, int64(csize)), e.Size, csize, a.lim.MaxRatio)
		}
		total += e.Size
		totalPacked += int64(csize)
		if total > a.lim.MaxTotalBytes {
			return nil, limitErr("the archive's entries add up to more than the limit of %d bytes uncompressed", a.lim.MaxTotalBytes)
		}
		key := foldName(name, a.pkg)
		if prev, ok := seen[key]; ok {
			return nil, unsafeErr("ZIP entries %q and %q have the same name", prev, name)
		}
		seen[key] = name
		a.entries = append(a.entries, e)
		a.byName[key] = e
	}
	if total > ratioFloor && (totalPacked == 0 || total/totalPacked > a.lim.MaxRatio) {
		return nil, limitErr("the archive expands %s (%d bytes from %d): more than the limit of %d:1 (a zip bomb?)",
			ratio(total, totalPacked), total, totalPacked, a.lim.MaxRatio)
	}
	return all, nil
}

func ratio(u, c int64) string {
	if c == 0 {
		return "from nothing"
	}
	return fmt.Sprintf("%d:1", u/c)
}

// foldName is the key two names collide under: case-insensitively, and for
// package parts after percent-decoding.
func foldName(name string, pkg bool) string {
	if pkg {
		name = partKey(name)
	}
	return strings.ToLower(name)
}

var nestedExt = map[string]bool{
	"zip": true, "jar": true, "7z": true, "rar": true, "gz": true, "tgz": true,
	"tar": true, "bz2": true, "xz": true, "zst": true, "cab": true,
}

var windowsDevices = map[string]bool{
	"con": true, "prn": true, "aux": true, "nul": true, "clock$": true, "conin$": true, "conout$": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true,
}

// checkName refuses names that could escape or confuse a directory. In
// package mode (XPS) names may have directories.
func checkName(name string, pkg bool) error {
	bad := func(why string) error { return unsafeErr("ZIP entry %q: %s", name, why) }
	switch {
	case name == "":
		return unsafeErr("ZIP entry with an empty name")
	case !utf8.ValidString(name):
		return bad("name is not valid UTF-8")
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return bad("name contains control characters")
	case name[0] == '/' || name[0] == '\\':
		return bad("absolute path")
	case len(name) >= 2 && name[1] == ':' && (name[0]|0x20 >= 'a' && name[0]|0x20 <= 'z'):
		return bad("drive letter")
	case strings.Contains(name, `\`):
		return bad("backslash in name")
	}
	elems := strings.Split(strings.TrimSuffix(name, "/"), "/")
	if slices.Contains(elems, "..") {
		return bad("name climbs out of the directory (..)")
	}
	if pkg {
		for _, el := range elems {
			if el == "" || el == "." {
				return bad("empty path element")
			}
		}
		return nil
	}
	if strings.HasSuffix(name, "/") {
		return nil // a directory entry: skipped
	}
	if len(elems) > 1 {
		return bad("name contains a directory (document names must not contain paths)")
	}
	base := strings.ToLower(name)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	switch {
	case strings.Contains(name, ":"):
		return bad("colon in name")
	case name[0] == '.':
		return bad("hidden file (name starts with a dot)")
	case name[0] == ' ' || strings.HasSuffix(name, " ") || strings.HasSuffix(name, "."):
		return bad("name starts with a space or ends with a space or dot")
	case len(name) > 255:
		return bad("name longer than 255 bytes")
	case windowsDevices[base]:
		return bad("reserved device name")
	case nestedExt[extension(name)]:
		return unsafeErr("ZIP entry %q is a nested archive; archives inside archives are not accepted", name)
	}
	return nil
}

// checkLocal reads every local header, checks it against its central
// directory record and refuses overlapping entries.
func (a *Archive) checkLocal(all []*zentry, cdOff int64) error {
	var hdr [localLen]byte
	for _, e := range all {
		if err := readAt(a.ra, hdr[:], e.hdrOff); err != nil {
			return malformed("ZIP entry %q: local header out of bounds", e.Name)
		}
		if le.Uint32(hdr[:]) != sigLocal {
			return malformed("ZIP entry %q: no local header at offset %d", e.Name, e.hdrOff)
		}
		flags, method := le.Uint16(hdr[6:]), le.Uint16(hdr[8:])
		nameLen, extraLen := int64(le.Uint16(hdr[26:])), int64(le.Uint16(hdr[28:]))
		if flags&(flagEncrypt|flagStrong|flagMasked) != 0 || method == methodAES {
			return newErr([]error{ErrUnsafe, ErrEncrypted}, "ZIP entry %q is encrypted", e.Name)
		}
		if method != e.method {
			return unsafeErr("ZIP entry %q: local header and central directory disagree on the method", e.Name)
		}
		name := make([]byte, nameLen)
		if err := readAt(a.ra, name, e.hdrOff+localLen); err != nil {
			return malformed("ZIP entry %q: local header out of bounds", e.Name)
		}
		if string(name) != e.Name {
			return unsafeErr("ZIP entry %q is called %q in its local header", e.Name, name)
		}
		e.dataOff = e.hdrOff + localLen + nameLen + extraLen
		if e.dataOff > cdOff || e.csize > cdOff-e.dataOff {
			return malformed("ZIP entry %q: data runs into the central directory", e.Name)
		}
	}
	byOff := slices.Clone(all)
	slices.SortFunc(byOff, func(x, y *zentry) int { return cmpInt(x.hdrOff, y.hdrOff) })
	for i := 1; i < len(byOff); i++ {
		p, e := byOff[i-1], byOff[i]
		if p.dataOff+p.csize > e.hdrOff {
			return unsafeErr("ZIP entries %q and %q overlap (a zip bomb?)", p.Name, e.Name)
		}
	}
	return nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// archiveMagic: content that makes an entry a nested archive.
var archiveMagic = [][]byte{
	[]byte("PK\x03\x04"), []byte("PK\x05\x06"), []byte("PK\x07\x08"), // ZIP (and spanned ZIP)
	{0x1f, 0x8b},                  // gzip
	[]byte("7z\xBC\xAF\x27\x1C"),  // 7z
	[]byte("Rar!\x1a\x07"),        // RAR
	[]byte("BZh"),                 // bzip2
	{0xFD, '7', 'z', 'X', 'Z', 0}, // xz
	{0x28, 0xB5, 0x2F, 0xFD},      // zstd
	[]byte("MSCF"),                // cabinet
}

// checkContent sniffs an entry's first bytes: nested archives are refused
// and the name and content must agree.
func (a *Archive) checkContent(e *zentry) error {
	r, err := a.open(e)
	if err != nil {
		return err
	}
	defer r.Close()
	head := make([]byte, min(SniffLen, e.Size))
	if _, err := io.ReadFull(r, head); err != nil {
		return err
	}
	isZip := Sniff(head) == ZIP
	if ext := extension(e.Name); !(ext == "xps" && isZip) {
		for _, m := range archiveMagic {
			if len(head) >= len(m) && string(head[:len(m)]) == string(m) {
				return unsafeErr("ZIP entry %q is a nested archive; archives inside archives are not accepted", e.Name)
			}
		}
	}
	k, err := CheckType(e.Name, head)
	if err != nil {
		return prefixed("in the archive: ", err)
	}
	e.Kind = k
	return nil
}

// Entries returns the archive's files (not its directories) in central
// directory order.
func (a *Archive) Entries() []Entry {
	out := make([]Entry, len(a.entries))
	for i, e := range a.entries {
		out[i] = e.Entry
	}
	return out
}

// Extract writes the named entry's content to w and returns the number of
// bytes written. The declared size is not trusted: bytes actually inflated
// are counted, and the entry fails (ErrUnsafe) as soon as it would produce
// more than it declared (which OpenZip bounded by MaxEntryBytes), or
// (ErrMalformed) when it ends early or its CRC-32 is wrong. On error, w
// has received part of the content.
func (a *Archive) Extract(name string, w io.Writer) (int64, error) {
	e := a.byName[foldName(name, a.pkg)]
	if e == nil || e.Name != name {
		return 0, newErr([]error{fs.ErrNotExist}, "the archive has no entry %q", name)
	}
	r, err := a.open(e)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return io.Copy(w, r)
}

// ExtractTo writes every file to dir/<name>, each through a temporary file
// in dir that is synced and then renamed, and syncs dir. It does not
// replace existing files: a name that already exists in dir is an error.
// On error, the files this call created are removed.
func (a *Archive) ExtractTo(dir string) (_ []Extracted, err error) {
	var out []Extracted
	defer func() {
		if err != nil {
			for _, x := range out {
				os.Remove(x.Path)
			}
			out = nil
		}
	}()
	for _, e := range a.entries {
		target := filepath.Join(dir, e.Name)
		if _, err := os.Lstat(target); err == nil {
			return nil, newErr([]error{fs.ErrExist}, "%s already exists", target)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if err := a.extractFile(e, dir, target); err != nil {
			return nil, err
		}
		out = append(out, Extracted{Entry: e.Entry, Path: target})
	}
	if err := durable.SyncDir(dir); err != nil {
		return nil, err
	}
	return out, nil
}

func (a *Archive) extractFile(e *zentry, dir, target string) (err error) {
	f, err := os.CreateTemp(dir, ".inspect-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	r, err := a.open(e)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	r.Close()
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), target)
}

// open returns a reader of an entry's content that enforces its declared
// size and CRC-32.
func (a *Archive) open(e *zentry) (io.ReadCloser, error) {
	var src io.Reader = io.NewSectionReader(a.ra, e.dataOff, e.csize)
	r := &entryReader{name: e.Name, left: e.Size, want: e.crc, crc: crc32.NewIEEE()}
	if e.method == methodFlate {
		fr := flate.NewReader(src)
		src, r.closer = fr, fr
	}
	r.src = src
	return r, nil
}

type entryReader struct {
	src    io.Reader
	closer io.Closer
	name   string
	left   int64 // declared bytes not yet read
	crc    hash.Hash32
	want   uint32
	err    error // sticky
}

func (r *entryReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.left == 0 {
		r.err = r.finish()
		return 0, r.err
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.src.Read(p)
	r.left -= int64(n)
	r.crc.Write(p[:n])
	switch {
	case err == io.EOF && r.left > 0:
		r.err = malformed("ZIP entry %q: data ends %d bytes short of its declared size", r.name, r.left)
	case err != nil && err != io.EOF:
		r.err = malformed("ZIP entry %q: corrupt data: %v", r.name, err)
	}
	if r.err != nil && n == 0 {
		return 0, r.err
	}
	return n, nil
}

// finish checks that nothing follows the declared size and that the
// checksum is right.
func (r *entryReader) finish() error {
	var b [1]byte
	for {
		n, err := r.src.Read(b[:])
		if n > 0 {
			return unsafeErr("ZIP entry %q holds more data than its declared size", r.name)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return malformed("ZIP entry %q: corrupt data: %v", r.name, err)
		}
	}
	if r.crc.Sum32() != r.want {
		return malformed("ZIP entry %q: checksum mismatch", r.name)
	}
	return io.EOF
}

func (r *entryReader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}
