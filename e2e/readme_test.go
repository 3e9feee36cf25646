package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// A README command block is an indented code block, or a fenced one whose
// info string is empty, sh, bash, shell or console; other fenced blocks
// (json, xml, ...) are examples, not commands.
var fenceRE = regexp.MustCompile("^```\\s*(\\S*)")

// readmeBlocks returns README's command blocks, without their indentation.
func readmeBlocks(readme string) []string {
	var blocks []string
	var cur []string
	fenced, fencedCmd, prevBlank := false, false, true
	flush := func() {
		for len(cur) > 0 && strings.TrimSpace(cur[len(cur)-1]) == "" {
			cur = cur[:len(cur)-1]
		}
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
		}
		cur = nil
	}
	for _, line := range strings.Split(readme, "\n") {
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			if fenced {
				if fencedCmd {
					flush()
				}
				fenced = false
			} else {
				fenced = true
				switch m[1] {
				case "", "sh", "bash", "shell", "console":
					fencedCmd = true
				default:
					fencedCmd = false
				}
			}
			cur, prevBlank = nil, false
			continue
		}
		switch {
		case fenced:
			if fencedCmd {
				cur = append(cur, line)
			}
		case strings.HasPrefix(line, "    ") && (prevBlank || len(cur) > 0):
			cur = append(cur, line[4:])
		case strings.HasPrefix(line, "\t") && (prevBlank || len(cur) > 0):
			cur = append(cur, line[1:])
		case strings.TrimSpace(line) == "" && len(cur) > 0:
			cur = append(cur, "") // a blank line inside an indented block
		default:
			flush()
		}
		prevBlank = strings.TrimSpace(line) == ""
	}
	flush()
	return blocks
}

// TestReadmeBlocks: which parts of a README count as command blocks.
func TestReadmeBlocks(t *testing.T) {
	f := func(md string, want ...string) {
		t.Helper()
		if got := readmeBlocks(md); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%q: blocks %q, want %q", md, got, want)
		}
	}
	f("text\n\n    a\n      b\n\n    c\nend\n", "a\n  b\n\nc\n")
	f("text\n    not code: no blank line before\n")
	f("- item\n\n  two spaces: prose\n")
	f("x\n\n```\nplain\n```\n\n```sh\nsh\n```\n```json\n{}\n```\n", "plain\n", "sh\n")
	f("\n\ttab\n\n    one\n\ntext\n\n    two\n", "tab\n\none\n", "two\n")
	f("")
}

// readmeExpect is what the README blocks that contain a marker must print
// (their output and the files they write, joined), beyond exiting with 0.
// Every marker must match a block: a test whose checks stop applying fails.
var readmeExpect = []struct {
	marker, want string
	times        int // how many times want appears at least; 0 for once
}{
	{"check -columns", "Jo Citizen,10 Jones St,Melbourne,VIC,3000,matched,AUS,\n", 0},
	{"check -columns", "Joe Blogs,10 Jones St,Smithville,NSW,2987,unmatched,AUS,", 0},
	{"check -detail", `"address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"],"status":"matched"`, 0},
	{"/apiv2/jsonrpc", `{"status":"unmatched","nation":"AUS","address":["Joe Blogs","10 Jones St","Smithville NSW 2987"]}`, 0},
	{"/apiv2/jsonrpc", `"status":"matched","nation":"AUS","address":"Jo Citizen\n3/72 Charles St\nSt Kilda VIC 3182"`, 0},
	{"/apiv2/jsonrpc", `"status":"international","nation":"GBR"`, 0},
	{"direct_upload", "letter.pdf ", 0},
	{"direct_upload", "metadata.json ", 0},
	{"end_session", `"result":"ok"`, 0},
	{"mpf_upload", `"result":"ok"`, 2}, // end_session's and its own
}

// TestREADMECommands runs every command block of README.md with bash, as
// a reader would paste it, in a temporary tree that looks like the
// repository (links to its files, ../shared beside it): each block must
// exit with 0, and print what readmeExpect says. The input files the
// blocks name are made first. The long-running `go run ./cmd/lodge serve
// -demo` is started and waited for, and the curl command it prints is run
// too; the blocks after it talk to it, with KEY set to the key it printed.
//
// The only changes made to the blocks: the port. README's serve binds
// :8443 and its clients call localhost:8443; a fixed port on a shared
// machine makes a test fail by chance, so serve gets `-addr :0` and the
// clients the port it got. scripts/test is not run: it runs every test,
// this one included.
func TestREADMECommands(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to run README's commands: %v", tool, err)
		}
	}
	root := sharedDir(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(string(readme))
	if len(blocks) == 0 {
		t.Fatal("no command block found in README.md")
	}
	work := readmeTree(t, root)
	readmeInputs(t, root, work)
	env := append(os.Environ(), "GOFLAGS=-trimpath "+os.Getenv("GOFLAGS"))

	var server *proc // the demo server, once a block started it
	port := ""
	used := make([]bool, len(readmeExpect))
	for i, block := range blocks {
		name := fmt.Sprintf("block %d (%s)", i+1, strings.SplitN(block, "\n", 2)[0])
		// A block with a server or an exempt command in it is a list of
		// separate commands: run line by line.
		lines := []string{block}
		if regexp.MustCompile(`(?m)^(go run ./cmd/lodge serve|scripts/test)\b`).MatchString(block) {
			lines = strings.Split(strings.TrimSpace(block), "\n")
		}
		var out bytes.Buffer
		for _, cmd := range lines {
			switch {
			case strings.HasPrefix(cmd, "scripts/test"):
				// exempt only while it runs every package's tests, this one included
				b, err := os.ReadFile(filepath.Join(root, "scripts", "test"))
				if err != nil || !regexp.MustCompile(`(?m)^go test .*\./\.\.\.`).Match(b) {
					t.Errorf("%s: scripts/test no longer runs `go test ./...` (%v): run %q here", name, err, cmd)
					continue
				}
				t.Logf("%s: not running %q: it runs `go test ./...`, this test included, and would recurse; CI runs it (.ci/run)", name, cmd)
				continue
			case strings.HasPrefix(cmd, "go run ./cmd/lodge serve"):
				if server != nil {
					t.Fatalf("%s: a second server", name)
				}
				var printed string
				server, port, printed = readmeServe(t, work, env, strings.Replace(cmd, "./cmd/lodge serve", "./cmd/lodge serve -addr :0", 1))
				key := keyRE.FindStringSubmatch(printed)
				if key == nil {
					t.Fatalf("%s: no key in the curl command it printed: %q\n%s", name, printed, server.logs())
				}
				env = append(env, "KEY="+key[1])
				// the command it prints works as pasted
				got, err := readmeRun(work, env, printed)
				if err != nil || !strings.Contains(got, `"status":"matched"`) {
					t.Errorf("%s: the curl command it printed: %v\n%s\n%s", name, err, printed, got)
				}
				continue
			}
			if strings.Contains(cmd, "localhost:8443") {
				if server == nil {
					t.Fatalf("%s needs the server `go run ./cmd/lodge serve -demo` starts, and no block before it started one", name)
				}
				cmd = strings.ReplaceAll(cmd, "localhost:8443", "localhost:"+port)
			}
			got, err := readmeRun(work, env, cmd)
			out.WriteString(got)
			if err != nil {
				t.Errorf("%s: %v\n%s\n%s", name, err, cmd, got)
			}
		}
		// the files it wrote count as its output
		for _, w := range regexp.MustCompile(`> (\S+)`).FindAllStringSubmatch(block, -1) {
			b, err := os.ReadFile(filepath.Join(work, w[1]))
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			out.Write(b)
		}
		for j, e := range readmeExpect {
			if !strings.Contains(block, e.marker) {
				continue
			}
			used[j] = true
			if n := strings.Count(out.String(), e.want); n < max(e.times, 1) {
				t.Errorf("%s: output has %q %d times, want %d:\n%s", name, e.want, n, max(e.times, 1), out.String())
			}
		}
	}
	for j, e := range readmeExpect {
		if !used[j] {
			t.Errorf("no README block contains %q any more: update readmeExpect", e.marker)
		}
	}
	if server == nil {
		t.Errorf("no README block starts the server")
	} else {
		server.stop(syscall.SIGTERM)
	}
}

// readmeTree makes the directory README's commands run in: links to every
// top-level entry of the repository (but its state: lodge-data, reference,
// a built lodge, .git), so `go run ./cmd/lodge` builds the same source,
// and ../shared linked to the shared reference data's folder, so the index
// builds from the fixture data without a download.
func readmeTree(t *testing.T, root string) string {
	t.Helper()
	dir := t.TempDir()
	work := filepath.Join(dir, "main")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Name() {
		case ".git", "lodge-data", "reference", "lodge":
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	data, err := testenv.DataDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(data), filepath.Join(dir, "shared")); err != nil {
		t.Fatal(err)
	}
	return work
}

// readmeInputs writes the files README's commands name.
func readmeInputs(t *testing.T, root, work string) {
	t.Helper()
	meta, err := os.ReadFile(filepath.Join(root, "upload", "metadata", "testdata", "single_addressed.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{
		"letter.pdf":    testdoc.PDF(1, 0),
		"metadata.json": meta,
		"addresses.csv": []byte("name,street,suburb,state,postcode\n" +
			"Jo Citizen,10 Jones St,Melbourne,VIC,3000\n" +
			"Joe Blogs,10 Jones St,Smithville,NSW,2987\n"),
		"addresses.jsonl": []byte(`{"address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}` + "\n" +
			`{"address":"10 Downing St, London SW1A 2AA, UK"}` + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(work, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readmeRun runs a README command with bash (exiting at the first failing
// command) and returns its output, stdout and stderr together.
func readmeRun(dir string, env []string, script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	// its own process group, killed whole: go run leaves its program
	// running when only go is killed
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// readmeServe starts README's long-running serve command and waits until
// it serves; it returns the port it got and the curl command it printed.
func readmeServe(t *testing.T, dir string, env []string, script string) (*proc, string, string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	port, printed := "", ""
	p, err := launch(t, cmd, func(line string) bool {
		if strings.HasPrefix(line, "  curl ") {
			printed = strings.TrimSpace(line)
		}
		m := servingRE.FindStringSubmatch(line)
		if m == nil {
			return false
		}
		port = m[1][strings.LastIndexByte(m[1], ':')+1:]
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if printed == "" {
		t.Fatalf("%s printed no curl command:\n%s", script, p.logs())
	}
	return p, port, printed
}
