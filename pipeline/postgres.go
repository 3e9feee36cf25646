package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/pgdb"
)

// PostgresOptions tunes a PostgresStore. The zero value means the
// documented defaults.
type PostgresOptions struct {
	// Node names this node in lease_owner (default: host name, process id
	// and a random suffix, new at every start). A store opened under a
	// name frees the leases still held under it: they are its previous
	// run's. Give a name only when no other running node has it.
	Node string
	// Lease is how long a claim holds a job without being renewed
	// (default 2 minutes): a node that dies loses its jobs this long
	// after its last renewal.
	Lease time.Duration
	// Renew is how often the leases this store holds are renewed
	// (default Lease/3; negative: never, which tests use for a node that
	// stalls).
	Renew time.Duration
	// Metrics receives lodge_queue_jobs{kind} (queue depth, read from
	// the database every GaugeEvery, default 15 s) and
	// lodge_queue_lease_expiries_total (claims that took a job over from
	// an expired lease); nil for none.
	Metrics    *metrics.Set
	GaugeEvery time.Duration
	Log        *slog.Logger
}

func (o PostgresOptions) withDefaults() PostgresOptions {
	if o.Node == "" {
		host, _ := os.Hostname()
		var b [4]byte
		rand.Read(b[:])
		o.Node = fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	if o.Lease <= 0 {
		o.Lease = 2 * time.Minute
	}
	if o.Renew == 0 {
		o.Renew = o.Lease / 3
	}
	if o.GaugeEvery <= 0 {
		o.GaugeEvery = 15 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return o
}

// PostgresStore is the Store of several nodes sharing one PostgreSQL
// database (migration 0300_pipeline documents the tables; doc.go the
// locking). Any number of PostgresStore values, in one process or many,
// may work on one database at once.
type PostgresStore struct {
	db     *pgdb.DB
	opt    PostgresOptions
	ctx    context.Context // ended by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool

	mu   sync.Mutex
	held map[int64]struct{} // leases this store holds: renewed

	expiries *metrics.Counter
	depthMu  sync.Mutex
	depth    map[string]float64 // jobs per kind, as last read

	wakeMu sync.Mutex
	wakes  []func() // OnJobs
	// listening: LISTEN took and the wake that follows it was made (tests)
	listening atomic.Bool
}

// jobsChannel is the channel every commit that queues jobs notifies (at
// commit, once per transaction), and that each store LISTENs on: the
// runners of every node look at the queue then, not at their next poll.
const jobsChannel = "lodge_jobs"

// OnJobs calls wake whenever a node (this one included) commits queued
// jobs, and once each time this store starts listening (jobs may have
// been queued while it did not). The runners over the store register
// their Wake here (NewRunner).
func (s *PostgresStore) OnJobs(wake func()) {
	s.wakeMu.Lock()
	s.wakes = append(s.wakes, wake)
	s.wakeMu.Unlock()
}

func (s *PostgresStore) wakeAll() {
	s.wakeMu.Lock()
	wakes := slices.Clone(s.wakes)
	s.wakeMu.Unlock()
	for _, w := range wakes {
		w()
	}
}

// listenJobs wakes the runners at every notification on jobsChannel
// (pgdb.Listen), and each time it listens anew, until Close. While no
// connection listens, the runners' poll still finds the jobs.
func (s *PostgresStore) listenJobs() {
	defer s.wg.Done()
	s.db.Listen(s.ctx, jobsChannel, "mailroom", s.opt.Log, func(context.Context, *pgx.Conn) error {
		s.wakeAll() // what was queued while nobody listened
		s.listening.Store(true)
		return nil
	}, func(string) { s.wakeAll() })
	s.listening.Store(false)
}

var errClosed = errors.New("pipeline: store closed")

var _ Store = (*PostgresStore)(nil)

// OpenPostgres returns a store on db, whose schema pgdb.Open brought up
// to date. The caller closes db after the store.
func OpenPostgres(db *pgdb.DB, opt PostgresOptions) (*PostgresStore, error) {
	opt = opt.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	s := &PostgresStore{db: db, opt: opt, ctx: ctx, cancel: cancel, held: map[int64]struct{}{}, depth: map[string]float64{}}
	// the leases of this node's previous run: nobody works on them now
	if _, err := db.Pool.Exec(ctx, `UPDATE pipeline_jobs SET lease = NULL, lease_owner = NULL, lease_expires = NULL WHERE lease_owner = $1`, opt.Node); err != nil {
		cancel()
		return nil, fmt.Errorf("mailroom store: %w", err)
	}
	s.wg.Add(1)
	go s.listenJobs()
	if opt.Metrics != nil {
		s.expiries = opt.Metrics.GetOrCreateCounter(`lodge_queue_lease_expiries_total`)
		if err := s.readDepth(); err != nil {
			cancel()
			return nil, fmt.Errorf("mailroom store: %w", err)
		}
		s.every(opt.GaugeEvery, func() {
			if err := s.readDepth(); err != nil && s.ctx.Err() == nil {
				s.opt.Log.Warn("mailroom queue depth", "err", err)
			}
		})
	}
	if opt.Renew > 0 {
		s.every(opt.Renew, func() {
			if err := s.renew(); err != nil && s.ctx.Err() == nil {
				s.opt.Log.Warn("mailroom lease renewal", "err", err)
			}
		})
	}
	return s, nil
}

// every runs fn every d until Close.
func (s *PostgresStore) every(d time.Duration, fn func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-t.C:
				fn()
			}
		}
	}()
}

// Close stops renewing this store's leases (jobs still claimed go to
// other nodes when the leases expire, as a killed node's do) and ends
// its calls under way. It leaves db open; closing again does nothing.
func (s *PostgresStore) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.cancel()
	s.wg.Wait()
	return nil
}

// Node returns the name this store's leases are held under.
func (s *PostgresStore) Node() string { return s.opt.Node }

// renew extends the leases this store holds. Rows locked by a
// transaction under way (one ending the job) are skipped rather than
// waited for.
func (s *PostgresStore) renew() error {
	s.mu.Lock()
	tokens := slices.Collect(maps.Keys(s.held))
	s.mu.Unlock()
	if len(tokens) == 0 {
		return nil
	}
	_, err := s.db.Pool.Exec(s.ctx, `UPDATE pipeline_jobs SET lease_expires = now() + $2 * interval '1 microsecond'
		WHERE id IN (SELECT id FROM pipeline_jobs WHERE lease = ANY($1) FOR UPDATE SKIP LOCKED)`,
		tokens, s.opt.Lease.Microseconds())
	return err
}

// readDepth reads the number of jobs per kind for lodge_queue_jobs.
func (s *PostgresStore) readDepth() error {
	rows, err := s.db.Pool.Query(s.ctx, `SELECT kind, count(*) FROM pipeline_jobs GROUP BY kind`)
	if err != nil {
		return err
	}
	depth := map[string]float64{}
	var kind string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&kind, &n}, func() error {
		depth[kind] = float64(n)
		return nil
	})
	if err != nil {
		return err
	}
	s.depthMu.Lock()
	old := s.depth
	s.depth = depth
	s.depthMu.Unlock()
	for k := range depth {
		if _, seen := old[k]; !seen {
			s.opt.Metrics.GetOrCreateGauge(fmt.Sprintf(`lodge_queue_jobs{kind=%q}`, k), func() float64 {
				s.depthMu.Lock()
				defer s.depthMu.Unlock()
				return s.depth[k]
			})
		}
	}
	// a kind that emptied keeps its gauge, at 0
	s.depthMu.Lock()
	for k := range old {
		if _, ok := s.depth[k]; !ok {
			s.depth[k] = 0
		}
	}
	s.depthMu.Unlock()
	return nil
}

// newLeaseToken is a claim's lease: 63 random bits, never 0 (a Job's
// "not claimed"). Random rather than from a sequence, so that no number
// handed out before a crash of the database is handed out again after.
func newLeaseToken() int64 {
	var b [8]byte
	for {
		rand.Read(b[:])
		if t := int64(binary.BigEndian.Uint64(b[:]) >> 1); t != 0 {
			return t
		}
	}
}

func (s *PostgresStore) hold(token int64) {
	s.mu.Lock()
	s.held[token] = struct{}{}
	s.mu.Unlock()
}

func (s *PostgresStore) release(tokens ...int64) {
	s.mu.Lock()
	for _, t := range tokens {
		delete(s.held, t)
	}
	s.mu.Unlock()
}

// lockKey is the advisory lock key of a name in a space (mailing, job):
// 64 bits of FNV-1a. Two names that share a key only serialise more.
func lockKey(space, name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(space))
	h.Write([]byte{0})
	h.Write([]byte(name))
	return int64(h.Sum64())
}

func sortedKeys(keys []int64) []int64 {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	return slices.Compact(keys)
}

// The statements of a transaction. The advisory locks are taken in the
// order of the array (unnest emits it in order), which is sorted: two
// transactions wait for each other's locks in one order only.
const (
	sqlLock        = `SELECT pg_advisory_xact_lock(k) FROM unnest($1::bigint[]) AS k`
	sqlMailingsFor = `SELECT epid, rec, counts FROM pipeline_mailings WHERE epid = ANY($1)`
	sqlInsMailing  = `INSERT INTO pipeline_mailings (epid, account, created_ns, rec, counts, summary, title_fold, dept_fold)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
	sqlPutMailing = sqlInsMailing + ` ON CONFLICT (epid) DO UPDATE SET account = excluded.account, created_ns = excluded.created_ns,
		rec = excluded.rec, counts = excluded.counts, summary = excluded.summary, title_fold = excluded.title_fold, dept_fold = excluded.dept_fold`
	sqlPutCounts  = `UPDATE pipeline_mailings SET counts = $2, summary = $3 WHERE epid = $1`
	sqlPutLetters = `INSERT INTO pipeline_letters (epid, idx, account, ref, status, failover_ns, rec)
		SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::bytea[], $5::text[], $6::bigint[], $7::bytea[])
		ON CONFLICT (epid, idx) DO UPDATE SET account = excluded.account, ref = excluded.ref, status = excluded.status,
		failover_ns = excluded.failover_ns, rec = excluded.rec`
	sqlPutBatch = `INSERT INTO pipeline_batches (id, epid, state, created_ns, rec) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET epid = excluded.epid, state = excluded.state, created_ns = excluded.created_ns, rec = excluded.rec`
	sqlPutAlias = `INSERT INTO pipeline_aliases (alias, epid, idx) VALUES ($1, $2, $3)
		ON CONFLICT (alias) DO UPDATE SET epid = excluded.epid, idx = excluded.idx`
	// AddJob: the job of the same kind and key that is queued and not
	// claimed (or whose claim expired) gives way to the new one.
	sqlAddJob = `WITH gone AS (DELETE FROM pipeline_jobs WHERE kind = $1 AND key = $2 AND (lease IS NULL OR lease_expires < now()))
		INSERT INTO pipeline_jobs (kind, key, due_ns, rec) VALUES ($1, $2, $3, $4)`
	sqlEndJob = `SELECT pipeline_end_job($1)`
	sqlClaim  = `WITH c AS (
			SELECT id, lease IS NOT NULL AS expired FROM pipeline_jobs
			WHERE kind = ANY($1::text[]) AND due_ns <= $2 AND (lease IS NULL OR lease_expires < now())
			ORDER BY due_ns, kind, key
			LIMIT 1 FOR UPDATE SKIP LOCKED)
		UPDATE pipeline_jobs j SET lease = $5, lease_owner = $3,
			lease_expires = now() + $4 * interval '1 microsecond'
		FROM c WHERE j.id = c.id
		RETURNING j.rec, c.expired`
	// Retry, after ending the job: queued again unless a job of its kind
	// and key was queued meanwhile.
	sqlRequeue = `INSERT INTO pipeline_jobs (kind, key, due_ns, rec) SELECT $1::text, $2::text, $3::bigint, $4::bytea
		WHERE NOT EXISTS (SELECT 1 FROM pipeline_jobs WHERE kind = $1 AND key = $2)`
)

// letterChunk is how many letters one statement writes.
const letterChunk = 2000

// Submit implements Store: one round trip (the lock, the rows and the
// commit in one batch). A mailing recorded already fails the insert of
// its row: ErrExists.
func (s *PostgresStore) Submit(m Mailing, letters []Letter, jobs []Job) error {
	if s.closed.Load() {
		return errClosed
	}
	conn, err := s.db.Pool.Acquire(s.ctx)
	if err != nil {
		return err
	}
	defer s.releaseConn(conn)
	t := s.newTx(conn, []string{m.EPID})
	t.submit = true
	t.fetched[m.EPID] = nil // known: no row
	m.Letters = len(letters)
	t.PutMailing(m)
	for _, l := range letters {
		t.PutLetter(l)
	}
	for _, j := range jobs {
		t.AddJob(j)
	}
	if t.err != nil {
		return t.err
	}
	return t.commit()
}

// Update implements Store. The transaction takes the mailings' advisory
// locks and reads their rows in its first round trip; fn's writes are
// kept in the transaction and sent with the commit in its last. fn reads
// through tx only: the transaction holds a connection of the pool, and a
// call of the store inside fn would wait for another.
func (s *PostgresStore) Update(epids []string, fn func(Tx) error) error {
	if s.closed.Load() {
		return errClosed
	}
	conn, err := s.db.Pool.Acquire(s.ctx)
	if err != nil {
		return err
	}
	defer s.releaseConn(conn)
	t := s.newTx(conn, epids)
	if len(epids) > 0 {
		if err := t.begin(); err != nil {
			return err
		}
	}
	if err := fn(t); err != nil {
		return err
	}
	if t.err != nil {
		return t.err
	}
	return t.commit()
}

// releaseConn gives a connection back, rolling back a transaction left
// open by a failure.
func (s *PostgresStore) releaseConn(conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() != 'I' {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conn.Exec(ctx, "rollback")
		cancel()
	}
	conn.Release()
}

// Claim implements Store: the earliest due job of kinds that nobody
// holds (or whose holder's lease expired), locked with SKIP LOCKED so
// that claims on several nodes never wait for or take the same row, and
// given a new lease in the same statement. Jobs due at the same instant
// go in kind, then key order (byte order): the index's order, so a claim
// reads no more than the jobs ahead of it. (Pebble takes the kinds in
// the order given; the runner gives them sorted, so the two agree.)
func (s *PostgresStore) Claim(kinds []string, now time.Time) (Job, bool, error) {
	if s.closed.Load() {
		return Job{}, false, errClosed
	}
	var (
		rec     []byte
		expired bool
		found   bool
	)
	token := newLeaseToken()
	// A claim's commit need not reach the disk before the answer
	// (synchronous_commit off): a claim lost in a crash of the database
	// only leaves its job unclaimed (its lease, a random number, is then
	// held by nobody: its holder's DoneJob finds the lease lost), and the
	// commit that ends the job, which does wait, writes the claim's
	// record before its own. One round trip, and no disk flush of its
	// own.
	b := &pgx.Batch{}
	b.Queue("begin")
	b.Queue("SET LOCAL synchronous_commit = off")
	claim := b.Queue(sqlClaim, kinds, now.UnixNano(), s.opt.Node, s.opt.Lease.Microseconds(), token)
	b.Queue("commit")
	claim.QueryRow(func(row pgx.Row) error {
		err := row.Scan(&rec, &expired)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	if err := s.db.Pool.SendBatch(s.ctx, b).Close(); err != nil {
		return Job{}, false, err
	}
	if !found {
		return Job{}, false, nil
	}
	var j Job
	if err := json.Unmarshal(rec, &j); err != nil {
		return Job{}, false, fmt.Errorf("job %d: %w", token, err)
	}
	j.lease = uint64(token)
	s.hold(token)
	if expired && s.expiries != nil {
		s.expiries.Inc()
	}
	return j, true, nil
}

// Unclaim implements Store.
func (s *PostgresStore) Unclaim(j Job) bool {
	if j.lease == 0 {
		return false
	}
	s.release(int64(j.lease))
	tag, err := s.db.Pool.Exec(s.ctx, `UPDATE pipeline_jobs SET lease = NULL, lease_owner = NULL, lease_expires = NULL WHERE lease = $1`, int64(j.lease))
	return err == nil && tag.RowsAffected() == 1
}

// NextDue implements Store; a job whose claim expired counts as
// unclaimed.
func (s *PostgresStore) NextDue(kinds []string) (time.Time, bool, error) {
	var rec []byte
	err := s.db.Pool.QueryRow(s.ctx, `SELECT rec FROM pipeline_jobs
		WHERE kind = ANY($1::text[]) AND (lease IS NULL OR lease_expires < now()) ORDER BY due_ns LIMIT 1`, kinds).Scan(&rec)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	var j Job
	if err := json.Unmarshal(rec, &j); err != nil {
		return time.Time{}, false, err
	}
	return j.Due, true, nil
}

// queryRecs runs a query whose rows are one JSON record each and decodes
// them.
func queryRecs[T any](ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, sql string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	var out []T
	var rec []byte
	_, err = pgx.ForEachRow(rows, []any{&rec}, func() error {
		var v T
		if err := json.Unmarshal(rec, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

func queryRec[T any](ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, sql string, args ...any) (T, error) {
	var v T
	var rec []byte
	err := q.QueryRow(ctx, sql, args...).Scan(&rec)
	if errors.Is(err, pgx.ErrNoRows) {
		return v, ErrNotFound
	}
	if err != nil {
		return v, err
	}
	err = json.Unmarshal(rec, &v)
	return v, err
}

// limitArg is a LIMIT's argument: NULL (no limit) for limit <= 0.
func limitArg(limit int) *int64 {
	if limit <= 0 {
		return nil
	}
	n := int64(limit)
	return &n
}

// Mailing implements Store.
func (s *PostgresStore) Mailing(epid string) (Mailing, error) {
	return queryRec[Mailing](s.ctx, s.db.Pool, `SELECT rec FROM pipeline_mailings WHERE epid = $1`, epid)
}

const sqlLettersFrom = `SELECT rec FROM pipeline_letters WHERE epid = $1 AND idx >= $2 ORDER BY idx LIMIT $3`

// Letters implements Store.
func (s *PostgresStore) Letters(epid string, from, limit int) ([]Letter, error) {
	return queryRecs[Letter](s.ctx, s.db.Pool, sqlLettersFrom, epid, max(from, 0), limitArg(limit))
}

// Counts implements Store.
func (s *PostgresStore) Counts(epid string) (map[string]int, error) {
	var b []byte
	err := s.db.Pool.QueryRow(s.ctx, `SELECT counts FROM pipeline_mailings WHERE epid = $1`, epid).Scan(&b)
	c := map[string]int{}
	if errors.Is(err, pgx.ErrNoRows) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	err = json.Unmarshal(b, &c)
	return c, err
}

// LettersByRef implements Store: oldest mailing first, then by EPID and
// index, as the embedded store's reference keys.
func (s *PostgresStore) LettersByRef(account, ref string) ([]Letter, error) {
	return queryRecs[Letter](s.ctx, s.db.Pool, `SELECT l.rec FROM pipeline_letters l JOIN pipeline_mailings m ON m.epid = l.epid
		WHERE l.account = $1 AND l.ref = $2 ORDER BY m.created_ns, l.epid, l.idx`, account, []byte(ref))
}

// Mailings implements Store.
func (s *PostgresStore) Mailings(account string, before time.Time, limit int) ([]Mailing, error) {
	if before.IsZero() {
		return queryRecs[Mailing](s.ctx, s.db.Pool, `SELECT rec FROM pipeline_mailings WHERE account = $1
			ORDER BY created_ns DESC, epid LIMIT $2`, account, limitArg(limit))
	}
	return queryRecs[Mailing](s.ctx, s.db.Pool, `SELECT rec FROM pipeline_mailings WHERE account = $1 AND created_ns < $2
		ORDER BY created_ns DESC, epid LIMIT $3`, account, before.UnixNano(), limitArg(limit))
}

// SearchMailings implements Store. One query numbers the account's
// mailings in list order from the query's place on (at most MaxScan+1 of
// them), tests the filters on the summary columns, and returns the
// matches and the mailings at MaxScan and MaxScan+1, in order, until the
// page is full: the page, Scanned and Next are then worked out as the
// embedded store's scan does. When the matches run out before the page
// is full, a second query counts the mailings examined.
func (s *PostgresStore) SearchMailings(q MailingQuery) (MailingPage, error) {
	var page MailingPage
	if err := q.validate(); err != nil {
		return page, err
	}
	args := []any{q.Account}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := "account = $1"
	if !q.After.IsZero() {
		c, e := arg(q.After.Created.UnixNano()), arg(q.After.EPID)
		where += " AND created_ns <= " + c + " AND (created_ns < " + c + " OR epid > " + e + ")"
	}
	if !q.From.IsZero() {
		where += " AND created_ns >= " + arg(q.From.UnixNano())
	}
	if !q.Before.IsZero() {
		where += " AND created_ns < " + arg(q.Before.UnixNano())
	}
	countArgs := slices.Clone(args)
	var hit []string
	if q.Text != "" {
		t := arg([]byte(strings.ToLower(q.Text)))
		hit = append(hit, "(position("+t+" in title_fold) > 0 OR position("+t+" in dept_fold) > 0)")
	}
	if q.Status != "" {
		hit = append(hit, "COALESCE((counts->>"+arg(q.Status)+")::bigint, 0) > 0")
	}
	filtered := len(hit) > 0
	if !filtered {
		hit = []string{"true"}
	}
	inner := "SELECT epid, created_ns, summary, " + strings.Join(hit, " AND ") + " AS hit, row_number() OVER (ORDER BY created_ns DESC, epid) AS n" +
		" FROM pipeline_mailings WHERE " + where + " ORDER BY created_ns DESC, epid"
	outer := "hit"
	if q.MaxScan > 0 {
		inner += " LIMIT " + arg(int64(q.MaxScan)+1)
		outer += " OR n >= " + arg(int64(q.MaxScan))
	}
	sql := "SELECT n, hit, epid, created_ns, summary FROM (" + inner + ") s WHERE " + outer + " ORDER BY n"
	if q.Limit > 0 {
		sql += " LIMIT " + arg(int64(q.Limit)+3)
	}
	rows, err := s.db.Pool.Query(s.ctx, sql, args...)
	if err != nil {
		return page, err
	}
	var (
		n, created int64
		isHit      bool
		epid       string
		sum        []byte
		v          summaryView
		last       MailingCursor
		more       bool
		stopped    bool
		atMax      bool // the mailing at MaxScan was seen
	)
	for rows.Next() {
		if err := rows.Scan(&n, &isHit, &epid, &created, &sum); err != nil {
			rows.Close()
			return MailingPage{}, err
		}
		if q.MaxScan > 0 && n > int64(q.MaxScan) {
			page.Bounded, stopped = true, true
			break
		}
		atMax = atMax || n == int64(q.MaxScan)
		page.Scanned = int(n)
		last = MailingCursor{Created: time.Unix(0, created).UTC(), EPID: epid}
		if !isHit {
			continue
		}
		if q.Limit > 0 && len(page.Mailings) == q.Limit {
			more, stopped = true, true
			break
		}
		if err := v.decode(sum); err != nil {
			rows.Close()
			return MailingPage{}, fmt.Errorf("summary of mailing %s: %w", epid, err)
		}
		page.Mailings = append(page.Mailings, v.summary(q.Account, epid, last.Created))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return MailingPage{}, err
	}
	if !stopped && filtered && !atMax {
		// every mailing in range was examined: how many there are
		csql := "SELECT count(*) FROM pipeline_mailings WHERE " + where
		var c int64
		if err := s.db.Pool.QueryRow(s.ctx, csql, countArgs...).Scan(&c); err != nil {
			return MailingPage{}, err
		}
		page.Scanned = int(c)
	}
	page.finish(q.Limit, more, func() MailingCursor { return last })
	return page, nil
}

// Batch implements Store.
func (s *PostgresStore) Batch(id string) (Batch, error) {
	return queryRec[Batch](s.ctx, s.db.Pool, `SELECT rec FROM pipeline_batches WHERE id = $1`, id)
}

// Batches implements Store.
func (s *PostgresStore) Batches(state string) ([]Batch, error) {
	if state == "" {
		return queryRecs[Batch](s.ctx, s.db.Pool, `SELECT rec FROM pipeline_batches ORDER BY created_ns, id`)
	}
	return queryRecs[Batch](s.ctx, s.db.Pool, `SELECT rec FROM pipeline_batches WHERE state = $1 ORDER BY created_ns, id`, state)
}

// Jobs implements Store.
func (s *PostgresStore) Jobs() ([]Job, error) {
	return queryRecs[Job](s.ctx, s.db.Pool, `SELECT rec FROM pipeline_jobs ORDER BY kind, due_ns, key, id`)
}

// Failovers implements Store.
func (s *PostgresStore) Failovers(account string, limit int) ([]Letter, error) {
	return queryRecs[Letter](s.ctx, s.db.Pool, `SELECT rec FROM pipeline_letters WHERE account = $1 AND failover_ns IS NOT NULL
		ORDER BY failover_ns DESC, epid, idx LIMIT $2`, account, limitArg(limit))
}

// Alias implements Store.
func (s *PostgresStore) Alias(alias string) (string, int, error) {
	var epid string
	var idx int
	err := s.db.Pool.QueryRow(s.ctx, `SELECT epid, idx FROM pipeline_aliases WHERE alias = $1`, []byte(alias)).Scan(&epid, &idx)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, ErrNotFound
	}
	return epid, idx, err
}

// pgTx is a transaction of PostgresStore.Update. Writes are kept here
// (encoded, as they will be sent) and sent with the commit; reads look
// here first, then at the database inside the transaction.
type pgTx struct {
	s      *PostgresStore
	conn   *pgxpool.Conn
	ctx    context.Context
	epids  []string
	begun  bool // BEGIN sent and the mailings locked
	submit bool // Store.Submit: the mailing is inserted, never replaced

	// fetched are the locked mailings' rows as the transaction found
	// them (nil: no row).
	fetched map[string]*mailingRow
	// base is the stored status of the letters of the locked mailings
	// that were read ("": no such letter), for the counts.
	base map[string]map[int]string
	// ahead are letters of the locked mailings read ahead by Letter
	// (nil: no such letter); misses and kept size the reads.
	ahead  map[string]map[int][]byte
	misses int
	kept   int

	mailings map[string][]byte // put: JSON
	letters  map[string]map[int]*letterPut
	batches  map[string]*batchPut
	aliases  map[string]aliasRec
	jobs     []jobOp
	err      error
}

type mailingRow struct {
	rec    []byte
	counts map[string]int
}

type letterPut struct {
	rec      []byte
	account  string
	ref      []byte // nil: none
	status   string
	failover *int64
}

type batchPut struct {
	rec     []byte
	epid    string
	state   string
	created int64
}

type jobOp struct {
	kind  int // jobAdd, jobDone, jobRetry
	job   Job
	rec   []byte // the job queued (add, retry)
	token int64  // the lease ended (done, retry)
}

const (
	jobAdd = iota
	jobDone
	jobRetry
)

func (s *PostgresStore) newTx(conn *pgxpool.Conn, epids []string) *pgTx {
	return &pgTx{s: s, conn: conn, ctx: s.ctx, epids: epids, fetched: map[string]*mailingRow{}, base: map[string]map[int]string{}, ahead: map[string]map[int][]byte{},
		mailings: map[string][]byte{}, letters: map[string]map[int]*letterPut{}, batches: map[string]*batchPut{}, aliases: map[string]aliasRec{}}
}

func (t *pgTx) mailingKeys() []int64 {
	keys := make([]int64, 0, len(t.epids))
	for _, e := range t.epids {
		keys = append(keys, lockKey("mailing", e))
	}
	return sortedKeys(keys)
}

// begin opens the transaction, takes the mailings' locks and reads their
// rows: one round trip.
func (t *pgTx) begin() error {
	b := &pgx.Batch{}
	b.Queue("begin")
	b.Queue(sqlLock, t.mailingKeys())
	b.Queue(sqlMailingsFor, t.epids)
	br := t.conn.SendBatch(t.ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return err
	}
	if _, err := br.Exec(); err != nil {
		return err
	}
	for _, e := range t.epids {
		t.fetched[e] = nil
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	var (
		epid   string
		rec    []byte
		counts []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&epid, &rec, &counts}, func() error {
		r := &mailingRow{rec: slices.Clone(rec), counts: map[string]int{}}
		if err := json.Unmarshal(counts, &r.counts); err != nil {
			return fmt.Errorf("counts of mailing %s: %w", epid, err)
		}
		t.fetched[epid] = r
		return nil
	})
	if err != nil {
		return err
	}
	t.begun = true
	return br.Close()
}

func (t *pgTx) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

func (t *pgTx) owns(epid string) bool {
	if !slices.Contains(t.epids, epid) {
		t.fail(fmt.Errorf("pipeline: transaction over %v writes mailing %s", t.epids, epid))
		return false
	}
	return true
}

func (t *pgTx) locked(epid string) bool {
	_, ok := t.fetched[epid]
	return ok
}

func (t *pgTx) Mailing(epid string) (Mailing, error) {
	var m Mailing
	if rec, ok := t.mailings[epid]; ok {
		return m, json.Unmarshal(rec, &m)
	}
	if r, ok := t.fetched[epid]; ok {
		if r == nil {
			return m, ErrNotFound
		}
		return m, json.Unmarshal(r.rec, &m)
	}
	return queryRec[Mailing](t.ctx, t.conn, `SELECT rec FROM pipeline_mailings WHERE epid = $1`, epid)
}

// noteBase records the stored status of letters read from the database.
func (t *pgTx) noteBase(epid string, idx int, status string) {
	if !t.locked(epid) {
		return
	}
	b := t.base[epid]
	if b == nil {
		b = map[int]string{}
		t.base[epid] = b
	}
	if _, ok := b[idx]; !ok {
		b[idx] = status
	}
}

// Tx.Letter reads ahead: the letters of a locked mailing cannot change
// under the transaction, so a read that misses fetches the letters from
// the one asked for on, 1 the first time, twice as many at each miss
// after (up to readAheadMax), and keeps them (up to readAheadKeep in
// all). A transaction over one letter reads one; a stage that reads a
// mailing's letters one by one, in any order, pays a few round trips
// rather than one a letter.
const (
	readAheadMax  = 1024
	readAheadKeep = 20000
)

func (t *pgTx) Letter(epid string, idx int) (Letter, error) {
	var l Letter
	if p := t.letters[epid][idx]; p != nil {
		return l, json.Unmarshal(p.rec, &l)
	}
	if !t.locked(epid) {
		return queryRec[Letter](t.ctx, t.conn, `SELECT rec FROM pipeline_letters WHERE epid = $1 AND idx = $2`, epid, idx)
	}
	if t.fetched[epid] == nil {
		return l, ErrNotFound // no mailing: no letters
	}
	if rec, ok := t.ahead[epid][idx]; ok {
		if rec == nil {
			return l, ErrNotFound
		}
		return l, json.Unmarshal(rec, &l)
	}
	n := min(1<<min(t.misses, 30), readAheadMax)
	t.misses++
	rows, err := t.conn.Query(t.ctx, `SELECT idx, status, rec FROM pipeline_letters WHERE epid = $1 AND idx >= $2 ORDER BY idx LIMIT $3`, epid, idx, n)
	if err != nil {
		return l, err
	}
	var (
		i      int
		status string
		rec    []byte
		found  []byte
	)
	kept := t.ahead[epid]
	if kept == nil {
		kept = map[int][]byte{}
		t.ahead[epid] = kept
	}
	_, err = pgx.ForEachRow(rows, []any{&i, &status, &rec}, func() error {
		t.noteBase(epid, i, status)
		if i == idx {
			found = slices.Clone(rec)
		}
		if t.kept < readAheadKeep {
			kept[i] = slices.Clone(rec)
			t.kept++
		}
		return nil
	})
	if err != nil {
		return l, err
	}
	if found == nil {
		t.noteBase(epid, idx, "")
		kept[idx] = nil
		return l, ErrNotFound
	}
	return l, json.Unmarshal(found, &l)
}

func (t *pgTx) Letters(epid string) ([]Letter, error) { return t.LettersPage(epid, 0, 0) }

// LettersPage merges the stored page with the transaction's letters: of
// the stored letters from index from on, limit are read; the
// transaction's own, put over them or new, are merged in by index, and
// the first limit are the page.
func (t *pgTx) LettersPage(epid string, from, limit int) ([]Letter, error) {
	from = max(from, 0)
	var stored []Letter
	if t.fetched[epid] != nil || !t.locked(epid) {
		var err error
		stored, err = queryRecs[Letter](t.ctx, t.conn, sqlLettersFrom, epid, from, limitArg(limit))
		if err != nil {
			return nil, err
		}
		for i := range stored {
			t.noteBase(epid, stored[i].Idx, stored[i].Status)
		}
	}
	puts := t.letters[epid]
	if len(puts) == 0 {
		return stored, nil
	}
	var mine []int
	for idx := range puts {
		if idx >= from {
			mine = append(mine, idx)
		}
	}
	slices.Sort(mine)
	out := make([]Letter, 0, len(stored)+len(mine))
	i, j := 0, 0
	for (i < len(stored) || j < len(mine)) && (limit <= 0 || len(out) < limit) {
		if j < len(mine) && (i == len(stored) || mine[j] <= stored[i].Idx) {
			var l Letter
			if err := json.Unmarshal(puts[mine[j]].rec, &l); err != nil {
				return nil, err
			}
			if i < len(stored) && stored[i].Idx == mine[j] {
				i++
			}
			j++
			out = append(out, l)
			continue
		}
		out = append(out, stored[i])
		i++
	}
	return out, nil
}

func (t *pgTx) Batch(id string) (Batch, error) {
	var b Batch
	if p := t.batches[id]; p != nil {
		return b, json.Unmarshal(p.rec, &b)
	}
	return queryRec[Batch](t.ctx, t.conn, `SELECT rec FROM pipeline_batches WHERE id = $1`, id)
}

func (t *pgTx) encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.fail(err)
	}
	return b
}

func (t *pgTx) PutMailing(m Mailing) {
	if !t.owns(m.EPID) {
		return
	}
	if rec := t.encode(m); t.err == nil {
		t.mailings[m.EPID] = rec
	}
}

func (t *pgTx) PutLetter(l Letter) {
	if !t.owns(l.EPID) {
		return
	}
	if _, err := t.Mailing(l.EPID); err != nil {
		t.fail(fmt.Errorf("letter %s/%d: its mailing: %w", l.EPID, l.Idx, err))
		return
	}
	rec := t.encode(l)
	if t.err != nil {
		return
	}
	p := &letterPut{rec: rec, account: l.Account, status: l.Status}
	if l.Reference != "" {
		p.ref = []byte(l.Reference)
	}
	if l.Failover != nil {
		ns := l.Failover.Time.UnixNano()
		p.failover = &ns
	}
	m := t.letters[l.EPID]
	if m == nil {
		m = map[int]*letterPut{}
		t.letters[l.EPID] = m
	}
	m[l.Idx] = p
}

func (t *pgTx) PutBatch(b Batch) {
	if !t.owns(b.EPID) {
		return
	}
	if rec := t.encode(b); t.err == nil {
		t.batches[b.ID] = &batchPut{rec: rec, epid: b.EPID, state: b.State, created: b.Created.UnixNano()}
	}
}

func (t *pgTx) PutAlias(alias, epid string, idx int) {
	if t.owns(epid) {
		t.aliases[alias] = aliasRec{EPID: epid, Idx: idx}
	}
}

func (t *pgTx) AddJob(j Job) {
	j.lease = 0
	if rec := t.encode(j); t.err == nil {
		t.jobs = append(t.jobs, jobOp{kind: jobAdd, job: j, rec: rec})
	}
}

func (t *pgTx) DoneJob(j Job) {
	t.jobs = append(t.jobs, jobOp{kind: jobDone, job: j, token: int64(j.lease)})
}

func (t *pgTx) Retry(j Job, due time.Time, reason string) {
	token := int64(j.lease)
	j.Due, j.Attempts, j.Error, j.lease = due, j.Attempts+1, reason, 0
	if rec := t.encode(j); t.err == nil {
		t.jobs = append(t.jobs, jobOp{kind: jobRetry, job: j, rec: rec, token: token})
	}
}

// readBases reads, in one round trip, the stored status of the letters
// put whose status the transaction has not seen.
func (t *pgTx) readBases() error {
	var epids []string
	var idxs []int32
	for epid, puts := range t.letters {
		if t.fetched[epid] == nil {
			continue // a new mailing: every letter is new
		}
		for idx := range puts {
			if _, ok := t.base[epid][idx]; !ok {
				epids = append(epids, epid)
				idxs = append(idxs, int32(idx))
				t.noteBase(epid, idx, "") // unless found below
			}
		}
	}
	if len(epids) == 0 {
		return nil
	}
	rows, err := t.conn.Query(t.ctx, `SELECT l.epid, l.idx, l.status FROM pipeline_letters l
		JOIN unnest($1::text[], $2::integer[]) AS w(epid, idx) ON l.epid = w.epid AND l.idx = w.idx`, epids, idxs)
	if err != nil {
		return err
	}
	var (
		epid   string
		idx    int
		status string
	)
	_, err = pgx.ForEachRow(rows, []any{&epid, &idx, &status}, func() error {
		t.base[epid][idx] = status
		return nil
	})
	return err
}

// commit sends the transaction's writes and its commit in one batch
// (after one more round trip when letters were put unread: their stored
// status is needed for the counts).
func (t *pgTx) commit() error {
	writes := len(t.mailings) + len(t.letters) + len(t.batches) + len(t.aliases) + len(t.jobs)
	if writes == 0 {
		if !t.begun {
			return nil
		}
		_, err := t.conn.Exec(t.ctx, "commit")
		return err
	}
	if !t.submit {
		if err := t.readBases(); err != nil {
			return err
		}
	}
	b := &pgx.Batch{}
	if !t.begun {
		b.Queue("begin")
		if len(t.epids) > 0 {
			b.Queue(sqlLock, t.mailingKeys())
		}
	}
	if len(t.jobs) > 0 {
		keys := make([]int64, 0, len(t.jobs))
		for _, op := range t.jobs {
			keys = append(keys, lockKey("job", op.job.Kind+"\x00"+op.job.Key))
		}
		b.Queue(sqlLock, sortedKeys(keys))
	}
	// the mailings: put, or their counts changed
	counts := map[string]map[string]int{}
	for epid, puts := range t.letters {
		delta := map[string]int{}
		for idx, p := range puts {
			delta[p.status]++
			if old := t.base[epid][idx]; old != "" {
				delta[old]--
			}
		}
		c := map[string]int{}
		if r := t.fetched[epid]; r != nil {
			maps.Copy(c, r.counts)
		}
		changed := false
		for st, d := range delta {
			if d != 0 {
				changed = true
			}
			if c[st] += d; c[st] == 0 {
				delete(c, st)
			}
		}
		if changed {
			counts[epid] = c
		}
	}
	touched := slices.Collect(maps.Keys(t.mailings))
	for epid := range counts {
		if _, put := t.mailings[epid]; !put {
			touched = append(touched, epid)
		}
	}
	sort.Strings(touched)
	for _, epid := range touched {
		m, err := t.Mailing(epid)
		if err != nil {
			return fmt.Errorf("summary of mailing %s: %w", epid, err)
		}
		c, ok := counts[epid]
		if !ok {
			c = map[string]int{}
			if r := t.fetched[epid]; r != nil {
				c = r.counts
			}
		}
		cj, err := json.Marshal(c)
		if err != nil {
			return err
		}
		sum := encodeSummary(&m, c)
		switch rec, put := t.mailings[epid]; {
		case put && t.submit:
			b.Queue(sqlInsMailing, epid, m.Account, m.Created.UnixNano(), rec, string(cj), sum, []byte(strings.ToLower(m.Title)), []byte(strings.ToLower(m.Department)))
		case put:
			b.Queue(sqlPutMailing, epid, m.Account, m.Created.UnixNano(), rec, string(cj), sum, []byte(strings.ToLower(m.Title)), []byte(strings.ToLower(m.Department)))
		default:
			b.Queue(sqlPutCounts, epid, string(cj), sum)
		}
	}
	// the letters, a chunk a statement
	var (
		le, la, ls []string
		li         []int32
		lr, lrec   [][]byte
		lf         []*int64
	)
	flush := func() {
		if len(le) > 0 {
			b.Queue(sqlPutLetters, le, li, la, lr, ls, lf, lrec)
			le, li, la, lr, ls, lf, lrec = nil, nil, nil, nil, nil, nil, nil
		}
	}
	for _, epid := range slices.Sorted(maps.Keys(t.letters)) {
		puts := t.letters[epid]
		for _, idx := range slices.Sorted(maps.Keys(puts)) {
			p := puts[idx]
			le, li, la, lr, ls, lf, lrec = append(le, epid), append(li, int32(idx)), append(la, p.account), append(lr, p.ref), append(ls, p.status), append(lf, p.failover), append(lrec, p.rec)
			if len(le) == letterChunk {
				flush()
			}
		}
	}
	flush()
	for _, id := range slices.Sorted(maps.Keys(t.batches)) {
		p := t.batches[id]
		b.Queue(sqlPutBatch, id, p.epid, p.state, p.created, p.rec)
	}
	for _, alias := range slices.Sorted(maps.Keys(t.aliases)) {
		a := t.aliases[alias]
		b.Queue(sqlPutAlias, []byte(alias), a.EPID, a.Idx)
	}
	var ended []int64
	queued := false
	for _, op := range t.jobs {
		j := op.job
		switch op.kind {
		case jobAdd:
			b.Queue(sqlAddJob, j.Kind, j.Key, j.Due.UnixNano(), op.rec)
			queued = true
		case jobDone:
			b.Queue(sqlEndJob, op.token)
			ended = append(ended, op.token)
		case jobRetry:
			b.Queue(sqlEndJob, op.token)
			b.Queue(sqlRequeue, j.Kind, j.Key, j.Due.UnixNano(), op.rec)
			ended = append(ended, op.token)
			queued = true
		}
	}
	if queued {
		// delivered to the listeners at commit, not before
		b.Queue(`SELECT pg_notify('` + jobsChannel + `', '')`)
	}
	b.Queue("commit")
	br := t.conn.SendBatch(t.ctx, b)
	for range b.Len() {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return t.mapErr(err)
		}
	}
	if err := br.Close(); err != nil {
		return t.mapErr(err)
	}
	t.s.release(ended...)
	return nil
}

// mapErr turns the database's errors into the Store's: a lease lost, a
// mailing submitted twice.
func (t *pgTx) mapErr(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	switch {
	case pe.Code == "LJ001":
		token, _ := strconv.ParseInt(pe.Detail, 10, 64)
		t.s.release(token)
		for _, op := range t.jobs {
			if op.token == token && op.kind != jobAdd {
				return fmt.Errorf("%w: %s %s", ErrLeaseLost, op.job.Kind, op.job.Key)
			}
		}
		return fmt.Errorf("%w: lease %d", ErrLeaseLost, token)
	case pe.Code == "23505" && pe.ConstraintName == "pipeline_mailings_pkey" && t.submit:
		return ErrExists
	}
	return err
}
