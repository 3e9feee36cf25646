// Package index builds, stores and loads lodge's reference index: the
// localities, postcodes, countries and New Zealand places the engine judges
// addresses against.
//
// # Building
//
// Build reads the sources (package data), merges them and writes a new index
// directory beside the current one, then swaps it in. Merging takes the
// union of (locality, state, postcode) triples over all sources; a triple
// named by several sources is kept once with every source recorded, the
// G-NAF address count (which ranks candidates) and the G-NAF spelling.
// Postcodes that span states, and the external territories that lists file
// under different states (Christmas Island under WA and OT), are kept in
// every pairing a source gives.
//
// # On-disk layout
//
//	<data-dir>/current            symlink to the index in use
//	<data-dir>/index-<stamp>/     one built index
//	    pebble/                   the records (below)
//	    bleve/                    a bleve index over locality names, for
//	                              fuzzy candidates off the hot path
//	<data-dir>/index-<stamp>.tmp/ a build in progress; never opened
//
// A build writes everything into a .tmp directory, syncs it, renames it
// and then atomically replaces the current symlink; only then are older
// index directories removed. An interrupted or failed build therefore never
// leaves an index that Open would use: Open follows current only.
//
// <stamp> is the UTC build time (CheckStamp), so stamps sort as builds
// do. Install adds an index built on another node (package indexsync
// fetches the published ones) the same way, under that node's stamp:
// written into index-<stamp>.tmp by its caller, synced, renamed, taken
// into use, then made current; the directory current before is kept
// until RemoveUnused (its index may still serve running checks).
//
// # Pebble keys (format version 1)
//
// Every key starts with "lodge/v1/"; a later format uses a new prefix, so an
// index is never misread by a binary that does not know its format. Values
// are JSON.
//
//	lodge/v1/meta                  Meta: format, build time, sources with
//	                               their checksums, licences and attributions;
//	                               written last, so its presence means the
//	                               index is complete
//	lodge/v1/loc/<id:%08x>         LocalityRecord
//	lodge/v1/pc/<postcode>         PostcodeRecord: G-NAF address count
//	lodge/v1/nz/<postcode>         New Zealand place and region names
//	lodge/v1/country/<n:%04d>      CountryRecord, in the order added, with
//	                               its names in other languages (iso-codes'
//	                               translations, read from the system at
//	                               build time; absent in an index built
//	                               without them)
//
//	lodge/v1/streets/<n:%06d>      the street and premise level: the
//	                               binary form of engine.Streets (see
//	                               engine/streets_codec.go) cut into 4 MiB
//	                               pieces, concatenated in key order
//
// Street sources (a G-NAF release, address lists) are remembered in
// <data-dir>/street-sources.json so that a later plain import keeps them;
// their identity in the source hash is path, size and modification time
// (hashing a 1.5 GB release on every import would cost more than reading
// it).
//
// # Concurrency
//
// Build must not run concurrently with another Build or Install on the
// same data directory (they take a lock file; the second fails). An opened Index is read-only and safe
// for concurrent use; Close it once no reader uses it.
package index
