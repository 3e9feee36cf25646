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
// Records and queue sit behind Store (store.go), whose embedded
// implementation is Pebble (pebble.go documents its keys). A PostgreSQL
// implementation for several nodes replaces it without touching the
// stages: Update is a transaction locking the mailings' rows, Claim is
// SELECT … FOR UPDATE SKIP LOCKED with a lease. TestStore is the
// conformance test any implementation passes.
//
// # Concurrency
//
// Store methods are safe for concurrent use. Updates of one mailing are
// serialised; a job is held by one worker at a time (a lease); workers of
// different mailings run in parallel (Runner).
package pipeline
