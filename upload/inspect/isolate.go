package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/lodge-mail/lodge/internal/isolate"
)

const (
	childEnv      = "LODGE_INSPECT_CHILD"
	childLimitEnv = "LODGE_INSPECT_LIMITS"
	childArg      = "lodge-inspect-child"
	childMaxStack = 64 << 20
	childOutput   = 64 << 10 // stdout and stderr kept from the child
	childGrace    = 2 * time.Second
	childProcs    = "2"
)

// childInspect is what the child runs. Tests replace it (in the child) to
// make the child crash, hang or eat memory.
var childInspect = Inspect

type childResult struct {
	Document
	Error      string   `json:"error,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

// PagesIsolated is InspectIsolated's page count.
func PagesIsolated(ctx context.Context, kind Kind, path string, lim Limits) (int, error) {
	d, err := InspectIsolated(ctx, kind, path, lim)
	return d.Pages, err
}

// InspectIsolated is Inspect in a child process, so that a document
// that defeats the parser's own bounds costs a child, not the server. The child is this executable (os.Executable) started with the
// environment variable LODGE_INSPECT_CHILD=1 and the arguments
// "lodge-inspect-child <kind> <path>"; main must call
// RunChildIfRequested first thing for that to work (cmd/lodge/main.go
// does). The child
//
//   - is killed when ctx is done or lim.Timeout has passed (and exits by
//     itself shortly after lim.Timeout if it is orphaned);
//   - runs with GOMEMLIMIT at three quarters of lim.MaxMemory, and on
//     Linux with RLIMIT_AS set to its address space at start plus
//     lim.MaxMemory, so that it fails to allocate (and dies) instead of
//     growing;
//   - has a goroutine stack limit of 64 MiB (debug.SetMaxStack), so that
//     runaway recursion is a quick fatal error;
//   - runs with GOMAXPROCS=2 and an environment holding only GO*
//     variables and PATH (to find Ghostscript): nothing secret of the
//     server's reaches it;
//   - answers with one JSON line on stdout.
//
// A child that crashes, is killed or answers nothing gives an ErrLimit
// error "document could not be inspected: ...". Errors the child reports
// keep their categories. If ctx itself is cancelled, ctx.Err() is
// returned.
//
// Each call starts one process, and holds one of the lim.MaxChildren
// process-wide slots while it runs (see AcquireChild): past them it waits
// up to lim.ChildWait, then fails with ErrBusy.
func InspectIsolated(ctx context.Context, kind Kind, path string, lim Limits) (Document, error) {
	lim = lim.WithDefaults()
	switch kind {
	case PDF, PostScript, XPS:
	default:
		return Document{}, typeErr("pages are counted for PDF, PostScript and XPS documents, not %s", kind.label())
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Document{}, err
	}
	if _, err := os.Stat(abs); err != nil {
		return Document{}, err
	}
	exe, err := os.Executable()
	if err != nil {
		return Document{}, fmt.Errorf("document could not be inspected: %w", err)
	}
	lj, _ := json.Marshal(lim)
	release, err := AcquireChild(ctx, lim)
	if err != nil {
		return Document{}, err
	}
	defer release()
	tctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, exe, childArg, string(kind), abs)
	cmd.Env = append(isolate.Environ(childProcs),
		childEnv+"=1",
		childLimitEnv+"="+string(lj),
		"GOMEMLIMIT="+strconv.FormatInt(lim.MaxMemory/4*3, 10),
	)
	stdout, stderr := isolate.Capped{Max: childOutput}, isolate.Capped{Max: childOutput}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, &stdout, &stderr
	cmd.WaitDelay = time.Second
	isolate.KillGroup(cmd) // with the processes it started (Ghostscript)
	runErr := cmd.Run()
	if err := ctx.Err(); err != nil {
		return Document{}, err
	}
	if tctx.Err() != nil {
		if kind == PostScript {
			return Document{}, limitErr("document could not be inspected: it took longer than %v (a PostScript program that never ends?)", lim.Timeout)
		}
		return Document{}, limitErr("document could not be inspected: it took longer than %v", lim.Timeout)
	}
	if res, ok := lastJSON(stdout.Bytes()); ok && (res.Pages > 0 || res.Error != "") {
		if res.Error != "" {
			return Document{}, errorFromWire(res.Error, res.Categories)
		}
		return res.Document, nil
	}
	return Document{}, limitErr("document could not be inspected: %s", isolate.DescribeCrash(inspectorChild(lim), runErr, stderr.String()))
}

func lastJSON(out []byte) (childResult, bool) {
	var res childResult
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	last := lines[len(lines)-1]
	if len(last) == 0 || json.Unmarshal(last, &res) != nil {
		return res, false
	}
	return res, true
}

func inspectorChild(lim Limits) isolate.Child {
	return isolate.Child{Who: "the inspector", Hint: "is inspect.RunChildIfRequested called at the top of main?", Stack: childMaxStack, Memory: lim.MaxMemory}
}

// RunChildIfRequested turns this process into a PagesIsolated child when
// it was started as one, and otherwise returns at once. A program that
// uses PagesIsolated calls it first thing in main (and tests in TestMain),
// before flags are parsed or anything else starts:
//
//	func main() {
//		inspect.RunChildIfRequested()
//		...
//	}
//
// In a child it never returns: it counts the pages, prints one JSON line
// and exits.
func RunChildIfRequested() {
	if os.Getenv(childEnv) != "1" || len(os.Args) != 4 || os.Args[1] != childArg {
		return
	}
	os.Exit(runChild(Kind(os.Args[2]), os.Args[3]))
}

func runChild(kind Kind, path string) int {
	var lim Limits
	if err := json.Unmarshal([]byte(os.Getenv(childLimitEnv)), &lim); err != nil {
		return answer(childResult{Error: "bad inspector limits", Categories: []string{"malformed"}})
	}
	lim = lim.WithDefaults()
	debug.SetMaxStack(childMaxStack)
	if err := isolate.LimitAddressSpace(lim.MaxMemory); err != nil {
		return answer(childResult{Error: "document could not be inspected: cannot limit memory: " + err.Error(), Categories: []string{"limit"}})
	}
	// Orphaned (the parent died before killing it): stop by itself.
	time.AfterFunc(lim.Timeout+childGrace, func() {
		answer(childResult{Error: fmt.Sprintf("document could not be inspected: it took longer than %v", lim.Timeout), Categories: []string{"limit"}})
		os.Exit(3)
	})
	f, err := os.Open(path)
	if err != nil {
		return answer(childResult{Error: "document could not be inspected: " + err.Error(), Categories: []string{"malformed"}})
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return answer(childResult{Error: "document could not be inspected: " + err.Error(), Categories: []string{"malformed"}})
	}
	d, err := childInspect(kind, f, st.Size(), lim)
	if err != nil {
		return answer(childResult{Error: err.Error(), Categories: categoriesOf(err)})
	}
	return answer(childResult{Document: d})
}

func answer(res childResult) int {
	b, _ := json.Marshal(res)
	os.Stdout.Write(append(b, '\n'))
	return 0
}
