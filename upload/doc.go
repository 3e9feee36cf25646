// Package upload is lodge's mail upload interface: sessions, file intake,
// metadata and mailing assembly (sections 1 to 8 of
// ../shared/spec/mail-upload-address-check.md, response layouts as in
// ../shared/docs/service-compat.md).
//
// # Durability
//
// A 201 for an uploaded file and a successful end_session mean the bytes
// and the records are on disk (fsync) and survive kill -9. A file is
// written to a new blob beside the old ones, synced, renamed into place and
// its directory synced; only then is its record committed to pebble with
// a synced batch, and only then is the old blob (of a replaced name)
// removed. A session's blob directory is synced into blobs/ when it is
// made, before any record points into it. A crash at any point leaves
// either the old record with its old blob or the new record with its new
// blob; blobs without records are removed when the store opens.
// end_session hands the mailing and its letters to the mailroom (package
// pipeline: one durable commit there), then marks the session ended (one
// here); a crash between the two is finished by the next end_session of
// the session, which finds the mailing recorded and answers as before.
// A library document the metadata names (portaldocs.go) is copied into
// the session as a file of its own (File.Portal) by the same durable
// steps, before the mailroom gets the mailing.
// From then on the letters, their statuses and their production are the
// mailroom's; this package keeps the session, its files and their bytes
// until the mailroom says they are no longer needed (Options.Keep).
//
// # Lifecycle and retention
//
// A session is open until it ends (end_session), expires (its
// Options.SessionTTL, default 24 h, runs out: the janitor deletes its
// files) or is abandoned (a failed mpf_upload: its files are deleted at
// once). The
// documents of an ended mailing are kept while the mailroom needs them
// (Options.Keep) and purged by it (PurgeMailing) once its letters are
// produced and the preview period is over; a mailing the mailroom does not
// know is purged by the janitor Options.Retention (default 30 days,
// DefaultRetention) after it ended. The session and file records stay. The janitor (Sweep, every minute) and
// start-up read only indexes of the work that can be due: open sessions by
// expiry, kept documents by end time, and closings in progress; their cost
// is that of the open sessions and of the work due, not of the history.
// Start-up removes, in open sessions' directories only, temporary files
// and blobs without a record (ended sessions take no more files), and
// finishes the closings a stop interrupted. A store written before the
// indexes builds them once when it opens (and tidies every blob directory
// as start-up then did).
//
// # On-disk layout
//
//	<dir>/db/                       pebble: the records below
//	<dir>/blobs/<epid>/<rand>.blob   file contents, a random name per upload
//	<dir>/blobs/<epid>/.tmp-*        uploads in progress (removed on open)
//
// Pebble keys, prefix "upload/v1/", JSON values:
//
//	session/<epid>                Session
//	file/<epid>/<name>            File (name as uploaded, case kept)
//	acct/<account>/<^created:%016x>/<epid>         sessions by account (the epid),
//	                              newest first: ^created is the bitwise NOT of the
//	                              creation time in Unix nanoseconds; written in the
//	                              same batch as every session record
//	open/<expires:%016x>/<epid>   every open session (the epid), by expiry time
//	                              (Unix nanoseconds); written and deleted in the
//	                              same batch as the session record
//	kept/<ended:%016x>/<epid>     every ended mailing whose documents are still
//	                              stored (the epid), by end time; likewise
//	purge/<epid>                  a closed (expired or abandoned) session whose
//	                              blob directory is being removed: committed
//	                              with the closing, deleted once it is gone
//	indexes                       the version of the open/, kept/ and purge/
//	                              indexes (1); a store without it builds them
//	                              when it opens
//
// # Metrics and logs
//
// The store counts sessions, files, bytes, mailings, letters by status and
// refused upload requests by reason on Options.Metrics (metrics.go lists
// them); an accepted mailing is logged at INFO. A client's mistakes are
// answered and counted, never logged at ERROR, which is for the server's
// own failures.
//
// # Concurrency
//
// A Store is safe for concurrent use. Operations on one session are
// serialised by a per-session lock; different sessions proceed in parallel.
package upload
