// Package upload is lodge's mail upload interface: sessions, file intake,
// metadata and mailing assembly (sections 1 to 8 of
// ../shared/spec/mail-upload-address-check.md, response layouts as in
// ../shared/docs/service-compat.md).
//
// # Two stores
//
// Open is the embedded store of one node: records in pebble and bytes in
// files under one directory (the layouts below). OpenShared is the store
// of several nodes behind a load balancer: records in PostgreSQL (the
// shared pgdb.DB) and bytes in a blob.Store (object storage, or a local
// disk all nodes mount), under the same keys as the embedded store's
// paths (BlobKey: blobs/<epid>/<blob>). Any node takes any request: a
// session opened on one node takes uploads on another and ends on a
// third. Both keep the promises below; where the shared store differs it
// says so. Readers of the bytes go through the store (OpenFile,
// LocalPath), never a path built by hand; a mailing's documents reach the
// mailroom with their blob key (pipeline.File.Blob) beside this node's
// path.
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
// The shared store keeps the same order: the blob is Put (durable when
// Put returns: fsync and rename on a disk, the server's acknowledgement
// in object storage), then the record commits (one transaction), then a
// replaced name's old blob is deleted (without the answer waiting for
// it: it is an orphan once the record names the new blob); a commit
// refused or failed deletes the new blob. A crash between the Put and the commit leaves an
// orphan blob, removed as the rules under Lifecycle say.
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
// With several nodes no node removes, at start or in the janitor, a blob
// of an open session that has no record: it may be an upload in flight
// on another node, between its Put and its commit. An orphan (a node
// stopped between the two, or while deleting a replaced blob) stays
// under its session's prefix until the session's blobs are removed
// whole: when the session expires or is abandoned, or when its documents
// are purged; no commit can name a blob of a session no longer open, so
// every blob under its prefix may go then (in object storage by listing
// the prefix blobs/<epid>/; a bucket lifecycle rule should abort
// incomplete multipart uploads, which a node that dies mid-Put leaves).
// Whoever closes a session or purges its documents marks it (sweep) in
// the same commit as the decision, with a lease (10 minutes), deletes its
// blobs, then clears the mark; the janitor of any node takes over the
// marks whose lease ran out (the node stopped), claiming each with
// UPDATE ... FOR UPDATE SKIP LOCKED. Expiry and purge decisions are
// conditional updates under the session's lock, so that of several
// janitors one expires or purges a session. Deleting twice is harmless.
// Start-up of a shared store removes nothing. Nodes' clocks (Options.Now)
// are taken to agree within seconds.
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
// # PostgreSQL layout (OpenShared)
//
// Migration 0200_upload (pgdb/migrations; its down script drops both
// tables):
//
//	upload_sessions   one row a session: epid (primary key), account,
//	                  user_name, state, created, expires, ended, ended_by,
//	                  purged, reason, result (the end_session answer, jsonb),
//	                  sweep and sweep_until (its blobs being deleted, and
//	                  the lease of the node at it)
//	upload_files      one row a file: (epid, name) primary key and the
//	                  fields of File (first_at, last_at: Unix seconds)
//
// Indexes: (account, created DESC, epid) for recent_uploads; partial
// indexes of the open sessions by expiry, of the ended mailings whose
// documents are kept by end time, and of the sessions marked sweep by
// lease: the janitor reads only them. Times are timestamptz
// (microseconds: a shared store's session times are whole microseconds);
// EPIDs and names compare byte by byte (COLLATE "C"). The blobs are the
// objects blobs/<epid>/<rand>.blob of the blob store (and on a local
// disk its .tmp-* files of Puts in progress).
//
// Database round trips (pgdb.DB.RoundTrips): a PUT costs 2, the
// handler's read of the session and the commit (the session's lock, the
// check that it is open, the previous blob read and the record written
// in one statement after the lock, sent as one pipeline); end_session
// costs 5 when it counts pages and accepts (the read of the session, the
// lock with the session and its files, the page counts, the end, the
// unlock; the mailroom's are its own), 1 when repeated.
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
// With several nodes the lock is also PostgreSQL's: every transaction
// that writes a session's records first takes its advisory lock
// (pg_advisory_xact_lock), and end_session holds it for its whole run as
// a session-level advisory lock on a connection of its own (its own
// writes then need not take it); a node that dies loses the connection
// and the lock with it. An upload on one node waits for an end_session
// of its session on another, and is then refused if the session ended.
package upload
