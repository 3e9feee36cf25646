package pdf

import (
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/lodge-mail/lodge/internal/deadline"
)

// CMaps: the encodings of composite fonts (codes to CIDs, with the
// codespace that says how long each code is) and /ToUnicode maps (codes
// to text). One parser reads both; what it does not understand it skips,
// so a broken map gives what could be read of it (the fonts then fall back
// for the codes it does not map) and only a map over maxCMapEntries is an
// error.

const (
	maxCMapEntries = 1 << 17 // codespace ranges, chars and ranges of one CMap, and each element of a bfrange array
	maxCMapBytes   = 4 << 20 // a CMap stream, decoded
	maxDstBytes    = 512     // one destination of a ToUnicode map (UTF-16BE); longer ones are cut
	maxScanBack    = 32      // overlapping ranges looked through for a code
)

type codespace struct {
	n      int
	lo, hi [4]byte
}

// cmapRange maps codes lo to hi: to CIDs from val on (cidrange, cidchar),
// or to text (bfrange, bfchar): the destination dst[val] with its last
// character counted up from lo, or, for the array form, dst[val+code-lo].
type cmapRange struct {
	lo, hi uint32
	val    uint32
	arr    bool
}

type cmap struct {
	space    []codespace
	firstLen [256]uint8 // a code's length by its first byte, when the codespace tells it alone
	cids     []cmapRange
	cidMax   []uint32 // cidMax[i] is the largest hi of cids[:i+1]
	bf       []cmapRange
	bfMax    []uint32
	dst      []string
	wmode    int
	usecmap  string // the name of a predefined CMap it builds on
	entries  int
}

// parseCMap reads a CMap's data into cm (adding to what is there: a
// usecmap stream's entries are read first). Only more than
// maxCMapEntries entries, or the deadline, is an error.
func parseCMap(data []byte, dl *deadline.Deadline, cm *cmap) error {
	const (
		mNone = iota
		mSpace
		mCIDChar
		mCIDRange
		mBFChar
		mBFRange
		mSkip
	)
	type tk struct {
		kind   ctok
		num    float64
		s0, s1 int
	}
	var (
		lx           clexer
		pend         [3]tk
		np           int
		mode         = mNone
		prev1, prev2 tk
	)
	lx.reset(data)
	bytesOf := func(t tk) []byte { return lx.sbuf[t.s0:t.s1] }
	// codeOf reads a source code: a string of 1 to 4 bytes.
	codeOf := func(t tk) (uint32, bool) {
		if t.kind != ctStr {
			return 0, false
		}
		return codeBytes(bytesOf(t))
	}
	add := func() error {
		cm.entries++
		if cm.entries > maxCMapEntries {
			return limitErr("a CMap has more than %d entries", maxCMapEntries)
		}
		return nil
	}
	for {
		if err := dl.Check(); err != nil {
			return err
		}
		t := lx.token()
		cur := tk{kind: t, num: lx.num, s0: lx.s0, s1: lx.s1}
		switch t {
		case ctEOF:
			cm.finish()
			return nil
		case ctOp:
			switch string(lx.kw) {
			case "begincodespacerange":
				mode = mSpace
			case "begincidchar":
				mode = mCIDChar
			case "begincidrange":
				mode = mCIDRange
			case "beginbfchar":
				mode = mBFChar
			case "beginbfrange":
				mode = mBFRange
			case "beginnotdefchar", "beginnotdefrange":
				mode = mSkip
			case "endcodespacerange", "endcidchar", "endcidrange", "endbfchar", "endbfrange", "endnotdefchar", "endnotdefrange":
				mode = mNone
			case "usecmap":
				if prev1.kind == ctName {
					cm.usecmap = string(bytesOf(prev1))
				}
			case "def":
				if prev2.kind == ctName && string(bytesOf(prev2)) == "WMode" && prev1.kind == ctNum {
					cm.wmode = int(prev1.num) & 1
				}
			}
			np = 0
			prev1, prev2 = tk{}, tk{}
			lx.sbuf = lx.sbuf[:0]
			continue
		case ctArrOpen:
			if mode == mBFRange && np == 2 && pend[0].kind == ctStr && pend[1].kind == ctStr {
				if err := cm.bfArray(&lx, bytesOf(pend[0]), bytesOf(pend[1]), dl); err != nil {
					return err
				}
			} else {
				skipArray(&lx)
			}
			np = 0
			lx.sbuf = lx.sbuf[:0]
			continue
		case ctNum, ctName:
		case ctStr:
			if lx.open {
				continue // cut short: the map was truncated
			}
		default:
			continue
		}
		if mode == mNone || mode == mSkip {
			prev2, prev1 = prev1, cur
			if len(lx.sbuf) > 1<<16 {
				lx.sbuf = lx.sbuf[:0]
				prev1, prev2 = tk{}, tk{}
			}
			continue
		}
		pend[np] = cur
		np++
		var err error
		done := true
		switch {
		case mode == mSpace && np == 2:
			if pend[0].kind == ctStr && pend[1].kind == ctStr {
				lo, hi := bytesOf(pend[0]), bytesOf(pend[1])
				if len(lo) >= 1 && len(lo) <= 4 && len(hi) == len(lo) {
					cs := codespace{n: len(lo)}
					copy(cs.lo[:], lo)
					copy(cs.hi[:], hi)
					cm.space = append(cm.space, cs)
					err = add()
				}
			}
		case mode == mCIDChar && np == 2:
			if c, ok := codeOf(pend[0]); ok && pend[1].kind == ctNum && pend[1].num >= 0 && pend[1].num < 1<<32 {
				cm.cids = append(cm.cids, cmapRange{lo: c, hi: c, val: uint32(pend[1].num)})
				err = add()
			}
		case mode == mCIDRange && np == 3:
			lo, ok1 := codeOf(pend[0])
			hi, ok2 := codeOf(pend[1])
			if ok1 && ok2 && lo <= hi && pend[2].kind == ctNum && pend[2].num >= 0 && pend[2].num < 1<<32 {
				cm.cids = append(cm.cids, cmapRange{lo: lo, hi: hi, val: uint32(pend[2].num)})
				err = add()
			}
		case mode == mBFChar && np == 2:
			if c, ok := codeOf(pend[0]); ok {
				var text string
				switch pend[1].kind {
				case ctStr:
					text = utf16Text(bytesOf(pend[1]))
				case ctName:
					text = glyphText(string(bytesOf(pend[1])))
				}
				if pend[1].kind != ctNum {
					cm.bf = append(cm.bf, cmapRange{lo: c, hi: c, val: uint32(len(cm.dst))})
					cm.dst = append(cm.dst, text)
					err = add()
				}
			}
		case mode == mBFRange && np == 3:
			lo, ok1 := codeOf(pend[0])
			hi, ok2 := codeOf(pend[1])
			if ok1 && ok2 && lo <= hi && pend[2].kind == ctStr {
				cm.bf = append(cm.bf, cmapRange{lo: lo, hi: hi, val: uint32(len(cm.dst))})
				cm.dst = append(cm.dst, utf16Text(bytesOf(pend[2])))
				err = add()
			}
		default:
			done = false
		}
		if err != nil {
			return err
		}
		if done {
			np = 0
			lx.sbuf = lx.sbuf[:0]
		}
	}
}

// bfArray reads the array of "lo hi [dst ...]" after its "[".
func (cm *cmap) bfArray(lx *clexer, loB, hiB []byte, dl *deadline.Deadline) error {
	lo, ok1 := codeBytes(loB)
	hi, ok2 := codeBytes(hiB)
	first := uint32(len(cm.dst))
	n := uint32(0)
	for {
		if err := dl.Check(); err != nil {
			return err
		}
		mark := len(lx.sbuf)
		switch lx.token() {
		case ctEOF, ctArrClose:
			if ok1 && ok2 && lo <= hi && n > 0 {
				cm.bf = append(cm.bf, cmapRange{lo: lo, hi: lo + n - 1, val: first, arr: true})
			}
			return nil
		case ctStr:
			if ok1 && ok2 && lo <= hi && uint64(lo)+uint64(n) <= uint64(hi) {
				cm.dst = append(cm.dst, utf16Text(lx.str()))
				n++
				cm.entries++
				if cm.entries > maxCMapEntries {
					return limitErr("a CMap has more than %d entries", maxCMapEntries)
				}
			}
		case ctArrOpen, ctDictOpen:
			skipArray(lx)
		case ctOp:
			lx.pos -= len(lx.kw) // the array was not closed: the operator is read again
			lx.sbuf = lx.sbuf[:mark]
			if ok1 && ok2 && lo <= hi && n > 0 {
				cm.bf = append(cm.bf, cmapRange{lo: lo, hi: lo + n - 1, val: first, arr: true})
			}
			return nil
		}
		lx.sbuf = lx.sbuf[:mark]
	}
}

// skipArray passes over the rest of an array or dictionary whose opening
// was read.
func skipArray(lx *clexer) {
	depth := 1
	for depth > 0 {
		switch lx.token() {
		case ctEOF:
			return
		case ctArrOpen, ctDictOpen:
			if depth < maxSkipDepth {
				depth++
			}
		case ctArrClose, ctDictClose:
			depth--
		}
	}
}

func codeBytes(b []byte) (uint32, bool) {
	if len(b) < 1 || len(b) > 4 {
		return 0, false
	}
	var c uint32
	for _, x := range b {
		c = c<<8 | uint32(x)
	}
	return c, true
}

// utf16Text decodes a ToUnicode destination, UTF-16BE (an odd last byte
// is dropped, an unpaired surrogate is U+FFFD). A single byte, which
// broken maps write, is taken as a character. Ligatures are spelt out
// later (text), after a range has counted up from them.
func utf16Text(b []byte) string {
	if len(b) > maxDstBytes {
		b = b[:maxDstBytes]
	}
	if len(b) == 1 {
		return runeText(rune(b[0]))
	}
	if len(b) == 2 && b[0] == 0 && b[1] < 128 {
		return runeText(rune(b[1]))
	}
	var units [maxDstBytes / 2]uint16
	n := 0
	for i := 0; i+1 < len(b); i += 2 {
		units[n] = uint16(b[i])<<8 | uint16(b[i+1])
		n++
	}
	return string(utf16.Decode(units[:n]))
}

// spellOut writes the ligature characters of s (U+FB00 to U+FB06) as
// their letters, allocating only when there are any.
func spellOut(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r >= 0xFB00 && r <= 0xFB06 }) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteString(runeText(r))
	}
	return b.String()
}

// finish sorts the ranges and indexes the codespace.
func (cm *cmap) finish() {
	sortRanges := func(rs []cmapRange) []uint32 {
		slices.SortStableFunc(rs, func(a, b cmapRange) int {
			switch {
			case a.lo < b.lo:
				return -1
			case a.lo > b.lo:
				return 1
			}
			return 0
		})
		mx := make([]uint32, len(rs))
		var m uint32
		for i, r := range rs {
			m = max(m, r.hi)
			mx[i] = m
		}
		return mx
	}
	cm.cidMax = sortRanges(cm.cids)
	cm.bfMax = sortRanges(cm.bf)
	// the fast path: a first byte that only one range holds, and that
	// range takes any following bytes
	for b := range 256 {
		var only *codespace
		count := 0
		for i := range cm.space {
			cs := &cm.space[i]
			if byte(b) >= cs.lo[0] && byte(b) <= cs.hi[0] {
				only = cs
				count++
			}
		}
		if count != 1 {
			continue
		}
		full := true
		for k := 1; k < only.n; k++ {
			full = full && only.lo[k] == 0 && only.hi[k] == 0xFF
		}
		if full {
			cm.firstLen[b] = uint8(only.n)
		}
	}
}

// find returns the range of rs holding code, -1 for none. Of
// overlapping ranges, the one starting last wins.
func findRange(rs []cmapRange, mx []uint32, code uint32) int {
	lo, hi := 0, len(rs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if rs[m].lo <= code {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for i, k := lo-1, 0; i >= 0 && k < maxScanBack; i, k = i-1, k+1 {
		if rs[i].hi >= code {
			return i
		}
		if mx[i] < code {
			break
		}
	}
	return -1
}

// code reads the next code of s by the codespace: its value and length.
// Bytes no codespace range holds are read as a code of the shortest
// length (at least 1), as readers do.
func (cm *cmap) code(s []byte) (uint32, int) {
	if n := int(cm.firstLen[s[0]]); n != 0 && n <= len(s) {
		c, _ := codeBytes(s[:n])
		return c, n
	}
	short := 0
	for n := 1; n <= 4 && n <= len(s); n++ {
		for _, cs := range cm.space {
			if cs.n != n {
				continue
			}
			if short == 0 || n < short {
				short = n
			}
			in := true
			for k := range n {
				if s[k] < cs.lo[k] || s[k] > cs.hi[k] {
					in = false
					break
				}
			}
			if in {
				c, _ := codeBytes(s[:n])
				return c, n
			}
		}
	}
	if short == 0 {
		short = 1
		for _, cs := range cm.space {
			if short == 1 || cs.n < short {
				short = cs.n
			}
		}
		if len(cm.space) == 0 {
			short = 2
		}
	}
	short = min(short, len(s))
	c, _ := codeBytes(s[:short])
	return c, short
}

// cid maps a code to its CID: 0 when unmapped, or the code itself when
// the CMap builds on Identity.
func (cm *cmap) cid(code uint32) uint32 {
	if i := findRange(cm.cids, cm.cidMax, code); i >= 0 {
		return cm.cids[i].val + (code - cm.cids[i].lo)
	}
	if strings.HasPrefix(cm.usecmap, "Identity") {
		return code
	}
	return 0
}

// text maps a code to its text by the bf entries; ok false when none
// holds it.
func (cm *cmap) text(code uint32) (string, bool) {
	i := findRange(cm.bf, cm.bfMax, code)
	if i < 0 {
		return "", false
	}
	r := cm.bf[i]
	t, ok := cm.dstText(r, code)
	if t == "\x00" {
		return "", false // a NUL is no text: the font's encoding may know better
	}
	return t, ok
}

func (cm *cmap) dstText(r cmapRange, code uint32) (string, bool) {
	if r.arr {
		k := r.val + (code - r.lo)
		if int(k) >= len(cm.dst) {
			return "", false
		}
		return spellOut(cm.dst[k]), true
	}
	base := cm.dst[r.val]
	if code == r.lo || base == "" {
		return spellOut(base), true
	}
	// count the last character up (the spec says its last byte; the
	// character is what every producer means)
	runes := []rune(base)
	last := runes[len(runes)-1] + rune(code-r.lo)
	if last < 0 || last > 0x10FFFF || last >= 0xD800 && last <= 0xDFFF {
		return "\uFFFD", true
	}
	runes[len(runes)-1] = last
	return spellOut(string(runes)), true
}
