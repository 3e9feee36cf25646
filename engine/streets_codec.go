package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lodge-mail/lodge/data"
)

// The binary form of Streets (MarshalBinary), version 3: the magic
// "LSTR3\n", six counts (groups, entries, streets, points, interned
// strings, links) as uvarints, then each table in order:
//
//	group:  key (uvarint length + bytes), complete (1 byte), first entry (uvarint)
//	entry:  key, street (uvarint)
//	street: group, name, pid, point count (uvarints and strings)
//	point:  first, last, flat, level, lot, building, postcode (uvarints)
//	string: bytes (strs[0], always "", is not written)
//	link:   group, locality key, state (1 byte), postcode (uvarint)
//
// then the address points' identifiers: the count of PID prefixes
// (uvarint), each prefix (a string), and when there is any, one varint
// per point: its packed PID (0 for none; see packPID) less the point
// before's.
//
// Version 2 ("LSTR2\n") is the same without the identifiers, version 1
// ("LSTR1\n") also without a point's building; both are still read.
//
// A reader checks every count and index against the tables, so a corrupt
// blob gives an error, never a panic or a table out of range.
const (
	streetsMagic   = "LSTR3\n"
	streetsMagicV2 = "LSTR2\n"
	streetsMagicV1 = "LSTR1\n"
)

// MarshalBinary encodes s.
func (s *Streets) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 64+len(s.points)*8+len(s.entries)*24)
	b = append(b, streetsMagic...)
	for _, n := range []int{len(s.groupKeys), len(s.entries), len(s.streets), len(s.points), len(s.strs) - 1, len(s.links)} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	str := func(v string) {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	for g, k := range s.groupKeys {
		str(k)
		c := byte(0)
		if s.complete[g] {
			c = 1
		}
		b = append(b, c)
		b = binary.AppendUvarint(b, uint64(s.groupLo[g]))
	}
	for _, en := range s.entries {
		str(en.key)
		b = binary.AppendUvarint(b, uint64(en.street))
	}
	for _, st := range s.streets {
		b = binary.AppendUvarint(b, uint64(st.group))
		str(st.name)
		str(st.pid)
		b = binary.AppendUvarint(b, uint64(st.hi-st.lo))
	}
	for _, p := range s.points {
		b = binary.AppendUvarint(b, uint64(p.first))
		b = binary.AppendUvarint(b, uint64(p.last))
		b = binary.AppendUvarint(b, uint64(p.flat))
		b = binary.AppendUvarint(b, uint64(p.level))
		b = binary.AppendUvarint(b, uint64(p.lot))
		b = binary.AppendUvarint(b, uint64(p.building))
		b = binary.AppendUvarint(b, uint64(p.postcode))
	}
	for _, v := range s.strs[1:] {
		str(v)
	}
	for _, l := range s.links {
		b = binary.AppendUvarint(b, uint64(l.group))
		str(l.name)
		b = append(b, byte(l.state))
		b = binary.AppendUvarint(b, uint64(l.postcode))
	}
	b = binary.AppendUvarint(b, uint64(len(s.pidPrefix)))
	for _, v := range s.pidPrefix {
		str(v)
	}
	if len(s.pidPrefix) > 0 {
		// as differences from the point before: neighbours' PIDs are
		// mostly close, so most take a byte or two instead of nine
		var prev uint64
		for i := range s.points {
			var v uint64
			if i < len(s.pids) {
				v = s.pids[i]
			}
			b = binary.AppendVarint(b, int64(v-prev))
			prev = v
		}
	}
	return b, nil
}

var errStreetsCorrupt = errors.New("streets: corrupt table")

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uv(max uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > max {
		d.err = errStreetsCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

// vi reads a varint (a difference).
func (d *decoder) vi() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errStreetsCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte1() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errStreetsCorrupt
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) str() string {
	n := d.uv(uint64(len(d.b)))
	if d.err == nil && n > uint64(len(d.b)) {
		d.err = errStreetsCorrupt
	}
	if d.err != nil {
		return ""
	}
	v := string(d.b[:n])
	d.b = d.b[n:]
	return v
}

// UnmarshalStreets decodes the binary form MarshalBinary wrote.
func UnmarshalStreets(b []byte) (*Streets, error) {
	head := ""
	if len(b) >= len(streetsMagic) {
		head = string(b[:len(streetsMagic)])
	}
	v1, v2 := head == streetsMagicV1, head == streetsMagicV2
	if !v1 && !v2 && head != streetsMagic {
		return nil, fmt.Errorf("streets: not a street table (or a newer format)")
	}
	d := &decoder{b: b[len(streetsMagic):]}
	lim := uint64(len(b)) // every item takes at least a byte
	nGroups, nEntries, nStreets := d.uv(lim), d.uv(lim), d.uv(lim)
	nPoints, nStrs, nLinks := d.uv(lim), d.uv(lim), d.uv(lim)
	if d.err != nil {
		return nil, d.err
	}
	if (nEntries > 0 && nStreets == 0) || ((nStreets > 0 || nLinks > 0) && nGroups == 0) || (nPoints > 0 && nStreets == 0) {
		return nil, errStreetsCorrupt
	}
	s := &Streets{
		groupKeys: make([]string, nGroups),
		complete:  make([]bool, nGroups),
		groupLo:   make([]uint32, nGroups+1),
		entries:   make([]streetEntry, nEntries),
		streets:   make([]street, nStreets),
		points:    make([]point, nPoints),
		strs:      make([]string, nStrs+1),
		links:     make([]streetLink, nLinks),
	}
	for g := range s.groupKeys {
		s.groupKeys[g] = d.str()
		s.complete[g] = d.byte1() == 1
		s.groupLo[g] = uint32(d.uv(nEntries))
		if g > 0 && s.groupLo[g] < s.groupLo[g-1] {
			return nil, errStreetsCorrupt
		}
	}
	s.groupLo[nGroups] = uint32(nEntries)
	for i := range s.entries {
		s.entries[i].key = d.str()
		s.entries[i].street = uint32(d.uv(nStreets - 1))
	}
	lo := uint64(0)
	for i := range s.streets {
		st := &s.streets[i]
		st.group = uint32(d.uv(nGroups - 1))
		st.name = d.str()
		st.pid = d.str()
		n := d.uv(nPoints - lo)
		st.lo, st.hi = uint32(lo), uint32(lo+n)
		lo += n
	}
	if d.err == nil && lo != nPoints {
		return nil, errStreetsCorrupt
	}
	for i := range s.points {
		p := &s.points[i]
		p.first = uint32(d.uv(1<<32 - 1))
		p.last = uint32(d.uv(1<<32 - 1))
		p.flat = uint32(d.uv(nStrs))
		p.level = uint32(d.uv(nStrs))
		p.lot = uint32(d.uv(nStrs))
		if !v1 {
			p.building = uint32(d.uv(nStrs))
		}
		p.postcode = uint16(d.uv(9999))
	}
	s.strID = make(map[string]uint32, nStrs+1)
	s.strID[""] = 0
	for i := 1; i < len(s.strs); i++ {
		s.strs[i] = d.str()
		s.strID[s.strs[i]] = uint32(i)
	}
	for i := range s.links {
		l := &s.links[i]
		l.group = uint32(d.uv(nGroups - 1))
		l.name = d.str()
		l.state = State(d.byte1())
		l.postcode = uint16(d.uv(9999))
		if d.err == nil && int(l.state) >= len(data.States) {
			return nil, errStreetsCorrupt
		}
	}
	if !v1 && !v2 {
		nPrefix := d.uv(255)
		if d.err == nil && nPrefix > 0 {
			s.pidPrefix = make([]string, nPrefix)
			for i := range s.pidPrefix {
				s.pidPrefix[i] = d.str()
				letters, digits, ok := strings.Cut(s.pidPrefix[i], "|")
				if n, err := strconv.Atoi(digits); d.err == nil && (!ok || letters == "" || err != nil || n < 1 || n > 16) {
					return nil, errStreetsCorrupt
				}
			}
			s.pids = make([]uint64, nPoints)
			var v uint64
			for i := range s.pids {
				v += uint64(d.vi())
				if d.err == nil && v>>56 > nPrefix {
					return nil, errStreetsCorrupt
				}
				s.pids[i] = v
			}
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("streets: %d bytes after the tables", len(d.b))
	}
	return s, nil
}
