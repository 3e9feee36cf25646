// Command uploadbench measures lodge's upload interface against the
// performance targets of the upload issue, with the real binary, over
// loopback:
//
//   - a 1 GB PUT /direct_upload streams to disk with the server's resident
//     memory growing by at most 64 MB;
//   - loopback upload throughput is at least 300 MB/s;
//   - end_session of a statement run (one 20,000-page PDF, metadata with
//     10,000 letters of two pages each, postal addresses checked) takes at
//     most 3 s.
//
// It builds ./cmd/lodge (or takes -bin), starts
//
//	lodge serve -demo -quiet -data-dir DIR -addr 127.0.0.1:P1 -plain-addr 127.0.0.1:P2 -debug-addr 127.0.0.1:P3
//
// with the repository root as its working directory (so ../shared/data is
// the reference), reads the demo Bearer key it prints, and starts a
// baseline in a second process: this same program re-executed as
// "uploadbench baseline-serve", a minimal net/http server (HTTP/1.1, plain
// and HTTPS with lodge's own certificate) whose PUT handler copies the body
// into a file with one fsync at the end and answers 201. Both servers are
// stopped when the tool exits.
//
// # Large PUT (part "put")
//
// For each of -runs runs, each listener (plain, then HTTPS) and each
// server (lodge, baseline; their order alternates between runs so that both
// see the same noise), one client (Go net/http, 256 KiB write buffer, one
// keep-alive connection) PUTs -size bytes (default 1 GiB, lodge's default
// -max-upload-bytes) generated on the fly: a PDF header followed by
// incompressible filler. Lodge gets PUT /direct_upload/<epid>/big.pdf,
// always the same session and name so that each upload replaces the last
// and disk use stays at two copies. Measured per upload:
//
//	seconds, mb_per_s           from sending the request to reading the
//	                            201 (fsync included); MB = 10^6 bytes
//	rss_before_mb               the server's VmRSS before the upload
//	rss_peak_mb                 the largest VmRSS sampled every 10 ms
//	                            during it, or VmHWM if larger (the
//	                            high-water mark is reset through
//	                            /proc/PID/clear_refs before each upload)
//	rss_after_mb                VmRSS right after the answer
//	rss_growth_mb               rss_peak_mb - rss_before_mb
//
// and per run and listener the ratio lodge MB/s / baseline MB/s. The
// baseline does less than lodge (no SHA-1, no content check, no record),
// so a ratio below 1 is expected; the ratio tells the machine's noise
// apart from lodge's own cost.
//
// # Statement run (part "statement")
//
// One PDF of -pages pages (default 20,000; a valid cross-reference table,
// a page tree of -fanout kids per node, every page sharing one content
// stream and font) and, for each of -runs runs, metadata with -letters
// letters (default 10,000), letter i on pages 2i and 2i+1 of the PDF, with
// a reference and a postal address from internal/testref's Mix (seeded by
// the run number, so that no run is answered from the verdict cache of an
// earlier one): 70% Australian street addresses at real localities in
// assorted forms, 10% PO boxes, 8% misspelt or mis-postcoded localities,
// 7% malformed, 5% international. Each run opens a session, PUTs the PDF
// and the metadata over the plain listener and times
//
//	GET /publicinterface/end_session.json?session_id=<epid>
//
// which counts the PDF's pages, parses and plans the metadata, checks every
// postal address and commits the mailing. It then waits for the lodgement
// worker to finish the mailing (get_letter_status of the last letter's
// reference no longer "Received") before the next run, and reports that
// wait as lodged_after_s.
//
// # Output
//
// One JSON object on stdout: the parameters, every measurement, medians,
// and pass/fail against the targets. Progress goes to stderr. Exit status
// 0 when every target is met, 1 when one is missed, 2 when the benchmark
// could not run.
//
// # Running it
//
// From the repository root (../shared/data must be beside it):
//
//	go run ./bench/uploadbench > upload-bench.json
//	go run ./bench/uploadbench -parts statement -runs 5
//	go run ./bench/uploadbench -parts put -size 268435456
//
// -cpuprofile DIR saves a 10-second CPU profile (net/http/pprof through
// serve's -debug-addr) taken while the first large PUT of each listener
// runs and one while each end_session runs: go tool pprof BIN DIR/FILE.
// Page counting runs in a child process (PagesIsolated) that the server's
// profile does not see.
//
// The machine is assumed shared: the figures are for comparison against
// the baseline and between runs, not absolute.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lodge-mail/lodge/bench/internal/cpuprofile"
	"github.com/lodge-mail/lodge/bench/internal/stats"
	"github.com/lodge-mail/lodge/internal/testref"
)

type config struct {
	bin        string
	dataDir    string
	parts      string
	runs       int
	size       int64
	pages      int
	letters    int
	fanout     int
	cpuprofile string
	keep       bool
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "baseline-serve" {
		if err := baselineServe(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "baseline:", err)
			os.Exit(2)
		}
		return
	}
	var c config
	flag.StringVar(&c.bin, "bin", "", "lodge binary to run (default: go build ./cmd/lodge into a temporary directory)")
	flag.StringVar(&c.dataDir, "data-dir", "", "directory for the servers' data (default: a new temporary directory, removed at the end)")
	flag.StringVar(&c.parts, "parts", "put,statement", "what to measure: put, statement or both (comma-separated)")
	flag.IntVar(&c.runs, "runs", 3, "runs of each measurement")
	flag.Int64Var(&c.size, "size", 1<<30, "bytes of each large PUT")
	flag.IntVar(&c.pages, "pages", 20_000, "pages of the statement PDF")
	flag.IntVar(&c.letters, "letters", 10_000, "letters of the statement metadata (each on 2 pages: -pages must be at least twice this)")
	flag.IntVar(&c.fanout, "fanout", 100, "kids per page tree node of the statement PDF (0: one flat /Kids array)")
	flag.StringVar(&c.cpuprofile, "cpuprofile", "", "directory to save server CPU profiles in (empty: none)")
	flag.BoolVar(&c.keep, "keep", false, "keep the data directory")
	flag.Parse()
	if c.letters*2 > c.pages || c.runs < 1 || c.size < 1024 {
		fmt.Fprintln(os.Stderr, "uploadbench: want -runs >= 1, -size >= 1024 and -pages >= 2 x -letters")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	res, err := run(ctx, c)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "uploadbench:", err)
		os.Exit(2)
	}
	out, _ := json.MarshalIndent(res, "", "  ")
	fmt.Println(string(out))
	if !res.Pass {
		os.Exit(1)
	}
}

// Targets of the upload issue.
const (
	targetRSSGrowthMB = 64
	targetMBps        = 300
	targetEndSeconds  = 3
)

type result struct {
	GOMAXPROCS int             `json:"gomaxprocs"`
	CPUs       int             `json:"cpus"`
	Go         string          `json:"go"`
	Put        *putResult      `json:"put,omitempty"`
	Statement  *stmtResult     `json:"statement,omitempty"`
	Targets    map[string]any  `json:"targets"`
	Checks     map[string]bool `json:"checks"`
	Pass       bool            `json:"pass"`
}

type putRun struct {
	Run         int     `json:"run"`
	Server      string  `json:"server"`   // lodge or baseline
	Listener    string  `json:"listener"` // plain or https
	Seconds     float64 `json:"seconds"`
	MBps        float64 `json:"mb_per_s"`
	RSSBeforeMB float64 `json:"rss_before_mb"`
	RSSPeakMB   float64 `json:"rss_peak_mb"`
	RSSHWMMB    float64 `json:"rss_hwm_mb"` // -1 when the high-water mark could not be reset
	RSSAfterMB  float64 `json:"rss_after_mb"`
	GrowthMB    float64 `json:"rss_growth_mb"`
	Samples     int     `json:"rss_samples"`
	CPUSeconds  float64 `json:"server_cpu_s"` // user + system CPU time of the server process during the upload
}

type putSummary struct {
	LodgeMBps      []float64 `json:"lodge_mb_per_s"`
	BaselineMBps   []float64 `json:"baseline_mb_per_s"`
	Ratios         []float64 `json:"ratios"`
	LodgeMedian    float64   `json:"lodge_mb_per_s_median"`
	BaselineMedian float64   `json:"baseline_mb_per_s_median"`
	RatioMedian    float64   `json:"ratio_median"`
	MaxGrowthMB    float64   `json:"lodge_max_rss_growth_mb"`
}

type putResult struct {
	SizeBytes int64                  `json:"size_bytes"`
	Runs      []putRun               `json:"runs"`
	Summary   map[string]*putSummary `json:"summary"` // by listener
}

type stmtRun struct {
	Run          int     `json:"run"`
	PutPDFS      float64 `json:"put_pdf_s"`
	PutMetaS     float64 `json:"put_metadata_s"`
	EndSeconds   float64 `json:"end_session_s"`
	HTTPStatus   int     `json:"http_status"`
	Result       string  `json:"result"`
	Status       string  `json:"status"`
	LodgedAfterS float64 `json:"lodged_after_s"` // -1 when not seen within the wait
	LastLetter   string  `json:"last_letter_status"`
}

type stmtResult struct {
	Pages         int       `json:"pages"`
	Letters       int       `json:"letters"`
	Fanout        int       `json:"fanout"`
	PDFBytes      int       `json:"pdf_bytes"`
	MetadataBytes int       `json:"metadata_bytes"`
	Runs          []stmtRun `json:"runs"`
	EndSeconds    []float64 `json:"end_session_s"`
	EndMedian     float64   `json:"end_session_s_median"`
	EndMax        float64   `json:"end_session_s_max"`
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "uploadbench: "+format+"\n", args...)
}

func run(ctx context.Context, c config) (*result, error) {
	root, err := testref.RepoRoot()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "uploadbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if c.bin == "" {
		c.bin = filepath.Join(tmp, "lodge")
		logf("building ./cmd/lodge")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", c.bin, "./cmd/lodge")
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/lodge: %w", err)
		}
	} else if c.bin, err = filepath.Abs(c.bin); err != nil {
		return nil, err
	}
	if c.dataDir == "" {
		c.dataDir = filepath.Join(tmp, "data")
	} else if !c.keep {
		defer os.RemoveAll(c.dataDir)
	}
	if c.cpuprofile != "" {
		if err := os.MkdirAll(c.cpuprofile, 0o755); err != nil {
			return nil, err
		}
	}
	lodgeDir := filepath.Join(c.dataDir, "lodge")
	lg, err := startLodge(ctx, c.bin, root, lodgeDir)
	if err != nil {
		return nil, err
	}
	defer lg.stop()
	logf("lodge pid %d: https %s, plain %s, pprof %s", lg.pid(), lg.httpsURL, lg.plainURL, lg.debugURL)
	cl, err := newClient(filepath.Join(lodgeDir, "tls", "cert.pem"))
	if err != nil {
		return nil, err
	}
	res := &result{GOMAXPROCS: runtime.GOMAXPROCS(0), CPUs: runtime.NumCPU(), Go: runtime.Version(),
		Targets: map[string]any{"rss_growth_mb_max": targetRSSGrowthMB, "mb_per_s_min": targetMBps, "end_session_s_max": targetEndSeconds},
		Checks:  map[string]bool{}}
	if strings.Contains(c.parts, "put") {
		bl, err := startBaseline(ctx, filepath.Join(c.dataDir, "baseline"), filepath.Join(lodgeDir, "tls"))
		if err != nil {
			return nil, err
		}
		defer bl.stop()
		logf("baseline pid %d: https %s, plain %s", bl.pid(), bl.httpsURL, bl.plainURL)
		if res.Put, err = benchPut(ctx, c, cl, lg, bl); err != nil {
			return nil, err
		}
		for _, l := range []string{"plain", "https"} {
			s := res.Put.Summary[l]
			res.Checks["put_"+l+"_rss_growth"] = s.MaxGrowthMB <= targetRSSGrowthMB
			res.Checks["put_"+l+"_throughput"] = s.LodgeMedian >= targetMBps
		}
	}
	if strings.Contains(c.parts, "statement") {
		if res.Statement, err = benchStatement(ctx, c, cl, lg); err != nil {
			return nil, err
		}
		res.Checks["statement_end_session"] = res.Statement.EndMax <= targetEndSeconds
	}
	res.Pass = len(res.Checks) > 0
	for _, ok := range res.Checks {
		res.Pass = res.Pass && ok
	}
	return res, nil
}

// ---------------------------------------------------------------------------
// processes

type server struct {
	cmd      *exec.Cmd
	plainURL string
	httpsURL string
	debugURL string
	key      string
	mu       sync.Mutex
	logs     bytes.Buffer
	done     chan struct{}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.logs.Bytes()
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(b)
}

func (s *server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// start runs cmd, keeps its output and waits for ready to return true for
// a line of it.
func start(ctx context.Context, cmd *exec.Cmd, s *server, wait time.Duration, line func(string) bool) error {
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	s.cmd, s.done = cmd, make(chan struct{})
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { cmd.Wait(); pw.Close(); close(s.done) }()
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		closed := false
		for sc.Scan() {
			s.mu.Lock()
			s.logs.WriteString(sc.Text() + "\n")
			ok := line(sc.Text())
			s.mu.Unlock()
			if ok && !closed {
				closed = true
				close(ready)
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case <-ready:
		return nil
	case <-s.done:
		return fmt.Errorf("%s exited at start:\n%s", cmd.Path, s.log())
	case <-time.After(wait):
		s.stop()
		return fmt.Errorf("%s not ready after %v:\n%s", cmd.Path, wait, s.log())
	case <-ctx.Done():
		s.stop()
		return ctx.Err()
	}
}

func startLodge(ctx context.Context, bin, root, dir string) (*server, error) {
	var addrs [3]string
	for i := range addrs {
		a, err := freeAddr()
		if err != nil {
			return nil, err
		}
		addrs[i] = a
	}
	s := &server{httpsURL: "https://" + addrs[0], plainURL: "http://" + addrs[1], debugURL: "http://" + addrs[2]}
	cmd := exec.Command(bin, "serve", "-demo", "-quiet", "-data-dir", dir,
		"-addr", addrs[0], "-plain-addr", addrs[1], "-debug-addr", addrs[2])
	cmd.Dir = root
	keyRE := regexp.MustCompile(`Bearer (lk_[A-Za-z0-9_\-]+)`)
	logf("starting lodge serve (the first start builds the index)")
	err := start(ctx, cmd, s, 5*time.Minute, func(line string) bool {
		if m := keyRE.FindStringSubmatch(line); m != nil {
			s.key = m[1]
		}
		return strings.Contains(line, "serving")
	})
	if err != nil {
		return nil, err
	}
	if s.key == "" {
		s.stop()
		return nil, fmt.Errorf("lodge printed no demo key:\n%s", s.log())
	}
	return s, nil
}

func startBaseline(ctx context.Context, dir, tlsDir string) (*server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	plain, err := freeAddr()
	if err != nil {
		return nil, err
	}
	secure, err := freeAddr()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	s := &server{plainURL: "http://" + plain, httpsURL: "https://" + secure}
	cmd := exec.Command(exe, "baseline-serve", "-dir", dir, "-plain", plain, "-https", secure,
		"-cert", filepath.Join(tlsDir, "cert.pem"), "-key", filepath.Join(tlsDir, "key.pem"))
	err = start(ctx, cmd, s, 30*time.Second, func(line string) bool { return strings.HasPrefix(line, "serving") })
	return s, err
}

// baselineServe is the baseline server: PUT /<name> writes the body to
// dir/<name> (truncating it), fsyncs once and answers 201.
func baselineServe(args []string) error {
	fs := flag.NewFlagSet("baseline-serve", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory for the uploaded files")
	plain := fs.String("plain", "", "plain HTTP address")
	secure := fs.String("https", "", "HTTPS address")
	cert := fs.String("cert", "", "TLS certificate")
	key := fs.String("key", "", "TLS key")
	if err := fs.Parse(args); err != nil {
		return err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := filepath.Base(r.URL.Path)
		if r.Method != http.MethodPut || name == "/" || name == "." {
			http.Error(w, "PUT /<name>", http.StatusBadRequest)
			return
		}
		f, err := os.Create(filepath.Join(*dir, name))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		n, err := io.Copy(f, r.Body)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "%s %d\n", name, n)
	})
	// HTTP/1.1 only, as lodge (fasthttp) speaks
	noH2 := map[string]func(*http.Server, *tls.Conn, http.Handler){}
	errc := make(chan error, 2)
	lp, err := net.Listen("tcp", *plain)
	if err != nil {
		return err
	}
	ls, err := net.Listen("tcp", *secure)
	if err != nil {
		return err
	}
	go func() { errc <- (&http.Server{Handler: h, TLSNextProto: noH2}).Serve(lp) }()
	go func() { errc <- (&http.Server{Handler: h, TLSNextProto: noH2}).ServeTLS(ls, *cert, *key) }()
	fmt.Println("serving", lp.Addr(), ls.Addr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case err := <-errc:
		return err
	case <-sig:
		return nil
	}
}

// ---------------------------------------------------------------------------
// client

type client struct {
	hc *http.Client
}

func newClient(certFile string) (*client, error) {
	pem, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no certificate", certFile)
	}
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}},
		ForceAttemptHTTP2:   false,
		MaxIdleConnsPerHost: 4,
		WriteBufferSize:     256 << 10,
		ReadBufferSize:      64 << 10,
		DisableCompression:  true,
	}
	return &client{hc: &http.Client{Transport: tr, Timeout: 15 * time.Minute}}, nil
}

func (c *client) do(ctx context.Context, method, url, key string, body io.Reader, size int64) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, b, err
}

func (c *client) session(ctx context.Context, base, key string) (string, error) {
	code, b, err := c.do(ctx, "GET", base+"/publicinterface/get_session_id.text?account=DEM00001", key, nil, 0)
	if err != nil {
		return "", err
	}
	epid := strings.TrimSpace(string(b))
	if code != 200 || len(epid) != 28 {
		return "", fmt.Errorf("get_session_id: %d %q", code, b)
	}
	return epid, nil
}

// ---------------------------------------------------------------------------
// large PUT

// filler is a body of n bytes: a PDF header, then incompressible bytes.
type filler struct {
	n, off int64
	pat    []byte
}

var pattern = func() []byte {
	b := make([]byte, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i+8 <= len(b); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	copy(b, "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	return b
}()

func newFiller(n int64) *filler { return &filler{n: n, pat: pattern} }

func (f *filler) Read(p []byte) (int, error) {
	if f.off >= f.n {
		return 0, io.EOF
	}
	if rem := f.n - f.off; int64(len(p)) > rem {
		p = p[:rem]
	}
	total := 0
	for len(p) > 0 {
		i := int(f.off % int64(len(f.pat)))
		n := copy(p, f.pat[i:])
		p = p[n:]
		f.off += int64(n)
		total += n
	}
	return total, nil
}

// rss reads kB fields of /proc/pid/status, in MB (10^6 bytes).
func procStatus(pid int) (rss, hwm float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) < 1 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[0], 64)
		switch k {
		case "VmRSS":
			rss = kb * 1024 / 1e6
		case "VmHWM":
			hwm = kb * 1024 / 1e6
		}
	}
	return rss, hwm, nil
}

// sampler records the largest VmRSS of pid every 10 ms until stopped.
type sampler struct {
	peak float64
	n    int
	stop chan struct{}
	done chan struct{}
}

func sample(pid int) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, _, err := procStatus(pid); err == nil {
				s.n++
				s.peak = max(s.peak, rss)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) finish() (float64, int) {
	close(s.stop)
	<-s.done
	return s.peak, s.n
}

// resetHWM resets pid's VmHWM to its current RSS (clear_refs 5).
func resetHWM(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}

func benchPut(ctx context.Context, c config, cl *client, lg, bl *server) (*putResult, error) {
	epid, err := cl.session(ctx, lg.plainURL, lg.key)
	if err != nil {
		return nil, err
	}
	res := &putResult{SizeBytes: c.size, Summary: map[string]*putSummary{}}
	profiled := map[string]bool{}
	for r := 1; r <= c.runs; r++ {
		for _, listener := range []string{"plain", "https"} {
			order := []*server{lg, bl}
			if r%2 == 0 {
				order = []*server{bl, lg}
			}
			var mbps [2]float64
			for _, s := range order {
				name, url, key := "baseline", s.plainURL, ""
				if listener == "https" {
					url = s.httpsURL
				}
				if s == lg {
					name, key = "lodge", lg.key
					url += "/direct_upload/" + epid + "/big.pdf"
				} else {
					url += "/big.pdf"
				}
				var prof func() error
				if s == lg && c.cpuprofile != "" && !profiled[listener] {
					profiled[listener] = true
					prof = profile(ctx, lg, filepath.Join(c.cpuprofile, "put-"+listener+".pprof"))
				}
				pr, err := putOnce(ctx, cl, s, url, key, c.size)
				if prof != nil {
					if err := prof(); err != nil {
						logf("profile: %v", err)
					}
				}
				if err != nil {
					return nil, fmt.Errorf("run %d, %s %s: %w", r, name, listener, err)
				}
				pr.Run, pr.Server, pr.Listener = r, name, listener
				logf("put run %d %-8s %-5s %7.1f MB/s  %6.2f s  cpu %5.2f s  rss %6.1f -> peak %6.1f (hwm %6.1f) -> %6.1f MB",
					r, name, listener, pr.MBps, pr.Seconds, pr.CPUSeconds, pr.RSSBeforeMB, pr.RSSPeakMB, pr.RSSHWMMB, pr.RSSAfterMB)
				res.Runs = append(res.Runs, pr)
				if s == lg {
					mbps[0] = pr.MBps
				} else {
					mbps[1] = pr.MBps
				}
			}
			sm := res.Summary[listener]
			if sm == nil {
				sm = &putSummary{}
				res.Summary[listener] = sm
			}
			sm.LodgeMBps = append(sm.LodgeMBps, mbps[0])
			sm.BaselineMBps = append(sm.BaselineMBps, mbps[1])
			sm.Ratios = append(sm.Ratios, stats.Round(mbps[0]/mbps[1], 3))
		}
	}
	for _, pr := range res.Runs {
		if pr.Server == "lodge" {
			sm := res.Summary[pr.Listener]
			sm.MaxGrowthMB = max(sm.MaxGrowthMB, pr.GrowthMB)
		}
	}
	for _, sm := range res.Summary {
		sm.LodgeMedian, sm.BaselineMedian, sm.RatioMedian = stats.Median(sm.LodgeMBps), stats.Median(sm.BaselineMBps), stats.Median(sm.Ratios)
	}
	return res, nil
}

func putOnce(ctx context.Context, cl *client, s *server, url, key string, size int64) (putRun, error) {
	pid := s.pid()
	runtime.GC()
	time.Sleep(200 * time.Millisecond) // let the server settle
	hwmOK := resetHWM(pid)
	before, _, err := procStatus(pid)
	if err != nil {
		return putRun{}, err
	}
	cpu0 := cpuSeconds(pid)
	sm := sample(pid)
	t0 := time.Now()
	code, body, err := cl.do(ctx, "PUT", url, key, newFiller(size), size)
	el := time.Since(t0)
	peak, n := sm.finish()
	cpu := cpuSeconds(pid) - cpu0
	after, hwm, _ := procStatus(pid)
	if err != nil {
		return putRun{}, err
	}
	if code != http.StatusCreated {
		return putRun{}, fmt.Errorf("PUT %s: %d %s", url, code, body)
	}
	if !hwmOK {
		hwm = -1
	}
	peak = max(peak, hwm, after)
	return putRun{
		Seconds: stats.Round(el.Seconds(), 3), MBps: stats.Round(float64(size)/1e6/el.Seconds(), 1),
		RSSBeforeMB: stats.Round(before, 1), RSSPeakMB: stats.Round(peak, 1), RSSHWMMB: stats.Round(hwm, 1), RSSAfterMB: stats.Round(after, 1),
		GrowthMB: stats.Round(peak-before, 1), Samples: n, CPUSeconds: stats.Round(cpu, 2),
	}, nil
}

// cpuSeconds is the user + system CPU time pid used so far (its threads
// included), from /proc/PID/stat at 100 ticks a second.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// fields after the command name, which may hold spaces: state is field 3
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

// profile starts a 10 s CPU profile of lodge; the returned func waits for
// it and saves it.
func profile(ctx context.Context, lg *server, path string) func() error {
	wait := cpuprofile.Start(ctx, lg.debugURL, 10, path)
	time.Sleep(50 * time.Millisecond)
	return wait
}

// ---------------------------------------------------------------------------
// statement run

// statementPDF writes a valid PDF of n A4 pages with a cross-reference
// table: a page tree with fanout kids per intermediate node (0: one flat
// /Kids array), every page sharing one content stream and one font.
func statementPDF(n, fanout int) []byte {
	var b bytes.Buffer
	b.Grow(n * 130)
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	var offs []int
	obj := func(num int, body string) {
		if num != len(offs)+1 {
			panic("objects out of order")
		}
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", num, body)
	}
	const catalog, root, font, content, firstNode = 1, 2, 3, 4, 5
	nodes := 0
	if fanout > 0 && n > fanout {
		nodes = (n + fanout - 1) / fanout
	}
	firstPage := firstNode + nodes
	refs := func(from, count int) string {
		var s strings.Builder
		for i := 0; i < count; i++ {
			if i > 0 {
				s.WriteByte(' ')
			}
			fmt.Fprintf(&s, "%d 0 R", from+i)
		}
		return s.String()
	}
	obj(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", root))
	if nodes > 0 {
		obj(root, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", refs(firstNode, nodes), n))
	} else {
		obj(root, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", refs(firstPage, n), n))
	}
	obj(font, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	text := "BT /F1 11 Tf 72 770 Td (Statement of account) Tj 0 -16 Td (Please see overleaf.) Tj ET"
	obj(content, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(text), text))
	parent := make([]int, n)
	for i := 0; i < nodes; i++ {
		lo := i * fanout
		cnt := min(fanout, n-lo)
		obj(firstNode+i, fmt.Sprintf("<< /Type /Pages /Parent %d 0 R /Kids [%s] /Count %d >>", root, refs(firstPage+lo, cnt), cnt))
		for j := lo; j < lo+cnt; j++ {
			parent[j] = firstNode + i
		}
	}
	for i := 0; i < n; i++ {
		p := root
		if nodes > 0 {
			p = parent[i]
		}
		obj(firstPage+i, fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", p, font, content))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, catalog, xref)
	return b.Bytes()
}

// statementMeta is the metadata of a statement run: letter i on pages 2i
// and 2i+1 of file, with a reference and a postal address.
func statementMeta(run, letters int, file string) ([]byte, string, error) {
	addrs, err := testref.Mix(letters, uint64(1000+run))
	if err != nil {
		return nil, "", err
	}
	type letter struct {
		Postal    []string `json:"postal"`
		Reference string   `json:"reference"`
		FileName  string   `json:"file_name"`
		PageStart int      `json:"page_start"`
		PageEnd   int      `json:"page_end"`
	}
	m := struct {
		Title   string   `json:"title"`
		Letters []letter `json:"letters"`
	}{Title: fmt.Sprintf("Statements, bench run %d", run)}
	stamp := time.Now().UnixNano()
	var last string
	for i := 0; i < letters; i++ {
		last = fmt.Sprintf("ACC-%x-%d-%06d", stamp, run, i)
		m.Letters = append(m.Letters, letter{Postal: addrs[i], Reference: last, FileName: file, PageStart: 2 * i, PageEnd: 2*i + 1})
	}
	b, err := json.Marshal(m)
	return b, last, err
}

func benchStatement(ctx context.Context, c config, cl *client, lg *server) (*stmtResult, error) {
	pdf := statementPDF(c.pages, c.fanout)
	res := &stmtResult{Pages: c.pages, Letters: c.letters, Fanout: c.fanout, PDFBytes: len(pdf)}
	for r := 1; r <= c.runs; r++ {
		meta, lastRef, err := statementMeta(r, c.letters, "statements.pdf")
		if err != nil {
			return nil, err
		}
		res.MetadataBytes = len(meta)
		epid, err := cl.session(ctx, lg.plainURL, lg.key)
		if err != nil {
			return nil, err
		}
		sr := stmtRun{Run: r}
		for _, f := range []struct {
			name string
			body []byte
			secs *float64
		}{{"statements.pdf", pdf, &sr.PutPDFS}, {"statements.json", meta, &sr.PutMetaS}} {
			t0 := time.Now()
			code, b, err := cl.do(ctx, "PUT", lg.plainURL+"/direct_upload/"+epid+"/"+f.name, lg.key, bytes.NewReader(f.body), int64(len(f.body)))
			*f.secs = stats.Round(time.Since(t0).Seconds(), 3)
			if err != nil {
				return nil, err
			}
			if code != http.StatusCreated {
				return nil, fmt.Errorf("PUT %s: %d %s", f.name, code, b)
			}
		}
		var prof func() error
		if c.cpuprofile != "" {
			prof = profile(ctx, lg, filepath.Join(c.cpuprofile, fmt.Sprintf("end-session-%d.pprof", r)))
		}
		t0 := time.Now()
		code, b, err := cl.do(ctx, "GET", lg.plainURL+"/publicinterface/end_session.json?session_id="+epid, lg.key, nil, 0)
		el := time.Since(t0)
		if err != nil {
			return nil, err
		}
		var er struct{ Result, Status, Error string }
		if err := json.Unmarshal(b, &er); err != nil || code != 200 || er.Result != "ok" {
			return nil, fmt.Errorf("end_session: %d %.2000s", code, b)
		}
		sr.EndSeconds, sr.HTTPStatus, sr.Result, sr.Status = stats.Round(el.Seconds(), 3), code, er.Result, er.Status
		sr.LodgedAfterS, sr.LastLetter = waitLodged(ctx, cl, lg, lastRef, 2*time.Minute)
		if prof != nil {
			if err := prof(); err != nil {
				logf("profile: %v", err)
			}
		}
		logf("statement run %d: put pdf %.3f s, put metadata %.3f s, end_session %.3f s (%s), lodged %.3f s later (%s)",
			r, sr.PutPDFS, sr.PutMetaS, sr.EndSeconds, sr.Status, sr.LodgedAfterS, sr.LastLetter)
		res.Runs = append(res.Runs, sr)
		res.EndSeconds = append(res.EndSeconds, sr.EndSeconds)
	}
	res.EndMedian, res.EndMax = stats.Median(res.EndSeconds), maxOf(res.EndSeconds)
	return res, nil
}

// waitLodged polls get_letter_status for ref until its letter is no
// longer "Received": seconds waited and its status, -1 on time out.
func waitLodged(ctx context.Context, cl *client, lg *server, ref string, limit time.Duration) (float64, string) {
	t0 := time.Now()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"get_letter_status","params":{"account":"DEM00001","refs":[%q]}}`, ref)
	status := ""
	for time.Since(t0) < limit {
		req, _ := http.NewRequestWithContext(ctx, "POST", lg.httpsURL+"/apiv2/jsonrpc", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+lg.key)
		resp, err := cl.hc.Do(req)
		if err == nil {
			var out struct {
				Result struct{ Letters []struct{ Status string } }
			}
			json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if len(out.Result.Letters) > 0 {
				status = out.Result.Letters[0].Status
				if status != "Received" {
					return stats.Round(time.Since(t0).Seconds(), 3), status
				}
			}
		}
		if ctx.Err() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return -1, status
}

// ---------------------------------------------------------------------------

func minOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
