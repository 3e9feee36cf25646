package main

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lodge-mail/lodge/bench/internal/stats"
	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/pgdb"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/upload"
)

// ---------------------------------------------------------------------------
// rates

// setup is one of the three compared: its nodes and the key they take.
type setup struct {
	name   string
	nodes  []*node
	key    string
	shared bool
	// apart: each node on a database and bucket of its own, each client
	// on one node with that node's key (no state shared)
	apart bool
}

type rateRun struct {
	Round     int                `json:"round"`
	Setup     string             `json:"setup"`
	Workload  string             `json:"workload"`
	Ops       int64              `json:"ops"`
	Seconds   float64            `json:"seconds"`
	OpsPerS   float64            `json:"ops_per_s"`
	P50ms     float64            `json:"p50_ms"`
	P99ms     float64            `json:"p99_ms"`
	Requests  map[string]int64   `json:"requests_by_node"` // answered as expected, whole run
	Failures  int64              `json:"failures"`
	Oddities  int64              `json:"unexpected_answers"`
	Notes     []string           `json:"failure_notes,omitempty"`
	CPUs      map[string]float64 `json:"cpu_s"` // lodge's includes lodge_child_processes
	CPUPerOp  map[string]float64 `json:"cpu_ms_per_op"`
	LoadAvg   float64            `json:"load_average"`
	SettleS   float64            `json:"settle_s"` // waited for the machine's processes to go idle before it
	Profile   string             `json:"profile,omitempty"`
	ProfError string             `json:"profile_error,omitempty"`
}

type ratio struct {
	Rounds []float64 `json:"rounds"`
	Median float64   `json:"median"`
}

type rateSummary struct {
	PerS          map[string]float64 `json:"median_ops_per_s"`        // by setup
	CPUPerOp      map[string]float64 `json:"median_cpu_ms_per_op"`    // by setup, every process together
	P99ms         map[string]float64 `json:"median_p99_ms"`           // by setup
	OneVsEmbedded ratio              `json:"one_node_vs_embedded"`    // target >= 0.5
	ThreeVsOne    ratio              `json:"three_nodes_vs_one_node"` // target >= 0.9
	// three nodes each scheduling on every core (Go's default GOMAXPROCS):
	// reported, not judged
	ThreeAllCoresVsOne ratio `json:"three_nodes_all_cores_vs_one_node"`
	// three nodes sharing nothing (each its own database and bucket, each
	// client on one of them) vs one node: what crowding three nodes onto
	// this machine costs without any sharing; and three sharing vs three
	// apart: what sharing costs. Reported, not judged.
	ApartVsOne    ratio `json:"three_nodes_apart_vs_one_node"`
	SharedVsApart ratio `json:"three_nodes_vs_three_nodes_apart"`
}

type ratesResult struct {
	Runs    []rateRun               `json:"runs"`
	Summary map[string]*rateSummary `json:"summary"` // by workload
}

func benchRates(ctx context.Context, e *env) (*ratesResult, error) {
	c := e.c
	logf("rates: starting the embedded node, one shared node, three shared nodes (twice) and three nodes apart")
	var setups []*setup
	var all []*node
	defer func() { stopAll(all) }()
	emb, err := e.startNodes(ctx, "embedded", 1, "", "")
	if err != nil {
		return nil, err
	}
	all = append(all, emb...)
	setups = append(setups, &setup{name: "embedded", nodes: emb})
	for _, s := range []struct {
		name   string
		n      int
		env    []string
		prefix string
	}{
		{"one_node", 1, nil, "one-"},
		{"three_nodes", 3, []string{fmt.Sprintf("GOMAXPROCS=%d", splitProcs(runtime.NumCPU(), 3))}, "three-"},
		{"three_nodes_all_cores", 3, nil, "threeall-"},
	} {
		dbURL, bucket, err := e.newShared()
		if err != nil {
			return nil, err
		}
		ns, err := e.startNodesEnv(ctx, s.prefix, s.n, s.env, dbURL, bucket)
		if err != nil {
			return nil, err
		}
		all = append(all, ns...)
		setups = append(setups, &setup{name: s.name, nodes: ns, shared: true})
	}
	// three nodes, cores split, sharing nothing
	apart := &setup{name: "three_nodes_apart", shared: true, apart: true}
	for i := range 3 {
		dbURL, bucket, err := e.newShared()
		if err != nil {
			return nil, err
		}
		ns, err := e.startNodesEnv(ctx, fmt.Sprintf("apart%d-", i), 1,
			[]string{fmt.Sprintf("GOMAXPROCS=%d", splitProcs(runtime.NumCPU(), 3))}, dbURL, bucket)
		if err != nil {
			return nil, err
		}
		all = append(all, ns...)
		apart.nodes = append(apart.nodes, ns...)
	}
	setups = append(setups, apart)
	for _, s := range setups {
		s.key = s.nodes[0].key
	}
	res := &ratesResult{Summary: map[string]*rateSummary{}}
	for r := 1; r <= c.rounds; r++ {
		for _, wl := range []workload{wlPut, wlEnd} {
			for i := range setups {
				s := setups[(i+r-1)%len(setups)]
				run, err := rateOnce(ctx, e, s, all, wl, r)
				if err != nil {
					return nil, err
				}
				logf("round %d %-11s %-11s %8.1f/s  p50 %6.1f ms  p99 %7.1f ms  cpu %5.2f ms/op (lodge %.2f of which children %.2f, postgres %.2f, versitygw %.2f)  failed %d  load %.2f  settled %.1f s",
					r, wl, s.name, run.OpsPerS, run.P50ms, run.P99ms, run.CPUPerOp["total"], run.CPUPerOp["lodge"], run.CPUPerOp["lodge_child_processes"],
					run.CPUPerOp["postgres"], run.CPUPerOp["versitygw"], run.Failures+run.Oddities, run.LoadAvg, run.SettleS)
				res.Runs = append(res.Runs, run)
			}
		}
	}
	for _, wl := range []workload{wlPut, wlEnd} {
		sm := &rateSummary{PerS: map[string]float64{}, CPUPerOp: map[string]float64{}, P99ms: map[string]float64{}}
		res.Summary[string(wl)] = sm
		by := map[string]map[int]rateRun{}
		for _, run := range res.Runs {
			if run.Workload != string(wl) {
				continue
			}
			if by[run.Setup] == nil {
				by[run.Setup] = map[int]rateRun{}
			}
			by[run.Setup][run.Round] = run
		}
		for _, s := range setups {
			var rates, cpus, p99s []float64
			for r := 1; r <= c.rounds; r++ {
				run := by[s.name][r]
				rates, cpus, p99s = append(rates, run.OpsPerS), append(cpus, run.CPUPerOp["total"]), append(p99s, run.P99ms)
			}
			sm.PerS[s.name], sm.CPUPerOp[s.name], sm.P99ms[s.name] = stats.Median(rates), stats.Median(cpus), stats.Median(p99s)
		}
		for r := 1; r <= c.rounds; r++ {
			a, b, cc, d := by["embedded"][r].OpsPerS, by["one_node"][r].OpsPerS, by["three_nodes"][r].OpsPerS, by["three_nodes_all_cores"][r].OpsPerS
			ap := by["three_nodes_apart"][r].OpsPerS
			sm.OneVsEmbedded.Rounds = append(sm.OneVsEmbedded.Rounds, ratioOf(b, a))
			sm.ThreeVsOne.Rounds = append(sm.ThreeVsOne.Rounds, ratioOf(cc, b))
			sm.ThreeAllCoresVsOne.Rounds = append(sm.ThreeAllCoresVsOne.Rounds, ratioOf(d, b))
			sm.ApartVsOne.Rounds = append(sm.ApartVsOne.Rounds, ratioOf(ap, b))
			sm.SharedVsApart.Rounds = append(sm.SharedVsApart.Rounds, ratioOf(cc, ap))
		}
		sm.OneVsEmbedded.Median, sm.ThreeVsOne.Median = stats.Median(sm.OneVsEmbedded.Rounds), stats.Median(sm.ThreeVsOne.Rounds)
		sm.ThreeAllCoresVsOne.Median = stats.Median(sm.ThreeAllCoresVsOne.Rounds)
		sm.ApartVsOne.Median, sm.SharedVsApart.Median = stats.Median(sm.ApartVsOne.Rounds), stats.Median(sm.SharedVsApart.Rounds)
	}
	return res, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// splitProcs is the GOMAXPROCS of each of n nodes sharing cpus cores: the
// cores split between them as between machines, at least one each.
func splitProcs(cpus, n int) int { return max(1, cpus/n) }

func ratioOf(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return stats.Round(a/b, 3)
}

// rateOnce is one measured run of workload wl on setup s.
func rateOnce(ctx context.Context, e *env, s *setup, all []*node, wl workload, r int) (rateRun, error) {
	c := e.c
	run := rateRun{Round: r, Setup: s.name, Workload: string(wl), Requests: map[string]int64{}}
	run.SettleS = e.settle(ctx, all, 2*time.Minute)
	var ts []*target
	for _, n := range s.nodes {
		ts = append(ts, &target{name: n.name, base: n.plain})
	}
	clients := c.clients
	if wl == wlEnd {
		clients = c.endClients
	}
	// one load generator over every node; apart, one a node, each with
	// its share of the clients and the node's key
	var gens []*gen
	if s.apart {
		for i, t := range ts {
			share := clients/len(ts) + btoi(i < clients%len(ts))
			if share > 0 {
				gens = append(gens, newGen(newRotation(t), s.nodes[i].key, c.pdfBytes, c.letters, share, nil))
				gens[len(gens)-1].start(wl, share, c.perSession)
			}
		}
	} else {
		gens = append(gens, newGen(newRotation(ts...), s.key, c.pdfBytes, c.letters, clients, nil))
		gens[0].start(wl, clients, c.perSession)
	}
	stopGens := func() {
		for _, g := range gens {
			g.stop()
		}
	}
	defer stopGens()
	if err := sleep(ctx, c.warmup); err != nil {
		return run, err
	}
	count := func() (n int64) {
		for _, g := range gens {
			if wl == wlPut {
				n += g.puts.Load()
			} else {
				n += g.ends.Load()
			}
		}
		return n
	}
	measuring := func(on bool) {
		for _, g := range gens {
			g.measuring.Store(on)
		}
	}
	// lodge's CPU, and the part of it its child processes used (page
	// counting runs in one per document)
	cpu := func() (lodge, children, pg, s3 float64) {
		for _, n := range s.nodes {
			tree := treeCPU(n.pid())
			_, self, _, _ := procStat(n.pid())
			lodge, children = lodge+tree, children+max(0, tree-self)
		}
		pg, s3 = e.serversCPU()
		return
	}
	var wait func() error
	if c.profile != "" && r == 1 {
		secs := max(1, min(10, int(c.duration.Seconds())-1))
		run.Profile = filepath.Join(c.profile, s.name+"-"+string(wl)+".pprof")
		wait = s.nodes[0].profile(ctx, secs, run.Profile)
	}
	l0, ch0, pg0, s30 := cpu()
	self0 := selfCPU()
	n0, t0 := count(), time.Now()
	measuring(true)
	if err := sleep(ctx, c.duration); err != nil {
		return run, err
	}
	n1, el := count(), time.Since(t0)
	l1, ch1, pg1, s31 := cpu()
	self1 := selfCPU()
	measuring(false)
	run.LoadAvg = loadAvg()
	stopGens()
	if wait != nil {
		if err := wait(); err != nil {
			run.ProfError = err.Error()
		}
	}
	run.Ops, run.Seconds = n1-n0, stats.Round(el.Seconds(), 3)
	run.OpsPerS = stats.Round(float64(run.Ops)/el.Seconds(), 1)
	var lat []float64
	for _, g := range gens {
		if wl == wlEnd {
			lat = append(lat, g.latEnd...)
		} else {
			lat = append(lat, g.latPut...)
		}
		run.Failures, run.Oddities = run.Failures+g.failures.Load(), run.Oddities+g.oddities.Load()
		run.Notes = append(run.Notes, g.failureNotes()...)
	}
	run.P50ms, run.P99ms = percentile(lat, 50), percentile(lat, 99)
	for _, t := range ts {
		run.Requests[t.name] = t.ok.Load()
	}
	run.CPUs = map[string]float64{"lodge": stats.Round(l1-l0, 2), "postgres": stats.Round(pg1-pg0, 2), "versitygw": stats.Round(s31-s30, 2), "load_generator": stats.Round(self1-self0, 2)}
	run.CPUPerOp = map[string]float64{}
	total := 0.0
	for k, v := range run.CPUs {
		total += v
		if run.Ops > 0 {
			run.CPUPerOp[k] = stats.Round(v*1000/float64(run.Ops), 3)
		}
	}
	// included in lodge's, not added to the total
	children := max(0, ch1-ch0) // the two reads of a snapshot are not at one instant
	run.CPUs["lodge_child_processes"] = stats.Round(children, 2)
	if run.Ops > 0 {
		run.CPUPerOp["lodge_child_processes"] = stats.Round(children*1000/float64(run.Ops), 3)
	}
	if run.Ops > 0 {
		run.CPUPerOp["total"] = stats.Round(total*1000/float64(run.Ops), 3)
	}
	return run, nil
}

// ---------------------------------------------------------------------------
// stall

type stallResult struct {
	Clients         int      `json:"clients"`
	Node            string   `json:"node"`
	EndSessions     int64    `json:"end_sessions"` // answered "ok" in the whole run
	Window          string   `json:"window"`
	LastWindowEnds  int64    `json:"end_sessions_in_last_window"`
	UnansweredAtEnd int64    `json:"requests_unanswered_at_end"`
	PoolWaiters     int      `json:"goroutines_waiting_for_a_database_connection"`
	Stalled         bool     `json:"stalled"`
	Stacks          []string `json:"waiting_stacks,omitempty"` // where they wait, the node's own frames
	Notes           []string `json:"failure_notes,omitempty"`
}

// benchStall runs the end_session workload with -clients clients on one
// new shared node for -warmup plus -duration and says whether it stalled:
// no end_session answered in the last 5 s while requests wait. If so it
// reads the node's goroutines (pprof) to say where they wait, and kills
// the node (it cannot stop gracefully with requests stuck).
func benchStall(ctx context.Context, e *env) (*stallResult, error) {
	c := e.c
	dbURL, bucket, err := e.newShared()
	if err != nil {
		return nil, err
	}
	logf("stall: end_session with %d clients on one shared node", c.clients)
	ns, err := e.startNodes(ctx, "stall-", 1, dbURL, bucket)
	if err != nil {
		return nil, err
	}
	n := ns[0]
	defer func() { n.kill(); <-n.done }()
	const window = 5 * time.Second
	res := &stallResult{Clients: c.clients, Node: n.name, Window: window.String()}
	t := &target{name: n.name, base: n.plain}
	g := newGen(newRotation(t), n.key, c.pdfBytes, c.letters, c.clients, nil)
	g.start(wlEnd, c.clients, 0)
	defer g.stop()
	if err := sleep(ctx, c.warmup+c.duration-window); err != nil {
		return nil, err
	}
	before := g.ends.Load()
	if err := sleep(ctx, window); err != nil {
		return nil, err
	}
	res.EndSessions = g.ends.Load()
	res.LastWindowEnds = res.EndSessions - before
	res.UnansweredAtEnd = t.inflight.Load()
	res.Stalled = res.LastWindowEnds == 0 && res.UnansweredAtEnd > 0
	if res.Stalled {
		res.PoolWaiters, res.Stacks = waitingStacks(n)
	}
	g.stop()
	res.Notes = g.failureNotes()
	logf("stall: %d end_sessions, %d in the last %s, %d requests unanswered at the end, %d goroutines waiting for a database connection",
		res.EndSessions, res.LastWindowEnds, window, res.UnansweredAtEnd, res.PoolWaiters)
	return res, nil
}

// waitingStacks reads a node's goroutines and counts those waiting for a
// connection of the database pool, with the distinct places (lodge's own
// frames) they wait from.
func waitingStacks(n *node) (int, []string) {
	base, err := n.debugURL()
	if err != nil {
		return -1, []string{err.Error()}
	}
	resp, err := http.Get(base + "/debug/pprof/goroutine?debug=2")
	if err != nil {
		return -1, []string{err.Error()}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	waiting := 0
	seen := map[string]int{}
	for _, g := range strings.Split(string(b), "\n\n") {
		if !strings.Contains(g, "pgxpool.(*Pool).Acquire") {
			continue
		}
		waiting++
		var frames []string
		for _, line := range strings.Split(g, "\n") {
			if strings.HasPrefix(line, "github.com/lodge-mail/lodge/") {
				f := strings.TrimPrefix(line, "github.com/lodge-mail/lodge/")
				if i := strings.LastIndexByte(f, '('); i > 0 && strings.HasSuffix(f, ")") {
					f = f[:i] // the arguments
				}
				frames = append(frames, f)
			}
			if len(frames) == 3 {
				break
			}
		}
		seen[strings.Join(frames, " < ")]++
	}
	var out []string
	for k, v := range seen {
		out = append(out, fmt.Sprintf("%d × %s", v, k))
	}
	sort.Strings(out)
	return waiting, out
}

// ---------------------------------------------------------------------------
// join

type joinRun struct {
	Round        int              `json:"round"`
	Node         string           `json:"node"`
	ServingS     float64          `json:"serving_s"`      // its "serving" line, from exec
	ReadyS       float64          `json:"ready_s"`        // /readyz 200: added to the rotation
	FirstAnswerS float64          `json:"first_answer_s"` // (i), -1: none
	FirstJobS    float64          `json:"first_job_s"`    // (ii), -1: none
	FirstJobBy   string           `json:"first_job_seen_by"`
	LeaseSeenS   float64          `json:"lease_seen_s"`  // a job row leased to it, -1: not seen
	JobsMetricS  float64          `json:"jobs_metric_s"` // lodge_mailroom_jobs_total > 0, -1: not seen
	BatchLogS    float64          `json:"batch_log_s"`   // its first "print batch" line, -1: none
	SteadyEndsPS float64          `json:"steady_end_sessions_per_s"`
	Requests     map[string]int64 `json:"requests_by_node"`
	Failures     int64            `json:"failures"`
	Oddities     int64            `json:"unexpected_answers"`
	Notes        []string         `json:"failure_notes,omitempty"`
	LoadAvg      float64          `json:"load_average"`
}

type joinResult struct {
	Runs            []joinRun `json:"runs"`
	FirstAnswerMaxS float64   `json:"first_answer_max_s"`
	FirstJobMaxS    float64   `json:"first_job_max_s"`
	FirstAnswerMedS float64   `json:"first_answer_median_s"`
	FirstJobMedS    float64   `json:"first_job_median_s"`
}

func benchJoin(ctx context.Context, e *env) (*joinResult, error) {
	c := e.c
	dbURL, bucket, err := e.newShared()
	if err != nil {
		return nil, err
	}
	logf("join: starting two nodes")
	base, err := e.startNodes(ctx, "join-", 2, dbURL, bucket, "-cancel-window", "0s")
	if err != nil {
		return nil, err
	}
	defer func() { stopAll(base) }()
	db, err := pgdb.Open(ctx, pgdb.Config{URL: dbURL, MaxConns: 2})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	res := &joinResult{}
	var answers, jobs []float64
	for r := 1; r <= c.rounds; r++ {
		name := fmt.Sprintf("join-%d", r+1)
		dir, err := e.nodeDir(ctx, name)
		if err != nil {
			return nil, err
		}
		e.settle(ctx, base, time.Minute)
		run, err := joinOnce(ctx, e, base, db, dbURL, bucket, name, dir, r)
		if err != nil {
			return nil, err
		}
		logf("join round %d: %s serving %.2f s, ready %.2f s, first answer %.2f s, first job %.2f s (%s); steady %.1f end_session/s, failed %d",
			r, name, run.ServingS, run.ReadyS, run.FirstAnswerS, run.FirstJobS, run.FirstJobBy, run.SteadyEndsPS, run.Failures+run.Oddities)
		res.Runs = append(res.Runs, run)
		a, j := run.FirstAnswerS, run.FirstJobS
		if a < 0 {
			a = 1e9
		}
		if j < 0 {
			j = 1e9
		}
		answers, jobs = append(answers, a), append(jobs, j)
	}
	res.FirstAnswerMaxS, res.FirstJobMaxS = maxOf(answers), maxOf(jobs)
	res.FirstAnswerMedS, res.FirstJobMedS = stats.Median(answers), stats.Median(jobs)
	return res, nil
}

func joinOnce(ctx context.Context, e *env, base []*node, db *pgdb.DB, dbURL, bucket, name, dir string, r int) (joinRun, error) {
	c := e.c
	run := joinRun{Round: r, Node: name, ServingS: -1, ReadyS: -1, FirstAnswerS: -1, FirstJobS: -1, LeaseSeenS: -1, JobsMetricS: -1, BatchLogS: -1, Requests: map[string]int64{}}
	var ts []*target
	for _, n := range base {
		ts = append(ts, &target{name: n.name, base: n.plain})
	}
	rot := newRotation(ts...)
	g := newGen(rot, base[0].key, c.pdfBytes, c.letters, c.steadyClients, nil)
	g.start(wlEnd, c.steadyClients, 0)
	defer g.stop()
	if err := sleep(ctx, c.steadyWarmup); err != nil {
		return run, err
	}
	e0, t0 := g.ends.Load(), time.Now()
	n, err := e.launch(name, dir, dbURL, bucket, "-cancel-window", "0s")
	if err != nil {
		return run, err
	}
	defer n.stop()
	since := func(t time.Time) float64 { return stats.Round(t.Sub(n.exec).Seconds(), 3) }
	tj := &target{name: name}
	// the load balancer's health check: /readyz every 10 ms once it
	// listens; in service at the first 200 (its time in readyAt)
	readyc := make(chan error, 1)
	var readyAt atomic.Int64
	go func() {
		if err := n.waitServing(ctx, time.Minute); err != nil {
			readyc <- err
			return
		}
		tj.base = n.plain
		hc := &http.Client{Timeout: time.Second}
		for ctx.Err() == nil {
			resp, err := hc.Get(n.plain + "/readyz")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					readyAt.Store(time.Now().UnixNano())
					rot.add(tj)
					readyc <- nil
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		readyc <- ctx.Err()
	}()
	// its first job, by whichever sign comes first
	deadline := time.Now().Add(30 * time.Second)
	hc := &http.Client{Timeout: time.Second}
	ready := false
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if !ready {
			select {
			case err := <-readyc:
				if err != nil {
					return run, err
				}
				ready = true
			default:
			}
		}
		now := time.Now()
		if run.LeaseSeenS < 0 {
			var leased bool
			qctx, cancel := context.WithTimeout(ctx, time.Second)
			err := db.Pool.QueryRow(qctx, `SELECT EXISTS (SELECT 1 FROM pipeline_jobs WHERE lease_owner = $1)`, name).Scan(&leased)
			cancel()
			if err == nil && leased {
				run.LeaseSeenS = since(now)
			}
		}
		if run.JobsMetricS < 0 && isClosed(n.ready) {
			if jobsDone(hc, n.plain) > 0 {
				run.JobsMetricS = since(now)
			}
		}
		if t, ok := n.firstBatch(); ok && run.BatchLogS < 0 {
			run.BatchLogS = since(t)
		}
		if first := tj.firstOK.Load(); first != 0 && run.FirstAnswerS < 0 {
			run.FirstAnswerS = since(time.Unix(0, first))
		}
		if run.FirstAnswerS >= 0 && (run.LeaseSeenS >= 0 || run.JobsMetricS >= 0 || run.BatchLogS >= 0) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, s := range []struct {
		by string
		v  float64
	}{{"lease_owner", run.LeaseSeenS}, {"lodge_mailroom_jobs_total", run.JobsMetricS}, {"print batch log line", run.BatchLogS}} {
		if s.v >= 0 && (run.FirstJobS < 0 || s.v < run.FirstJobS) {
			run.FirstJobS, run.FirstJobBy = s.v, s.by
		}
	}
	if isClosed(n.ready) {
		n.mu.Lock()
		run.ServingS = since(n.readyAt)
		n.mu.Unlock()
	}
	if t := readyAt.Load(); t != 0 {
		run.ReadyS = since(time.Unix(0, t))
	}
	if err := sleep(ctx, 2*time.Second); err != nil {
		return run, err
	}
	run.SteadyEndsPS = stats.Round(float64(g.ends.Load()-e0)/time.Since(t0).Seconds(), 1)
	run.LoadAvg = loadAvg()
	g.stop()
	for _, t := range append(ts, tj) {
		run.Requests[t.name] = t.ok.Load()
	}
	run.Failures, run.Oddities, run.Notes = g.failures.Load(), g.oddities.Load(), g.failureNotes()
	return run, nil
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// jobsDone sums lodge_mailroom_jobs_total on a node's /metrics (-1 when
// it could not be read).
func jobsDone(hc *http.Client, base string) float64 {
	resp, err := hc.Get(base + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "lodge_mailroom_jobs_total") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i >= 0 {
			v, _ := strconv.ParseFloat(line[i+1:], 64)
			sum += v
		}
	}
	return sum
}

// ---------------------------------------------------------------------------
// kill

type killRun struct {
	Round          int              `json:"round"`
	Killed         string           `json:"killed"`
	InFlight       int64            `json:"in_flight_at_kill"`
	Failed         int64            `json:"failed"` // after the kill, all nodes
	FailedOnKilled int64            `json:"failed_on_killed"`
	FailedOthers   int64            `json:"failed_on_others"`
	Oddities       int64            `json:"unexpected_answers"`
	AnsweredAfter  map[string]int64 `json:"answered_after_kill"` // by surviving node
	EndsPerSBefore float64          `json:"end_sessions_per_s_before"`
	EndsPerSAfter  float64          `json:"end_sessions_per_s_after"`
	Notes          []string         `json:"failure_notes,omitempty"`
	RestartS       float64          `json:"restart_serving_s"` // the killed node started again: exec to serving
	Problems       []string         `json:"problems,omitempty"`
	LoadAvg        float64          `json:"load_average"`
}

type killResult struct {
	Runs                []killRun `json:"runs"`
	InFlight            int64     `json:"in_flight_at_kills"`
	Failed              int64     `json:"failed"`
	OthersFailed        int64     `json:"failed_on_others"`
	FilesChecked        int       `json:"acknowledged_files_checked"`
	MailingsChecked     int       `json:"acknowledged_end_sessions_checked"`
	Problems            []string  `json:"problems,omitempty"`
	LostWithinInFlight  bool      `json:"lost_at_most_in_flight"`
	OthersKeptAnswering bool      `json:"others_kept_answering"`
	Intact              bool      `json:"acknowledged_intact"`
}

func benchKill(ctx context.Context, e *env) (*killResult, error) {
	c := e.c
	dbURL, bucket, err := e.newShared()
	if err != nil {
		return nil, err
	}
	logf("kill: starting three nodes")
	nodes, err := e.startNodes(ctx, "kill-", 3, dbURL, bucket, "-cancel-window", "0s")
	if err != nil {
		return nil, err
	}
	defer func() { stopAll(nodes) }()
	v, err := openVerifier(ctx, dbURL, e.s3.URL(bucket))
	if err != nil {
		return nil, err
	}
	defer v.close()
	ack := newAcked()
	key := nodes[0].key
	res := &killResult{LostWithinInFlight: true, OthersKeptAnswering: true}
	for r := 1; r <= c.rounds; r++ {
		e.settle(ctx, nodes, time.Minute)
		vi := (r - 1) % len(nodes)
		run, err := killOnce(ctx, e, nodes, vi, key, ack, r)
		if err != nil {
			return nil, err
		}
		files, mailings, problems := v.verify(ack, c.letters)
		res.FilesChecked, res.MailingsChecked = files, mailings
		run.Problems = problems
		res.Problems = append(res.Problems, problems...)
		// the killed node back, for the next round
		victim := nodes[vi]
		n, err := e.startNode(ctx, victim.name, victim.dir, dbURL, bucket, "-cancel-window", "0s")
		if err != nil {
			return nil, fmt.Errorf("restarting %s: %w", victim.name, err)
		}
		run.RestartS = stats.Round(n.readyAt.Sub(n.exec).Seconds(), 3)
		nodes[vi] = n
		logf("kill round %d: %s killed with %d requests in flight to it; failed %d (on it %d, on others %d), unexpected %d; others answered %v after; %.1f -> %.1f end_session/s; %d files and %d mailings checked, %d problems; restarted in %.2f s",
			r, run.Killed, run.InFlight, run.Failed, run.FailedOnKilled, run.FailedOthers, run.Oddities, run.AnsweredAfter,
			run.EndsPerSBefore, run.EndsPerSAfter, files, mailings, len(problems), run.RestartS)
		res.Runs = append(res.Runs, run)
		res.InFlight += run.InFlight
		res.Failed += run.Failed
		res.OthersFailed += run.FailedOthers
		if run.Failed > run.InFlight {
			res.LostWithinInFlight = false
		}
		answered := len(run.AnsweredAfter) == len(nodes)-1
		for _, a := range run.AnsweredAfter {
			answered = answered && a > 0
		}
		if run.FailedOthers > 0 || run.Oddities > 0 || !answered {
			res.OthersKeptAnswering = false
		}
	}
	res.Intact = len(res.Problems) == 0 && res.FilesChecked > 0 && res.MailingsChecked > 0
	if len(res.Problems) > 50 {
		res.Problems = append(res.Problems[:50], fmt.Sprintf("… and %d more", len(res.Problems)-50))
	}
	return res, nil
}

func killOnce(ctx context.Context, e *env, nodes []*node, vi int, key string, ack *acked, r int) (killRun, error) {
	c := e.c
	victim := nodes[vi]
	run := killRun{Round: r, Killed: victim.name, AnsweredAfter: map[string]int64{}}
	var ts []*target
	for _, n := range nodes {
		ts = append(ts, &target{name: n.name, base: n.plain})
	}
	rot := newRotation(ts...)
	g := newGen(rot, key, c.pdfBytes, c.letters, c.steadyClients, ack)
	g.start(wlEnd, c.steadyClients, 0)
	defer g.stop()
	t0 := time.Now()
	if err := sleep(ctx, c.steadyWarmup); err != nil {
		return run, err
	}
	okBefore := map[*target]int64{}
	for _, t := range ts {
		okBefore[t] = t.ok.Load()
	}
	failedBefore, oddBefore := g.failures.Load(), g.oddities.Load()
	endsKill, tKill := g.ends.Load(), time.Now()
	run.EndsPerSBefore = stats.Round(float64(endsKill)/tKill.Sub(t0).Seconds(), 1)
	tv := ts[vi]
	failedVictimBefore := tv.failed.Load()
	run.InFlight = rot.removeAndKill(tv, victim.kill)
	if err := sleep(ctx, c.afterKill); err != nil {
		return run, err
	}
	run.EndsPerSAfter = stats.Round(float64(g.ends.Load()-endsKill)/time.Since(tKill).Seconds(), 1)
	run.LoadAvg = loadAvg()
	g.stop()
	<-victim.done
	run.Failed = g.failures.Load() - failedBefore
	run.Oddities = g.oddities.Load() - oddBefore
	run.FailedOnKilled = tv.failed.Load() - failedVictimBefore
	run.FailedOthers = run.Failed - run.FailedOnKilled
	for _, t := range ts {
		if t != tv {
			run.AnsweredAfter[t.name] = t.ok.Load() - okBefore[t]
		}
	}
	run.Notes = g.failureNotes()
	if failedBefore > 0 || oddBefore > 0 {
		run.Problems = append(run.Problems, fmt.Sprintf("%d failed and %d unexpected answers before the kill", failedBefore, oddBefore))
	}
	return run, nil
}

// verifier reads the shared stores as a node would.
type verifier struct {
	db *pgdb.DB
	up *upload.Store
	ms *pipeline.PostgresStore
}

func openVerifier(ctx context.Context, dbURL, blobURL string) (*verifier, error) {
	db, err := pgdb.Open(ctx, pgdb.Config{URL: dbURL, MaxConns: 4})
	if err != nil {
		return nil, err
	}
	blobs, err := blob.Open(ctx, blobURL, "", nil)
	if err != nil {
		db.Close()
		return nil, err
	}
	up, err := upload.OpenShared(db, blobs, upload.Options{})
	if err != nil {
		db.Close()
		return nil, err
	}
	ms, err := pipeline.OpenPostgres(db, pipeline.PostgresOptions{Node: "clusterbench-verifier", Renew: -1})
	if err != nil {
		up.Close()
		db.Close()
		return nil, err
	}
	return &verifier{db: db, up: up, ms: ms}, nil
}

func (v *verifier) close() {
	v.ms.Close()
	v.up.Close()
	v.db.Close()
}

// verify checks everything acknowledged so far: every acknowledged file
// is there with its SHA-1 and reads back whole, every stored file of
// those sessions hashes to its record (nothing half-written), every
// acknowledged end_session has its session ended and its mailing with
// its letters.
func (v *verifier) verify(ack *acked, letters int) (files, mailings int, problems []string) {
	ack.mu.Lock()
	defer ack.mu.Unlock()
	var mu sync.Mutex
	bad := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for epid, want := range ack.files {
		stored, err := v.up.Files(epid)
		if err != nil {
			bad("session %s: files: %v", epid, err)
			continue
		}
		got := map[string]upload.File{}
		for _, f := range stored {
			got[f.Name] = f
		}
		for name, sum := range want {
			files++
			if f, ok := got[name]; !ok {
				bad("session %s: acknowledged file %s is gone", epid, name)
			} else if f.SHA1 != sum {
				bad("session %s: acknowledged %s with SHA-1 %s, the record says %s", epid, name, sum, f.SHA1)
			}
		}
		for _, f := range stored {
			if err := v.readBack(epid, f); err != nil {
				bad("session %s: %s: %v", epid, f.Name, err)
			}
		}
	}
	for epid := range ack.ended {
		mailings++
		ss, err := v.up.Session(epid)
		if err != nil || ss.State != upload.StateEnded || ss.Result == nil || ss.Result.Result != "ok" {
			bad("session %s: end_session acknowledged, the session is %v (%v)", epid, ss.State, err)
		}
		m, err := v.ms.Mailing(epid)
		if err != nil {
			bad("session %s: end_session acknowledged without its mailing: %v", epid, err)
			continue
		}
		ls, err := v.ms.Letters(epid, 0, 0)
		if err != nil || len(ls) != m.Letters || m.Letters != letters {
			bad("mailing %s: %d letters recorded (%v), the mailing says %d, %d were sent", epid, len(ls), err, m.Letters, letters)
		}
	}
	return files, mailings, problems
}

func (v *verifier) readBack(epid string, f upload.File) error {
	r, err := v.up.OpenFile(context.Background(), epid, f)
	if err != nil {
		return err
	}
	defer r.Close()
	h := sha1.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA1 || n != f.Size {
		return errors.New("half-written: " + strconv.FormatInt(n, 10) + " bytes, SHA-1 " + sum + ", the record says " + strconv.FormatInt(f.Size, 10) + " and " + f.SHA1)
	}
	return nil
}
