package ipp

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// Delimiter tags: each begins a group of attributes (end ends them).
const (
	TagOperation    byte = 0x01
	TagJob          byte = 0x02
	TagEnd          byte = 0x03
	TagPrinter      byte = 0x04
	TagUnsupported  byte = 0x05
	TagSubscription byte = 0x06
	TagEvent        byte = 0x07
	TagResource     byte = 0x08
	TagDocument     byte = 0x09
	TagSystem       byte = 0x0A
)

// Value tags (RFC 8010 section 3.5.2). 0x10-0x1F are out-of-band values
// (no data); a tag this package does not name is kept as it came.
const (
	TagUnsupportedValue byte = 0x10
	TagUnknown          byte = 0x12
	TagNoValue          byte = 0x13
	TagInteger          byte = 0x21
	TagBoolean          byte = 0x22
	TagEnum             byte = 0x23
	TagOctetString      byte = 0x30
	TagDateTime         byte = 0x31
	TagResolution       byte = 0x32
	TagRange            byte = 0x33
	TagBegCollection    byte = 0x34
	TagTextWithLang     byte = 0x35
	TagNameWithLang     byte = 0x36
	TagEndCollection    byte = 0x37
	TagText             byte = 0x41
	TagName             byte = 0x42
	TagKeyword          byte = 0x44
	TagURI              byte = 0x45
	TagURIScheme        byte = 0x46
	TagCharset          byte = 0x47
	TagLanguage         byte = 0x48
	TagMimeType         byte = 0x49
	TagMemberName       byte = 0x4A
)

// Operations this package's Client sends.
const (
	OpPrintJob         uint16 = 0x0002
	OpGetJobAttributes uint16 = 0x0009
	OpGetJobs          uint16 = 0x000A
)

// Job states (job-state).
const (
	JobPending    = 3
	JobHeld       = 4
	JobProcessing = 5
	JobStopped    = 6
	JobCanceled   = 7
	JobAborted    = 8
	JobCompleted  = 9
)

// maxLength is the largest name or value length: the field is a signed
// short (RFC 8010 section 3.1).
const maxLength = 0x7FFF

// Value is one value of an attribute: its tag and its bytes as encoded.
type Value struct {
	Tag  byte
	Data []byte
}

// Integer, Enum, Boolean and the string kinds make values.
func Integer(n int32) Value { return Value{TagInteger, binary.BigEndian.AppendUint32(nil, uint32(n))} }
func Enum(n int32) Value    { return Value{TagEnum, binary.BigEndian.AppendUint32(nil, uint32(n))} }
func Boolean(b bool) Value {
	if b {
		return Value{TagBoolean, []byte{1}}
	}
	return Value{TagBoolean, []byte{0}}
}
func Keyword(s string) Value  { return Value{TagKeyword, []byte(s)} }
func Name(s string) Value     { return Value{TagName, []byte(s)} }
func Text(s string) Value     { return Value{TagText, []byte(s)} }
func URI(s string) Value      { return Value{TagURI, []byte(s)} }
func Charset(s string) Value  { return Value{TagCharset, []byte(s)} }
func Language(s string) Value { return Value{TagLanguage, []byte(s)} }
func MimeType(s string) Value { return Value{TagMimeType, []byte(s)} }

// Int returns an integer or enum value; ok is false for other kinds.
func (v Value) Int() (n int32, ok bool) {
	if (v.Tag != TagInteger && v.Tag != TagEnum) || len(v.Data) != 4 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(v.Data)), true
}

// String returns the text of a string value: the text itself of a
// textWithLanguage or nameWithLanguage, the bytes of the others.
func (v Value) String() string {
	if v.Tag == TagTextWithLang || v.Tag == TagNameWithLang {
		if _, text, ok := withLang(v.Data); ok {
			return string(text)
		}
	}
	return string(v.Data)
}

// withLang splits a textWithLanguage or nameWithLanguage value: two
// length-prefixed strings that fill the value exactly.
func withLang(d []byte) (lang, text []byte, ok bool) {
	if len(d) < 4 {
		return nil, nil, false
	}
	n := int(binary.BigEndian.Uint16(d))
	if 2+n+2 > len(d) {
		return nil, nil, false
	}
	lang, d = d[2:2+n], d[2+n:]
	m := int(binary.BigEndian.Uint16(d))
	if 2+m != len(d) {
		return nil, nil, false
	}
	return lang, d[2:], true
}

// Attribute is a named attribute with one or more values (a 1setOf has
// several; a collection's values run from its begCollection to its
// endCollection, members named by memberAttrName values, RFC 8010
// section 3.1.6, kept flat as they came).
type Attribute struct {
	Name   string
	Values []Value
}

// Group is an attribute group: operation, job, printer, unsupported ...
type Group struct {
	Tag   byte
	Attrs []Attribute
}

// Get returns the group's attribute of that name, nil when absent.
func (g *Group) Get(name string) *Attribute {
	for i := range g.Attrs {
		if g.Attrs[i].Name == name {
			return &g.Attrs[i]
		}
	}
	return nil
}

// Message is an IPP request or response (RFC 8010 section 3.1.1). The
// document of a request follows its encoding; Data is what followed the
// end tag of a decoded message.
type Message struct {
	Major, Minor byte
	// Code is the operation-id of a request, the status-code of a
	// response.
	Code      uint16
	RequestID uint32
	Groups    []Group
	Data      []byte
}

// Group returns the message's first group with the tag, nil when none.
func (m *Message) Group(tag byte) *Group {
	for i := range m.Groups {
		if m.Groups[i].Tag == tag {
			return &m.Groups[i]
		}
	}
	return nil
}

// AppendBinary appends the message's encoding (without Data) to b. A
// name or value longer than 32,767 bytes, an attribute without values
// or a group tag that is not a delimiter is an error.
func (m *Message) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, m.Major, m.Minor)
	b = binary.BigEndian.AppendUint16(b, m.Code)
	b = binary.BigEndian.AppendUint32(b, m.RequestID)
	for _, g := range m.Groups {
		if !groupTag(g.Tag) {
			return nil, fmt.Errorf("ipp: group tag 0x%02x is not a delimiter tag", g.Tag)
		}
		b = append(b, g.Tag)
		for _, a := range g.Attrs {
			switch {
			case a.Name == "" || len(a.Name) > maxLength:
				return nil, fmt.Errorf("ipp: attribute name of %d bytes (1 to %d)", len(a.Name), maxLength)
			case len(a.Values) == 0:
				return nil, fmt.Errorf("ipp: attribute %q has no value", a.Name)
			}
			for i, v := range a.Values {
				if v.Tag < 0x10 {
					return nil, fmt.Errorf("ipp: attribute %q: value tag 0x%02x is a delimiter tag", a.Name, v.Tag)
				}
				if len(v.Data) > maxLength {
					return nil, fmt.Errorf("ipp: attribute %q: value of %d bytes (at most %d)", a.Name, len(v.Data), maxLength)
				}
				b = append(b, v.Tag)
				name := ""
				if i == 0 {
					name = a.Name
				}
				b = binary.BigEndian.AppendUint16(b, uint16(len(name)))
				b = append(b, name...)
				b = binary.BigEndian.AppendUint16(b, uint16(len(v.Data)))
				b = append(b, v.Data...)
			}
		}
	}
	return append(b, TagEnd), nil
}

func groupTag(t byte) bool { return t != 0 && t != TagEnd && t <= TagSystem }

// Limits bound what Decode accepts. The zero value means the defaults.
type Limits struct {
	// MaxValues is the most values a message may hold, all attributes
	// together (default 100,000): each costs a small header beside the
	// bytes it points into.
	MaxValues int
	// MaxDepth is the deepest nesting of collections (default 16).
	MaxDepth int
}

func (l Limits) withDefaults() Limits {
	if l.MaxValues <= 0 {
		l.MaxValues = 100_000
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = 16
	}
	return l
}

// DecodeError is a message that cannot be decoded, located by the offset
// of the field at fault.
type DecodeError struct {
	Offset int
	Msg    string
}

func (e *DecodeError) Error() string { return "ipp: at byte " + strconv.Itoa(e.Offset) + ": " + e.Msg }

// fixedLength is the length a value of a tag must have (-1: any).
func fixedLength(tag byte) int {
	switch tag {
	case TagInteger, TagEnum:
		return 4
	case TagBoolean:
		return 1
	case TagDateTime:
		return 11
	case TagResolution:
		return 9
	case TagRange:
		return 8
	case TagEndCollection:
		return 0
	}
	return -1
}

// Decode decodes a message. Values point into data (nothing is copied).
// Every length is checked against what is left and against the value's
// type (an integer is 4 bytes, a boolean 1 byte of 0 or 1, a
// textWithLanguage two strings that fill it ...), collections must nest
// properly, and the Limits hold; anything else is a DecodeError at the
// offending byte.
func Decode(data []byte, lim Limits) (*Message, error) {
	lim = lim.withDefaults()
	d := decoder{data: data}
	if len(data) < 9 {
		return nil, &DecodeError{len(data), fmt.Sprintf("a message is at least 9 bytes (version, code, request id, end tag), got %d", len(data))}
	}
	m := &Message{Major: data[0], Minor: data[1], Code: binary.BigEndian.Uint16(data[2:]), RequestID: binary.BigEndian.Uint32(data[4:])}
	d.off = 8
	values := 0
	var g *Group
	var a *Attribute
	depth := 0
	for {
		if d.off >= len(data) {
			return nil, &DecodeError{d.off, "the message ends before its end-of-attributes tag"}
		}
		tagAt := d.off
		tag := data[d.off]
		d.off++
		if tag < 0x10 {
			if depth > 0 {
				return nil, &DecodeError{tagAt, fmt.Sprintf("attribute %q ends inside a collection", a.Name)}
			}
			switch {
			case tag == TagEnd:
				m.Data = data[d.off:]
				return m, nil
			case groupTag(tag):
				m.Groups = append(m.Groups, Group{Tag: tag})
				g, a = &m.Groups[len(m.Groups)-1], nil
				continue
			default:
				return nil, &DecodeError{tagAt, fmt.Sprintf("reserved delimiter tag 0x%02x", tag)}
			}
		}
		if g == nil {
			return nil, &DecodeError{tagAt, fmt.Sprintf("value tag 0x%02x before any group", tag)}
		}
		nameAt := d.off
		name, err := d.field("name")
		if err != nil {
			return nil, err
		}
		valueAt := d.off
		value, err := d.field("value")
		if err != nil {
			return nil, err
		}
		if len(name) > 0 {
			if depth > 0 {
				return nil, &DecodeError{nameAt, fmt.Sprintf("attribute %q starts inside a collection of %q", name, a.Name)}
			}
			g.Attrs = append(g.Attrs, Attribute{Name: string(name)})
			a = &g.Attrs[len(g.Attrs)-1]
		} else if a == nil {
			return nil, &DecodeError{nameAt, "an additional value (no name) before any attribute of its group"}
		}
		if values++; values > lim.MaxValues {
			return nil, &DecodeError{tagAt, fmt.Sprintf("more than %d values", lim.MaxValues)}
		}
		if n := fixedLength(tag); n >= 0 && len(value) != n {
			return nil, &DecodeError{valueAt, fmt.Sprintf("attribute %q: a value of tag 0x%02x must be %d bytes, not %d", a.Name, tag, n, len(value))}
		}
		switch tag {
		case TagBoolean:
			if value[0] > 1 {
				return nil, &DecodeError{valueAt + 2, fmt.Sprintf("attribute %q: boolean %d (0 or 1)", a.Name, value[0])}
			}
		case TagTextWithLang, TagNameWithLang:
			if _, _, ok := withLang(value); !ok {
				return nil, &DecodeError{valueAt + 2, fmt.Sprintf("attribute %q: a value with language is two strings that fill it exactly", a.Name)}
			}
		case TagBegCollection:
			if depth++; depth > lim.MaxDepth {
				return nil, &DecodeError{tagAt, fmt.Sprintf("attribute %q: collections nested deeper than %d", a.Name, lim.MaxDepth)}
			}
		case TagEndCollection:
			if depth--; depth < 0 {
				return nil, &DecodeError{tagAt, fmt.Sprintf("attribute %q: endCollection without begCollection", a.Name)}
			}
		case TagMemberName:
			if depth == 0 {
				return nil, &DecodeError{tagAt, fmt.Sprintf("attribute %q: memberAttrName outside a collection", a.Name)}
			}
		}
		a.Values = append(a.Values, Value{Tag: tag, Data: value})
	}
}

type decoder struct {
	data []byte
	off  int
}

// field reads a length-prefixed field (a signed short length, then its
// bytes).
func (d *decoder) field(what string) ([]byte, error) {
	if len(d.data)-d.off < 2 {
		return nil, &DecodeError{d.off, fmt.Sprintf("the message ends inside a %s length", what)}
	}
	n := int(binary.BigEndian.Uint16(d.data[d.off:]))
	if n > maxLength {
		return nil, &DecodeError{d.off, fmt.Sprintf("%s length %d is negative (a signed short)", what, int16(n))}
	}
	if left := len(d.data) - d.off - 2; n > left {
		return nil, &DecodeError{d.off, fmt.Sprintf("%s length %d runs past the end (%d bytes left)", what, n, left)}
	}
	f := d.data[d.off+2 : d.off+2+n]
	d.off += 2 + n
	return f, nil
}
