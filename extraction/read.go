package extraction

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lodge-mail/lodge/internal/isolate"
	"github.com/lodge-mail/lodge/internal/pagetext"
	"github.com/lodge-mail/lodge/internal/pdf"
	"github.com/lodge-mail/lodge/internal/xps"
)

// The child that reads a document: this executable, started with
// LODGE_EXTRACT_CHILD=1 and the arguments "lodge-extract-child <kind>
// <path>", the request (zone, marker, limits) as JSON in
// LODGE_EXTRACT_REQUEST. It writes one JSON line per page (a PageRead),
// then one closing line.
const (
	childEnv     = "LODGE_EXTRACT_CHILD"
	childReqEnv  = "LODGE_EXTRACT_REQUEST"
	childArg     = "lodge-extract-child"
	childStack   = 64 << 20
	maxLineBytes = 4 << 20 // one page's answer
	childGrace   = 2 * time.Second
)

// request is what the parent asks of the child.
type request struct {
	Zone    pagetext.Rect `json:"zone"`
	Marker  string        `json:"marker,omitempty"`
	Timeout time.Duration `json:"timeout"`
	Memory  int64         `json:"memory"`
}

// closing is the child's last line: the page count, or why it stopped.
type closing struct {
	Done  bool   `json:"done"`
	Pages int    `json:"pages"`
	Error string `json:"error,omitempty"`
}

// docError is a problem of the customer's document (it cannot be read
// at all): its pages become one held letter, rather than the stage
// being retried.
type docError struct{ msg string }

func (e *docError) Error() string { return e.msg }

// readPages reads every page of a document (kind pdf or xps) in a child
// process bounded by lim, and returns what each page's window zone holds.
func readPages(ctx context.Context, kind, path string, req request, wantPages int) ([]PageRead, int64, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, 0, err
	}
	rj, _ := json.Marshal(req)
	tctx, cancel := context.WithTimeout(ctx, req.Timeout+childGrace)
	defer cancel()
	cmd := exec.CommandContext(tctx, exe, childArg, kind, path)
	cmd.Env = append(isolate.Environ("1"),
		childEnv+"=1",
		childReqEnv+"="+string(rj),
		"GOMEMLIMIT="+strconv.FormatInt(req.Memory/4*3, 10),
	)
	stderr := isolate.Capped{Max: 64 << 10}
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	cmd.WaitDelay = time.Second
	isolate.KillGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	pages := make([]PageRead, 0, max(wantPages, 0))
	var end closing
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) > 0 && line[0] == '{' && strings.HasPrefix(string(line), `{"done"`) {
			if json.Unmarshal(line, &end) != nil {
				end = closing{}
			}
			break
		}
		var pr PageRead
		if err := json.Unmarshal(line, &pr); err != nil {
			break
		}
		pages = append(pages, pr)
	}
	io.Copy(io.Discard, out)
	runErr := cmd.Wait()
	var rss int64 // the child's peak resident memory, bytes
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = ru.Maxrss << 10
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, rss, err
	}
	switch {
	case tctx.Err() != nil:
		return nil, rss, &docError{fmt.Sprintf("reading its text took longer than %v", req.Timeout)}
	case end.Error != "":
		return nil, rss, &docError{end.Error}
	case !end.Done:
		return nil, rss, &docError{"its text could not be read: " + isolate.DescribeCrash(isolate.Child{Who: "the reader", Hint: "is extraction.RunChildIfRequested called at the top of main?", Stack: childStack, Memory: req.Memory}, runErr, stderr.String())}
	case end.Pages != len(pages):
		return nil, rss, fmt.Errorf("the text reader answered for %d pages of %d", len(pages), end.Pages)
	}
	return pages, rss, nil
}

// RunChildIfRequested turns this process into the text reader child when
// it was started as one, and otherwise returns at once. main calls it
// first thing (cmd/lodge does), as do the TestMains of packages whose
// tests extract.
func RunChildIfRequested() {
	if os.Getenv(childEnv) != "1" || len(os.Args) != 4 || os.Args[1] != childArg {
		return
	}
	os.Exit(runChild(os.Args[2], os.Args[3], os.Stdout))
}

func runChild(kind, path string, stdout io.Writer) int {
	w := bufio.NewWriterSize(stdout, 64<<10)
	defer w.Flush()
	enc := json.NewEncoder(w)
	fail := func(msg string) int {
		enc.Encode(closing{Error: msg})
		return 0
	}
	var req request
	if err := json.Unmarshal([]byte(os.Getenv(childReqEnv)), &req); err != nil {
		return fail("bad request to the text reader")
	}
	debug.SetMaxStack(childStack)
	if err := isolate.LimitAddressSpace(req.Memory); err != nil {
		return fail("cannot limit the text reader's memory: " + err.Error())
	}
	deadline := time.Now().Add(req.Timeout)
	time.AfterFunc(req.Timeout+childGrace/2, func() { os.Exit(3) }) // orphaned
	f, err := os.Open(path)
	if err != nil {
		return fail(err.Error())
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail(err.Error())
	}
	var (
		n        int
		pageText func(i int, zone *pagetext.Rect, p *pagetext.Page) error
	)
	switch kind {
	case "pdf":
		d, err := pdf.Open(f, st.Size(), pdf.Limits{Timeout: req.Timeout})
		if err != nil {
			return fail(err.Error())
		}
		n, pageText = d.NumPages(), d.PageText
	case "xps":
		d, err := xps.Open(f, st.Size(), xps.Limits{Timeout: req.Timeout})
		if err != nil {
			return fail(err.Error())
		}
		n, pageText = d.NumPages(), d.PageText
	default:
		return fail(kind + " documents are not read for letters")
	}
	var (
		page pagetext.Page
		buf  []pagetext.Char
		pr   PageRead
	)
	zone := band(req.Zone)
	pzone := &zone
	if req.Marker != "" {
		pzone = nil // the marker may be anywhere on the page
	}
	marker := foldLine(req.Marker)
	for i := range n {
		if time.Now().After(deadline) {
			return fail(fmt.Sprintf("reading its text took longer than %v (%d of %d pages read)", req.Timeout, i, n))
		}
		pr = PageRead{}
		if err := pageText(i, pzone, &page); err != nil {
			pr.Err = err.Error()
		} else {
			pr.Lines, buf = lines(page.Chars, req.Zone, buf)
			for _, r := range page.Images {
				if r.Intersects(req.Zone) {
					pr.Image = true
				}
			}
			if marker != "" {
				pr.Marker = hasMarker(page.Chars, marker)
			}
		}
		if err := enc.Encode(&pr); err != nil {
			return 1
		}
	}
	enc.Encode(closing{Done: true, Pages: n})
	return 0
}

// hasMarker reports whether a page's text, in drawing order and folded
// as foldLine folds, holds the marker.
func hasMarker(chars []pagetext.Char, marker string) bool {
	var b strings.Builder
	for _, c := range chars {
		b.WriteString(c.Text)
		b.WriteByte(' ') // word breaks are not known here: fold them all
	}
	return strings.Contains(strings.ReplaceAll(foldLine(b.String()), " ", ""), strings.ReplaceAll(marker, " ", ""))
}
