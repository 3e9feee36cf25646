// Package pipeline is the mailroom's spine: the records of mailings,
// letters and print batches, the durable queue of work, and the stages a
// mailing passes after end_session (check, hold, batch, compose and hand
// over, and print when a printer is configured), each committed before
// the next starts.
//
// # Promises
//
//   - A letter is never lost and never produced twice. A stage commits its
//     results, the removal of its job and the jobs that follow in one
//     durable transaction (fsync); a crash before that commit leaves the
//     job queued, and the stage, run again, finds in the records how far
//     the previous attempt got. A letter is assigned to a batch in the
//     same commit that creates the batch, so it is in at most one.
//   - A status says what happened: Received (accepted; being checked, or
//     waiting for its cancellation window), Held (with the reason and who
//     can lift it), Processing (in a print batch being composed or waiting
//     at the printer), Printed, Lodged (handed to the postal service, with
//     the time), Cancelled, Returned, Failed (with the reason). Every
//     change is an event on the letter's timeline.
//   - A ready batch is sent to the printer (Config.Printer) at least
//     once and, as far as the printer can tell, once: its ID names the
//     printer job, and the print stage asks the printer for a job of
//     that name before sending (print.go).
//   - Production waits for the cancellation window; cancel_letters works
//     until a letter's batch is made.
//
// # Storage
//
// Records and queue sit behind Store (store.go); TestStore is the
// conformance test every implementation passes, and the stage tests run
// over each. Two implementations:
//
//   - PebbleStore (pebble.go documents its keys): embedded, one node.
//     Claims are leases held in memory; a restart forgets them. A job's
//     key holds its due time, so a job queued with the kind, key and due
//     time of a claimed one is queued a nanosecond later: it never
//     overwrites the claimed job's record, nor is it removed by that
//     job's end (checked again under the commit's lock, for a claim made
//     while the transaction ran).
//   - PostgresStore (postgres.go): several nodes sharing one PostgreSQL
//     database (package pgdb).
//
// PostgresStore's tables (migration 0300_pipeline):
//
//	pipeline_mailings  epid, account, created_ns, rec, counts (jsonb: letters per status),
//	                   summary (summary.go's encoding), title_fold, dept_fold
//	                   index (account, created_ns DESC, epid): an account's mailings, newest first
//	pipeline_letters   (epid, idx), account, ref, status, failover_ns, rec
//	                   indexes (account, ref) and (account, failover_ns DESC, epid, idx)
//	pipeline_batches   id, epid, state, created_ns, rec; index (state, created_ns, id)
//	pipeline_aliases   alias, epid, idx
//	pipeline_jobs      id, kind, key, due_ns, rec, lease, lease_owner, lease_expires
//	                   index (due_ns, kind, key): the claim order
//
// rec is the JSON of the Go struct, the bytes Pebble keeps; times are
// Unix nanoseconds, so order and cursors are Pebble's. A summary is
// written in the commit that puts its mailing or changes its counts.
//
// # Concurrency
//
// Store methods are safe for concurrent use. Updates of one mailing are
// serialised; a job is held by one worker at a time (a lease); workers of
// different mailings run in parallel (Runner).
//
// On PostgreSQL this holds across nodes:
//
//   - Update opens a transaction (read committed) and, in its first round
//     trip, takes a transaction-scoped advisory lock per mailing
//     (pg_advisory_xact_lock on a 64-bit hash of the EPID; a shared hash
//     only serialises more) in key order, so two transactions wait for
//     each other in one order only, and reads the mailings' rows. Every
//     write to a mailing's records (its row, letters, batches, aliases;
//     Submit's insert) is made under its lock, so what the transaction
//     reads stays as read until it commits. Writes are kept in the
//     transaction (its reads see them) and sent with the COMMIT in one
//     batch, which also takes an advisory lock per kind and key of the
//     jobs written (after the mailings' locks, in key order), so "one job
//     per kind and key" holds between nodes.
//   - A commit that queues jobs (AddJob, Retry, Submit) also notifies
//     the channel lodge_jobs in its batch; every store LISTENs on it on a
//     connection of its own and wakes the runners over it (OnJobs), so
//     an idle node takes a job another node queued at once, not at its
//     next poll. A listening connection that fails is made again (50 ms
//     doubling to 5 s), with a wake each time; the poll covers the gap.
//   - Claim is one statement: the earliest due job not claimed, or whose
//     lease expired, is locked with FOR UPDATE SKIP LOCKED (claims on
//     several nodes never wait for nor take one row) and given a new
//     lease: a random number, the node's name and an expiry
//     Lease (default 2 minutes) ahead on the database's clock. Its
//     commit does not wait for the disk: a claim lost in a crash of the
//     database leaves its job to be claimed again (the holder's end of it
//     finds the lease lost). A store renews the leases it holds every
//     Lease/3 in one statement, so a job that runs long keeps its lease
//     while its node lives.
//   - DoneJob and Retry end a job only under the lease it was claimed
//     under (pipeline_end_job): when another node took the job over after
//     the lease expired, the transaction fails with ErrLeaseLost and
//     nothing of it is written, so no job is done twice to completion. A
//     lease expired but not yet taken over still ends its job.
//   - A node killed mid-job loses its leases when they expire, and its
//     jobs run again on another node, finding in the records how far the
//     killed attempt got. A node restarted under the same name
//     (PostgresOptions.Node) frees its previous run's leases at once.
//     Close leaves the leases to expire. What a stalled node did outside
//     the store after its lease was taken (a print job, an email) may be
//     done again by the node that took over: the print and send stages
//     name their work (batch ID, dedup key) so the other side can tell.
//   - Runner.Wake is per node: a job queued on another node is seen at
//     the next poll (RunnerConfig.Poll) or due time.
//
// Round trips (pgdb.DB.RoundTrips): Submit 1; an Update of one letter 3
// (locks and mailing, the letter, writes and commit); Claim 1; DoneJob
// in an Update of no mailing 1. A stage reads a mailing's letters a page,
// or a growing read-ahead (Tx.Letter), at a time: producing a mailing of
// 2,000 postal letters (submit, check, batch, compose) takes about 70.
package pipeline
