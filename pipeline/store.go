package pipeline

import (
	"errors"
	"time"
)

// Errors of a Store.
var (
	ErrNotFound = errors.New("not found")
	// ErrExists is Submit's answer for a mailing already recorded: nothing
	// changed.
	ErrExists = errors.New("mailing already recorded")
	// ErrLeaseLost is Tx.DoneJob's answer when the job is no longer
	// claimed by the caller (another worker or node took it over, or it is
	// gone): the transaction is not committed.
	ErrLeaseLost = errors.New("job lease lost")
)

// Store keeps the mailroom's records (mailings, letters, batches) and its
// queue of jobs. Every change is a transaction over the records of a few
// mailings (Update), committed durably (fsync) and atomically, so a stage
// commits its results together with the removal of the job that produced
// them and the jobs that follow: a crash resumes exactly where it stopped.
//
// The embedded implementation is Pebble (OpenPebble); the PostgreSQL
// one (OpenPostgres) maps Update to a transaction under an advisory lock
// per mailing (taken in key order), Claim to SELECT … FOR UPDATE SKIP
// LOCKED with a lease, and the reads to plain SELECTs (doc.go). The
// conformance tests in store_test.go (TestStore) run against both.
type Store interface {
	// Submit records a new mailing with its letters and first jobs in one
	// durable commit. A mailing already recorded under the EPID gives
	// ErrExists and changes nothing.
	Submit(m Mailing, letters []Letter, jobs []Job) error

	// Update runs fn over the records of the mailings epids, serialised
	// with every other Update touching one of them, and commits what fn
	// wrote when it returns nil. Reads inside fn see its own writes.
	Update(epids []string, fn func(Tx) error) error

	// Claim hands out the earliest job of one of kinds that is due at now
	// and not claimed, under a lease: until the lease is lost (a restart
	// of this node; an expiry on a shared database), no other Claim
	// returns it. ok is false when there is none.
	Claim(kinds []string, now time.Time) (job Job, ok bool, err error)
	// Unclaim gives a claimed job back, and reports whether it was still
	// claimed (not ended by DoneJob or Retry).
	Unclaim(job Job) bool
	// NextDue returns the earliest due time of the unclaimed jobs of
	// kinds; ok false when there are none.
	NextDue(kinds []string) (due time.Time, ok bool, err error)

	// Reads outside a transaction: each is consistent in itself.
	Mailing(epid string) (Mailing, error)
	// Letters returns up to limit letters of a mailing from index from on
	// (limit <= 0: all).
	Letters(epid string, from, limit int) ([]Letter, error)
	// Counts returns the number of letters of a mailing in each status.
	Counts(epid string) (map[string]int, error)
	// LettersByRef returns the account's letters with a reference, oldest
	// mailing first.
	LettersByRef(account, ref string) ([]Letter, error)
	// Mailings returns up to limit mailings of an account created before
	// before (zero: from the newest), newest first.
	Mailings(account string, before time.Time, limit int) ([]Mailing, error)
	// SearchMailings returns a page of the summaries of an account's
	// mailings that pass the query's filters, newest first (those created
	// at the same instant in EPID order), from the query's cursor on. It
	// reads kept summaries, not the mailings: a summary is current with
	// the last commit that put its mailing or changed a letter's status.
	// (PostgreSQL: the summary columns on the mailings row, an index on
	// (account, created_ns DESC, epid), WHERE (created_ns, epid) past the
	// cursor, the title and department lower-cased as Go does searched
	// with position() and a counts->status test for the filters.)
	SearchMailings(q MailingQuery) (MailingPage, error)
	// Batch returns one batch; Batches every batch in a state ("" all),
	// oldest first.
	Batch(id string) (Batch, error)
	Batches(state string) ([]Batch, error)
	// Jobs lists queued jobs, for operators and tests.
	Jobs() ([]Job, error)
	// Failovers returns up to limit (<= 0: all) letters of an account
	// that failed over to post, newest failover first.
	Failovers(account string, limit int) ([]Letter, error)
	// Alias returns the letter a gateway's id names (Tx.PutAlias);
	// ErrNotFound when none.
	Alias(alias string) (epid string, idx int, err error)

	Close() error
}

// Tx is a transaction of Store.Update. Reads see the transaction's own
// writes. Records of mailings not named to Update must not be written.
type Tx interface {
	Mailing(epid string) (Mailing, error)
	Letter(epid string, idx int) (Letter, error)
	// Letters returns every letter of a mailing, in index order.
	Letters(epid string) ([]Letter, error)
	// LettersPage returns up to limit letters of a mailing from index
	// from on: stages page through large mailings with it.
	LettersPage(epid string, from, limit int) ([]Letter, error)
	Batch(id string) (Batch, error)

	PutMailing(m Mailing)
	PutLetter(l Letter)
	PutBatch(b Batch)
	// AddJob queues a job; a job of the same kind and key already queued
	// is replaced (one job per kind and key).
	AddJob(j Job)
	// DoneJob removes a claimed job; when the caller's claim was lost,
	// the transaction fails with ErrLeaseLost.
	DoneJob(j Job)
	// Retry puts a claimed job back, due again at due, with the reason.
	Retry(j Job, due time.Time, reason string)
	// PutAlias records a gateway's id for a letter (an SMS message id
	// its delivery receipt will name).
	PutAlias(alias, epid string, idx int)
}
