// Package upload is lodge's mail upload interface: sessions, file intake,
// metadata, mailing assembly and lodgement (sections 1 to 8 of
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
// removed. A crash at any point leaves either the old record with its old
// blob or the new record with its new blob; blobs without records are
// removed when the store opens. end_session commits the mailing, its
// letters and a lodgement job in one synced batch; the lodgement worker
// commits each job's results together with the job's removal, so a restart
// resumes exactly the jobs not yet done.
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
//	pack/<epid>                   Pack: the mailing of an ended session
//	letter/<epid>/<idx:%06d>      Letter
//	job/<queued:%016x><epid>      a lodgement job (the epid); queued is Unix nanoseconds
//	auto/<epid>                   a mailing queued for the auto processor
//	ref/<account>/<reference>/<epid>/<idx:%06d>   letters by reference
//	acct/<account>/<^created:%016x>/<epid>         sessions by account (the epid),
//	                              newest first: ^created is the bitwise NOT of the
//	                              creation time in Unix nanoseconds; written in the
//	                              same batch as every session record
//
// # Concurrency
//
// A Store is safe for concurrent use. Operations on one session are
// serialised by a per-session lock; different sessions proceed in parallel.
package upload
