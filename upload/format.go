package upload

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"

	"github.com/segmentio/encoding/json"
)

// Format is the response format chosen by an endpoint's suffix.
type Format string

const (
	FormatText Format = "text"
	FormatJSON Format = "json"
	FormatXML  Format = "xml"
)

// ParseFormat reads the suffix of get_session_id.<fmt> and end_session.<fmt>.
func ParseFormat(s string) (Format, bool) {
	switch Format(s) {
	case FormatText, FormatJSON, FormatXML:
		return Format(s), true
	}
	return "", false
}

// ContentType is the media type of a format.
func (f Format) ContentType() string {
	switch f {
	case FormatJSON:
		return "application/json"
	case FormatXML:
		return "application/xml; charset=utf-8"
	}
	return "text/plain; charset=utf-8"
}

// SessionIDResult is the answer of get_session_id.
type SessionIDResult struct {
	User      string `json:"user" xml:"User"`
	Account   string `json:"account" xml:"Account"`
	SessionID string `json:"session_id" xml:"SessionId"`
}

// encodeSessionID writes a get_session_id answer. Text is the identifier
// alone; XML has the PascalCase root GetSessionIdResult with one element
// per field, as the service's other XML answers do.
func encodeSessionID(f Format, r SessionIDResult) []byte {
	switch f {
	case FormatJSON:
		b, _ := json.Marshal(r)
		return append(b, '\n')
	case FormatXML:
		return xmlDoc("GetSessionIdResult", r)
	}
	return []byte(r.SessionID + "\n")
}

// xmlEndResult mirrors EndResult for XML: root EndSessionResult, files as
// Files/File, problems as Errs/Err.
type xmlEndResult struct {
	SessionID string       `xml:"SessionId"`
	Result    string       `xml:"Result"`
	Status    string       `xml:"Status"`
	Files     []xmlEndFile `xml:"Files>File"`
	Error     string       `xml:"Error"`
	Errs      []string     `xml:"Errs>Err"`
	Warnings  *xmlWarnings `xml:"Warnings,omitempty"` // nil: none
}

type xmlWarnings struct {
	Warning []string `xml:"Warning"`
}

type xmlEndFile struct {
	Name     string `xml:"Name"`
	Size     int64  `xml:"Sz"`
	Received int64  `xml:"UpldSz"`
	Declared int64  `xml:"ClSz"`
	Chunks   int    `xml:"Chunks"`
	Intent   int    `xml:"Intent"`
	First    string `xml:"First"`
	Last     string `xml:"Last"`
	Host     string `xml:"Host"`
	APath    string `xml:"Apath"`
	GPath    string `xml:"Gpath"`
	SHA1     string `xml:"Sha1"`
}

func unixString(t float64) string { return strconv.FormatFloat(t, 'f', 6, 64) }

// encodeEnd writes an end_session answer in format f. Text is one
// "field: value" line per field, a "file:" line per file (name, size,
// sha1) and an "err:" line per problem.
func encodeEnd(f Format, r EndResult) []byte {
	if r.Files == nil {
		r.Files = []EndFile{}
	}
	if r.Errs == nil {
		r.Errs = []string{}
	}
	switch f {
	case FormatJSON:
		b, _ := json.Marshal(r)
		return append(b, '\n')
	case FormatXML:
		x := xmlEndResult{SessionID: r.SessionID, Result: r.Result, Status: r.Status, Error: r.Error, Errs: r.Errs}
		if len(r.Warnings) > 0 {
			x.Warnings = &xmlWarnings{r.Warnings}
		}
		for _, fl := range r.Files {
			x.Files = append(x.Files, xmlEndFile{fl.Name, fl.Size, fl.Received, fl.Declared, fl.Chunks, fl.Intent,
				unixString(fl.First), unixString(fl.Last), fl.Host, fl.APath, fl.GPath, fl.SHA1})
		}
		return xmlDoc("EndSessionResult", x)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "session_id: %s\nresult: %s\nstatus: %s\n", r.SessionID, r.Result, r.Status)
	for _, fl := range r.Files {
		fmt.Fprintf(&b, "file: %s %d %s\n", fl.Name, fl.Size, fl.SHA1)
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "error: %s\n", oneLine(r.Error))
	}
	for _, e := range r.Errs {
		fmt.Fprintf(&b, "err: %s\n", oneLine(e))
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", oneLine(w))
	}
	return []byte(b.String())
}

// ErrorBody is the body of an error answer on the upload interface.
type ErrorBody struct {
	Error  string   `json:"error" xml:"Error"`
	Errs   []string `json:"errs,omitempty" xml:"Errs>Err,omitempty"`
	Status int      `json:"status" xml:"Status"`
}

func encodeError(f Format, status int, msg string) []byte {
	e := ErrorBody{Error: msg, Status: status}
	switch f {
	case FormatJSON:
		b, _ := json.Marshal(e)
		return append(b, '\n')
	case FormatXML:
		return xmlDoc("ErrorResult", e)
	}
	return []byte(oneLine(msg) + "\n")
}

func oneLine(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "\r", " "), "\n", " ") }

func xmlDoc(root string, v any) []byte {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Encode(xmlRoot{root, v})
	buf.WriteByte('\n')
	return buf.Bytes()
}

// xmlRoot encodes v under a chosen root element name.
type xmlRoot struct {
	name string
	v    any
}

func (x xmlRoot) MarshalXML(e *xml.Encoder, _ xml.StartElement) error {
	return e.EncodeElement(x.v, xml.StartElement{Name: xml.Name{Local: x.name}})
}
