// Package indexsync shares the reference index between the nodes of a
// lodge cluster through object storage (a blob.Store), and takes a new
// index into use on a running node without a restart.
//
// # What it stores
//
//	index/<stamp>.tar    one built index directory (pebble/, bleve/) as a
//	                     tar of its regular files and directories; <stamp>
//	                     is the index's own (index-<stamp>, its build time)
//	index/latest.json    the manifest: the newest published index
//
// The manifest names the tar's key, its size and SHA-1, the index format
// and the stamp:
//
//	{"format":1,"stamp":"20250101T000000.000000000Z","key":"index/20250101T000000.000000000Z.tar",
//	 "size":123456,"sha1":"…","published_at":"2025-01-01T00:00:05Z"}
//
// # What it promises
//
//   - Publish streams the tar into the store (never whole in memory or in
//     a temporary file: at most one part of an object store's multipart
//     upload is held) and writes the manifest only after the store
//     acknowledged the whole tar with the size and SHA-1 computed as it
//     streamed: a reader never sees a manifest of an incomplete upload.
//     It refuses to replace a manifest naming a newer index, and keeps
//     the previous tar (PublishOptions.Keep) so that a node still
//     downloading it finishes.
//   - A Follower (one per lodge serve) polls the manifest (Config.Interval,
//     30 s by default) and its own data directory's current index (an
//     import on this node, published or not). A newer stamp than the
//     index in use is downloaded into a temporary directory of the data
//     directory and extracted as it streams, its size and SHA-1 checked
//     against the manifest, opened (index.OpenDir), swapped into the
//     engine (engine.Engine.Swap: running checks finish on the old index,
//     which is closed and its directory removed when the last one ends)
//     and made the data directory's current index, so that a restart
//     keeps it. Anything wrong (a manifest of another format or a bad
//     stamp, a size or SHA-1 that does not match, a truncated or hostile
//     tar, an index that does not open) leaves the index in use serving
//     and current as it was; the same manifest is not fetched again.
//   - The extractor takes only regular files and directories with plain
//     relative names ([A-Za-z0-9._-] elements, no "..", no absolute
//     paths, no duplicates), writes only inside its directory (through
//     os.Root, so not even a bug in those checks could write elsewhere),
//     and enforces Limits: bytes in all, bytes of one file, entries.
//
// # Metrics
//
//	lodge_index_generation           the engine's reference generation (1 at start)
//	lodge_index_reloads_total        indexes taken into use without a restart
//	lodge_index_reload_errors_total  polls that failed or indexes refused
//
// # Limits
//
// Several nodes must not publish at once: each refuses to overwrite a
// newer manifest, but the read and the write are two requests, and the
// blob.Store interface has no conditional write. Run imports on one node.
package indexsync
