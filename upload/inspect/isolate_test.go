package inspect

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/isolate"
	"github.com/lodge-mail/lodge/internal/testdoc"
)

// TestMain makes the test binary a PagesIsolated child when started as
// one, so the isolation is exercised for real. In the child, documents
// starting with "TEST-" make it misbehave on purpose.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		childInspect = misbehave
	}
	RunChildIfRequested()
	if raceEnabled {
		// Children exit at once rather than after the race detector's
		// default second of grace.
		os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	os.Exit(m.Run())
}

var sink [][]byte

func misbehave(kind Kind, r io.ReaderAt, size int64, lim Limits) (Document, error) {
	head := make([]byte, 4096)
	n, _ := r.ReadAt(head, 0)
	if fifo, ok := strings.CutPrefix(string(head[:n]), "TEST-BLOCK "); ok {
		// Blocks until the test writes a byte into the named pipe.
		f, err := os.Open(fifo)
		if err != nil {
			return Document{}, err
		}
		defer f.Close()
		if _, err := f.Read(make([]byte, 1)); err != nil {
			return Document{}, err
		}
		return Document{Pages: 1}, nil
	}
	switch string(head[:min(n, 16)]) {
	case "TEST-OVERFLOW":
		return Document{Pages: recurse(1)}, nil
	case "TEST-HANG":
		for {
			time.Sleep(time.Hour)
		}
	case "TEST-SPIN":
		for i := 0; ; i++ {
			_ = i
		}
	case "TEST-OOM":
		for {
			b := make([]byte, 8<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			sink = append(sink, b)
		}
	case "TEST-PANIC":
		panic("deliberate")
	case "TEST-EXIT":
		os.Exit(7)
	case "TEST-GARBAGE":
		os.Stdout.WriteString("not json\n")
		os.Exit(0)
	}
	return Inspect(kind, r, size, lim)
}

func recurse(n int) int {
	var pad [1024]byte
	pad[n%1024] = byte(n)
	return recurse(n+1) + int(pad[0])
}

func TestPagesIsolated(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f := func(name string, kind Kind, data []byte, lim Limits, want int, wantErr error, msg string) {
		t.Helper()
		n, err := PagesIsolated(context.Background(), kind, write(strings.ReplaceAll(name, " ", "_"), data), lim)
		if n != want || !errors.Is(err, wantErr) || err != nil && !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %d, %v; want %d, %v containing %q", name, n, err, want, wantErr, msg)
		}
	}
	cat := "<< /Type /Catalog /Pages 2 0 R >>"
	f("1-page PDF", PDF, testdoc.OnePagePDF(), Limits{}, 1, nil, "")
	f("3-page PDF", PDF, testdoc.ThreePagePDF(), Limits{}, 3, nil, "")
	f("xref stream PDF", PDF, testdoc.XrefStreamPDF(), Limits{}, 4, nil, "")
	f("PostScript (its DSC comments say 3 pages, it prints 1)", PostScript, []byte(psAtEnd), Limits{}, 1, nil, "")
	f("XPS", XPS, twoPageXPS(t), Limits{}, 2, nil, "")
	f("cyclic page tree", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [2 0 R] >>"), Limits{}, 0, ErrMalformed, "page tree has a cycle")
	f("limits reach the child", PDF, testdoc.ThreePagePDF(), Limits{MaxPages: 2}, 0, ErrLimit, "more than 2 pages")
	f("encrypted object streams", PDF, bytes.Replace(testdoc.XrefStreamPDF(), []byte("/Root 1 0 R"), []byte("/Root 1 0 R /Encrypt << >>"), 1),
		Limits{}, 0, ErrEncrypted, "encrypted")
	u, err := os.ReadFile(filepath.Join(encryptedDir, "u128aes.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	f("needs a user password", PDF, u, Limits{}, 0, ErrEncrypted, "encrypted: opening it needs a password")
	letter := testdoc.PDFWith("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /MediaBox [0 0 612 792] >>", "<< /Type /Page >>")
	if d, err := InspectIsolated(context.Background(), PDF, write("letter.pdf", letter), Limits{}); err != nil ||
		d.Pages != 1 || len(d.NotA4) != 1 || d.NotA4[0] != (PageRun{0, 0, 216, 279}) || d.NotA4Pages != 1 {
		t.Errorf("page sizes from the child: %+v, %v", d, err)
	}
	f("PostScript with no DSC", PostScript, []byte("%!\nshowpage\n"), Limits{}, 1, nil, "")
	f("PostScript that never ends", PostScript, []byte("%!PS\n{ } loop\n"), Limits{Timeout: time.Second}, 0, ErrLimit, "took longer than 1s (a PostScript program that never ends?)")

	if raceEnabled {
		// The race detector's shadow memory for a 64 MiB stack may not fit
		// under RLIMIT_AS: then the child dies of that first.
		n, err := PagesIsolated(context.Background(), PDF, write("overflow.pdf", []byte("TEST-OVERFLOW")), Limits{})
		if n != 0 || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "stack") && !strings.Contains(err.Error(), "memory") {
			t.Errorf("stack overflow: %d, %v", n, err)
		}
	} else {
		f("stack overflow", PDF, []byte("TEST-OVERFLOW"), Limits{}, 0, ErrLimit, "document could not be inspected: it overflowed the 64 MiB stack")
	}
	f("hang", PDF, []byte("TEST-HANG"), Limits{Timeout: time.Second}, 0, ErrLimit, "document could not be inspected: it took longer than 1s")
	f("spin", PDF, []byte("TEST-SPIN"), Limits{Timeout: time.Second}, 0, ErrLimit, "took longer than 1s")
	if runtime.GOOS == "linux" {
		f("memory", PDF, []byte("TEST-OOM"), Limits{MaxMemory: 64 << 20}, 0, ErrLimit, "document could not be inspected: it needed more than 64 MiB of memory")
	}
	f("panic outside Pages", PDF, []byte("TEST-PANIC"), Limits{}, 0, ErrLimit, "document could not be inspected: the inspector crashed: panic: deliberate")
	f("exit", PDF, []byte("TEST-EXIT"), Limits{}, 0, ErrLimit, "document could not be inspected: the inspector exit status 7")
	f("garbage answer", PDF, []byte("TEST-GARBAGE"), Limits{}, 0, ErrLimit, "document could not be inspected: the inspector gave no answer")

	if _, err := PagesIsolated(context.Background(), PDF, filepath.Join(dir, "missing.pdf"), Limits{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := PagesIsolated(context.Background(), JSON, write("m.json", []byte("{}")), Limits{}); !errors.Is(err, ErrType) {
		t.Errorf("JSON: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(200 * time.Millisecond)
		cancel()
	}()
	if _, err := PagesIsolated(ctx, PDF, write("hang2.pdf", []byte("TEST-HANG")), Limits{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestChildEnviron: nothing but the Go runtime's variables reach the child.
func TestChildEnviron(t *testing.T) {
	t.Setenv("LODGE_SECRET", "hunter2")
	t.Setenv("GODEBUG", "x=1")
	t.Setenv("GOMEMLIMIT", "1")
	env := strings.Join(isolate.Environ(childProcs), "\n")
	if strings.Contains(env, "hunter2") || !strings.Contains(env, "GODEBUG=x=1") || strings.Contains(env, "GOMEMLIMIT=1\n") || !strings.Contains(env, "GOMAXPROCS=2") {
		t.Errorf("child environment:\n%s", env)
	}
}
