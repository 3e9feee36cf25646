package ipp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"
)

// Config tunes a Client. The zero value means the documented defaults.
type Config struct {
	// User is the requesting-user-name of every request (default
	// "lodge"). Printers show a job's name only to its owner (CUPS's
	// default JobPrivateValues), so the jobs a Client sends and the ones
	// it looks for must be asked for under the same name.
	User string
	// MaxResponseBytes is the largest response body read (default 4
	// MiB); a longer one is an error.
	MaxResponseBytes int64
	// Limits bound the decoding of responses.
	Limits Limits
	// HTTP carries the requests (default: a client of its own, TLS
	// verified against the system's roots for ipps).
	HTTP *http.Client
}

// Client sends requests to one printer. It is safe for concurrent use.
type Client struct {
	printer string // the printer-uri, as configured
	url     string // where requests are POSTed
	cfg     Config
	reqID   atomic.Uint32
}

// New returns a client of the printer at uri: ipp://host[:port]/path
// (HTTP, port 631 by default) or ipps:// (HTTPS, port 443 by default,
// RFC 7472). Credentials in the URI are refused (they would end up in
// logs).
func New(uri string, cfg Config) (*Client, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("printer %q: %w", uri, err)
	}
	scheme, port := "", ""
	switch u.Scheme {
	case "ipp":
		scheme, port = "http", "631"
	case "ipps":
		scheme, port = "https", "443"
	default:
		return nil, fmt.Errorf("printer %q: the scheme must be ipp or ipps", uri)
	}
	switch {
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("printer %q: no host", uri)
	case u.User != nil:
		return nil, fmt.Errorf("printer %q: credentials in the URI are not supported", u.Redacted())
	case u.Path == "" || u.Path == "/":
		return nil, fmt.Errorf("printer %q: no printer path (for CUPS /printers/NAME)", uri)
	case u.Fragment != "":
		return nil, fmt.Errorf("printer %q: a fragment is not part of a printer URI", uri)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("printer %q: port %q is not 1 to 65535", uri, p)
		}
		port = p
	}
	h := url.URL{Scheme: scheme, Host: net.JoinHostPort(u.Hostname(), port), Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
	if cfg.User == "" {
		cfg.User = "lodge"
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 4 << 20
	}
	if cfg.HTTP == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil // a printer is reached directly
		t.ExpectContinueTimeout = time.Second
		cfg.HTTP = &http.Client{Transport: t}
	}
	return &Client{printer: uri, url: h.String(), cfg: cfg}, nil
}

// Printer returns the printer's URI.
func (c *Client) Printer() string { return c.printer }

// StatusError is a response whose status is not successful.
type StatusError struct {
	Printer string
	Op      uint16
	Status  uint16
	Message string // status-message, when the printer gave one
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("ipp %s to %s: %s", opName(e.Op), e.Printer, StatusName(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

var statusNames = map[uint16]string{
	0x0000: "successful-ok", 0x0001: "successful-ok-ignored-or-substituted-attributes", 0x0002: "successful-ok-conflicting-attributes",
	0x0400: "client-error-bad-request", 0x0401: "client-error-forbidden", 0x0402: "client-error-not-authenticated",
	0x0403: "client-error-not-authorized", 0x0404: "client-error-not-possible", 0x0405: "client-error-timeout",
	0x0406: "client-error-not-found", 0x0407: "client-error-gone", 0x0408: "client-error-request-entity-too-large",
	0x0409: "client-error-request-value-too-long", 0x040A: "client-error-document-format-not-supported",
	0x040B: "client-error-attributes-or-values-not-supported", 0x040C: "client-error-uri-scheme-not-supported",
	0x040D: "client-error-charset-not-supported", 0x040E: "client-error-conflicting-attributes",
	0x040F: "client-error-compression-not-supported", 0x0410: "client-error-compression-error",
	0x0411: "client-error-document-format-error", 0x0412: "client-error-document-access-error",
	0x0500: "server-error-internal-error", 0x0501: "server-error-operation-not-supported", 0x0502: "server-error-service-unavailable",
	0x0503: "server-error-version-not-supported", 0x0504: "server-error-device-error", 0x0505: "server-error-temporary-error",
	0x0506: "server-error-not-accepting-jobs", 0x0507: "server-error-busy", 0x0508: "server-error-job-canceled",
	0x0509: "server-error-multiple-document-jobs-not-supported",
}

// StatusName names a status code (RFC 8011 appendix B).
func StatusName(code uint16) string {
	if s, ok := statusNames[code]; ok {
		return s
	}
	return fmt.Sprintf("status 0x%04x", code)
}

func opName(op uint16) string {
	switch op {
	case OpPrintJob:
		return "Print-Job"
	case OpGetJobs:
		return "Get-Jobs"
	case OpGetJobAttributes:
		return "Get-Job-Attributes"
	}
	return fmt.Sprintf("operation 0x%04x", op)
}

// Request returns a request of the operation with the operation
// attributes every request starts with (RFC 8011 section 4.1.4, in that
// order: charset, natural language, printer-uri, requesting-user-name),
// then attrs.
func (c *Client) Request(op uint16, attrs ...Attribute) *Message {
	g := Group{Tag: TagOperation, Attrs: append([]Attribute{
		{"attributes-charset", []Value{Charset("utf-8")}},
		{"attributes-natural-language", []Value{Language("en")}},
		{"printer-uri", []Value{URI(c.printer)}},
		{"requesting-user-name", []Value{Name(c.cfg.User)}},
	}, attrs...)}
	return &Message{Major: 2, Minor: 0, Code: op, Groups: []Group{g}}
}

// Do sends a request (its RequestID is set here), followed by size
// bytes of doc when doc is not nil, and returns the response: an error
// when the HTTP status is not 200, the body is not an IPP message of at
// most MaxResponseBytes answering this request, or its status is not
// successful (*StatusError).
func (c *Client) Do(ctx context.Context, req *Message, doc io.Reader, size int64) (*Message, error) {
	req.RequestID = c.reqID.Add(1)
	head, err := req.AppendBinary(nil)
	if err != nil {
		return nil, err
	}
	body := io.Reader(bytes.NewReader(head))
	length := int64(len(head))
	if doc != nil {
		body, length = io.MultiReader(body, doc), length+size
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, body)
	if err != nil {
		return nil, err
	}
	hr.ContentLength = length
	hr.Header.Set("Content-Type", "application/ipp")
	if doc != nil {
		// a printer that refuses the request says so before the
		// document is sent
		hr.Header.Set("Expect", "100-continue")
	}
	resp, err := c.cfg.HTTP.Do(hr)
	if err != nil {
		var ue *url.Error // names the http URL: the printer's is said here
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("ipp %s to %s: %w", opName(req.Code), c.printer, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("ipp %s to %s: HTTP %s", opName(req.Code), c.printer, resp.Status)
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "application/ipp" {
		return nil, fmt.Errorf("ipp %s to %s: the answer is %q, not application/ipp", opName(req.Code), c.printer, resp.Header.Get("Content-Type"))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("ipp %s to %s: %w", opName(req.Code), c.printer, err)
	}
	if int64(len(data)) > c.cfg.MaxResponseBytes {
		return nil, fmt.Errorf("ipp %s to %s: the answer is larger than %d bytes", opName(req.Code), c.printer, c.cfg.MaxResponseBytes)
	}
	m, err := Decode(data, c.cfg.Limits)
	if err != nil {
		return nil, fmt.Errorf("ipp %s to %s: %w", opName(req.Code), c.printer, err)
	}
	if m.RequestID != req.RequestID {
		return nil, fmt.Errorf("ipp %s to %s: the answer is to request %d, not %d", opName(req.Code), c.printer, m.RequestID, req.RequestID)
	}
	if m.Code >= 0x0100 {
		e := &StatusError{Printer: c.printer, Op: req.Code, Status: m.Code}
		if g := m.Group(TagOperation); g != nil {
			if a := g.Get("status-message"); a != nil && (a.Values[0].Tag == TagText || a.Values[0].Tag == TagTextWithLang) {
				e.Message = a.Values[0].String()
			}
		}
		return m, e
	}
	return m, nil
}

// Job is what a printer tells of a job.
type Job struct {
	ID           int
	URI          string
	Name         string
	State        int
	StateReasons []string
	// Ignored names the attributes of a Print-Job the printer did not
	// support and ignored (its unsupported-attributes group).
	Ignored []string
}

// Done reports whether the job has ended: completed, canceled or
// aborted.
func (j Job) Done() bool { return j.State >= JobCanceled }

func jobOf(g *Group) Job {
	var j Job
	for _, a := range g.Attrs {
		v := a.Values[0]
		switch a.Name {
		case "job-id":
			if n, ok := v.Int(); ok {
				j.ID = int(n)
			}
		case "job-uri":
			j.URI = v.String()
		case "job-name":
			j.Name = v.String()
		case "job-state":
			if n, ok := v.Int(); ok {
				j.State = int(n)
			}
		case "job-state-reasons":
			for _, v := range a.Values {
				j.StateReasons = append(j.StateReasons, v.String())
			}
		}
	}
	return j
}

// jobAttributes are the attributes asked of jobs.
var jobAttributes = []Value{Keyword("job-id"), Keyword("job-uri"), Keyword("job-name"), Keyword("job-state"), Keyword("job-state-reasons")}

// PrintJob sends a document of size bytes and format (a MIME type:
// application/pdf) as a job named name, with the job template
// attributes given (sides, copies ...; a printer ignores those it does
// not support, as Job.Ignored tells), and returns the job the printer
// made.
func (c *Client) PrintJob(ctx context.Context, name, format string, template []Attribute, doc io.Reader, size int64) (Job, error) {
	req := c.Request(OpPrintJob,
		Attribute{"job-name", []Value{Name(name)}},
		Attribute{"document-format", []Value{MimeType(format)}})
	if len(template) > 0 {
		req.Groups = append(req.Groups, Group{Tag: TagJob, Attrs: template})
	}
	resp, err := c.Do(ctx, req, doc, size)
	if err != nil {
		return Job{}, err
	}
	g := resp.Group(TagJob)
	if g == nil {
		return Job{}, fmt.Errorf("ipp Print-Job to %s: the answer has no job attributes", c.printer)
	}
	j := jobOf(g)
	if j.ID <= 0 && j.URI == "" {
		return Job{}, fmt.Errorf("ipp Print-Job to %s: the answer names no job", c.printer)
	}
	if u := resp.Group(TagUnsupported); u != nil {
		for _, a := range u.Attrs {
			j.Ignored = append(j.Ignored, a.Name)
		}
	}
	if j.Name == "" {
		j.Name = name
	}
	return j, nil
}

// GetJobs lists the printer's jobs: which is "all", "completed" or
// "not-completed" (RFC 8011; "all" from PWG 5100.7); mine limits them
// to the Client's User's.
func (c *Client) GetJobs(ctx context.Context, which string, mine bool) ([]Job, error) {
	req := c.Request(OpGetJobs,
		Attribute{"which-jobs", []Value{Keyword(which)}},
		Attribute{"my-jobs", []Value{Boolean(mine)}},
		Attribute{"requested-attributes", jobAttributes})
	resp, err := c.Do(ctx, req, nil, 0)
	if err != nil {
		return nil, err
	}
	var jobs []Job
	for i := range resp.Groups {
		if resp.Groups[i].Tag == TagJob {
			jobs = append(jobs, jobOf(&resp.Groups[i]))
		}
	}
	return jobs, nil
}

// GetJob returns one job of the printer.
func (c *Client) GetJob(ctx context.Context, id int) (Job, error) {
	req := c.Request(OpGetJobAttributes,
		Attribute{"job-id", []Value{Integer(int32(id))}},
		Attribute{"requested-attributes", jobAttributes})
	resp, err := c.Do(ctx, req, nil, 0)
	if err != nil {
		return Job{}, err
	}
	g := resp.Group(TagJob)
	if g == nil {
		return Job{}, fmt.Errorf("ipp Get-Job-Attributes to %s: the answer has no job attributes", c.printer)
	}
	return jobOf(g), nil
}
