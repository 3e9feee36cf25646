package upload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/segmentio/encoding/json"
)

// A session's life after it opens: it ends (end_session), expires (its
// time runs out open) or is abandoned (a failed mpf_upload). What the
// janitor and start-up do about it costs what is open or due, never what
// the store's history holds: three indexes, written in the same synced
// batch as the session records they follow (Tx.PutSession, close),
// say where the work is:
//
//	open/<expires:%016x>/<epid>   every open session, by expiry time
//	kept/<ended:%016x>/<epid>     every ended mailing whose documents are
//	                              still stored, by end time
//	purge/<epid>                  a closed session whose blob directory is
//	                              being removed
//
// Times are Unix nanoseconds, so that key order is time order: the
// janitor reads the open sessions up to now and the kept mailings up to
// now minus the retention period, and stops at the first that is not due.

// DefaultRetention is how long an ended mailing's documents are kept when
// Options.Retention is zero.
const DefaultRetention = 30 * 24 * time.Hour

// indexVersion is the version of the indexes above that indexesKey
// records: a store without it (written before they existed) builds them
// once when it opens.
const indexVersion = 1

func timeKey(pfx string, t time.Time, epid string) string {
	return fmt.Sprintf("%s%016x/%s", pfx, uint64(t.UnixNano()), epid)
}

// timeBound is the first key of pfx for time t: the keys below it are
// those of times before t.
func timeBound(pfx string, t time.Time) string {
	return fmt.Sprintf("%s%016x", pfx, uint64(t.UnixNano()))
}

func openKey(ss Session) string { return timeKey(openPrefix, ss.Expires, ss.EPID) }
func keptKey(ss Session) string { return timeKey(keptPrefix, ss.Ended, ss.EPID) }

// epidsBelow returns the sessions (the values) of the index pfx with a
// time before t, oldest first.
func (s *Store) epidsBelow(pfx string, t time.Time) ([]string, error) {
	return s.epids(pfx, timeBound(pfx, t))
}

// epids returns the sessions (the values) of the index keys from lo to hi.
func (s *Store) epids(lo, hi string) ([]string, error) {
	var out []string
	err := s.scanKeys(lo, hi, func(_, v []byte) error {
		var epid string
		if err := json.Unmarshal(v, &epid); err != nil {
			return err
		}
		out = append(out, epid)
		return nil
	})
	return out, err
}

// Sweep is one pass of the janitor: it expires the open sessions whose
// time ran out (ExpireSessions) and deletes the documents of mailings past
// the retention period (PurgeDocuments). A shared store's also finishes
// the deletions of blobs that a node began and did not finish within
// their lease (it stopped): those of closed sessions, and the documents
// of mailings, which count as purged.
func (s *Store) Sweep() (expired, purged int, err error) {
	expired, err = s.ExpireSessions()
	if err != nil {
		return expired, 0, err
	}
	purged, err = s.PurgeDocuments()
	if err != nil || s.pg == nil {
		return expired, purged, err
	}
	taken, err := s.takeOverSweeps()
	return expired, purged + taken, err
}

// ExpireSessions deletes the files of sessions whose time ran out while
// open and marks them expired. It returns how many it expired. It reads
// only the open sessions past their time.
func (s *Store) ExpireSessions() (int, error) {
	now := s.opt.Now()
	var due []string
	var err error
	if s.pg != nil {
		due, err = s.pgDueOpen(now)
	} else {
		due, err = s.epidsBelow(openPrefix, now)
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, epid := range due {
		done, err := s.expire(epid, now)
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}

// expire expires one session under its lock if it is still open and past
// its time at now: end_session may have ended it since it was listed.
func (s *Store) expire(epid string, now time.Time) (bool, error) {
	if s.pg != nil {
		return s.pgClose(epid, StateExpired, "", now)
	}
	return s.close(epid, StateExpired, "", func(ss Session) bool { return now.After(ss.Expires) })
}

// Abandon closes an open session at once: its files are deleted and it
// reads as abandoned, with why (the answer the client got) as its Reason.
// A multipart upload that fails abandons its session, which no client
// could go on with.
func (s *Store) Abandon(epid, why string) error {
	if s.pg != nil {
		_, err := s.pgClose(epid, StateAbandoned, why, time.Time{})
		return err
	}
	_, err := s.close(epid, StateAbandoned, why, func(Session) bool { return true })
	return err
}

// close closes the session epid under its lock, as state (expired or
// abandoned) for reason, when it is open and due says so. The new state,
// the removal of the file records and a purge/ entry commit together;
// then the blob directory is removed and the entry with it, so that a
// crash in between leaves the entry for the next start to finish.
func (s *Store) close(epid, state, reason string, due func(Session) bool) (bool, error) {
	mu := s.lock(epid)
	mu.Lock()
	defer mu.Unlock()
	var ss Session
	if err := s.get(sessionPrefix+epid, &ss); err != nil {
		return false, err
	}
	if ss.State != StateOpen || !due(ss) {
		return false, nil
	}
	files, err := s.Files(epid)
	if err != nil {
		return false, err
	}
	ss.State, ss.Reason = state, reason
	err = s.Update(func(t *Tx) error {
		t.PutSession(ss)
		for _, f := range files {
			t.deleteKey(filePrefix + epid + "/" + f.Name)
		}
		t.put(purgePrefix+epid, epid)
		return nil
	})
	if err != nil {
		return false, err
	}
	if state == StateAbandoned {
		s.m.sessionsAbandoned.Inc()
	} else {
		s.m.sessionsExpired.Inc()
	}
	return true, s.removeBlobs(epid)
}

// removeBlobs removes a closed session's blob directory, then its purge/
// entry. The removal is synced first: the entry must not outlive it.
func (s *Store) removeBlobs(epid string) error {
	if err := os.RemoveAll(filepath.Join(s.dir, "blobs", epid)); err != nil {
		return err
	}
	if err := s.syncDir(filepath.Join(s.dir, "blobs")); err != nil {
		return err
	}
	return s.db.Delete([]byte(purgePrefix+epid), pebble.NoSync)
}

// PurgeDocuments deletes the documents (every uploaded file's blob) of
// the mailings that ended more than Options.Retention ago, and returns how
// many mailings it purged. This is the store's one retention policy: the
// session, file, mailing and letter records stay, the session marked
// Purged; a mailing that Options.Keep says is still being produced keeps
// its documents (the mailroom purges them itself, PurgeMailing). It reads
// only the mailings due.
func (s *Store) PurgeDocuments() (int, error) {
	now := s.opt.Now()
	cutoff := now.Add(-s.opt.Retention)
	var due []string
	var err error
	if s.pg != nil {
		due, err = s.pgDueKept(cutoff)
	} else {
		due, err = s.epidsBelow(keptPrefix, cutoff)
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, epid := range due {
		done, err := s.purge(epid, cutoff, now)
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}

// PurgeMailing deletes an ended mailing's documents now (the mailroom's
// retention, once its letters are produced); its records stay. A mailing
// already purged, or a session not ended, is left as it is.
func (s *Store) PurgeMailing(epid string) error {
	if s.pg != nil {
		_, err := s.pgPurge(epid, time.Time{})
		return err
	}
	now := s.opt.Now()
	_, err := s.purgeIf(epid, now, func(Session) bool { return true })
	return err
}

// purge deletes one ended mailing's documents under its session's lock
// if it ended before cutoff. The blobs go first, then the session record
// says so (and leaves the kept/ index): a crash in between leaves the
// mailing in the index, and the next pass finishes.
func (s *Store) purge(epid string, cutoff, now time.Time) (bool, error) {
	if s.opt.Keep != nil && s.opt.Keep(epid) {
		return false, nil // the mailroom still needs them
	}
	if s.pg != nil {
		return s.pgPurge(epid, cutoff)
	}
	return s.purgeIf(epid, now, func(ss Session) bool { return ss.Ended.Before(cutoff) })
}

func (s *Store) purgeIf(epid string, now time.Time, due func(Session) bool) (bool, error) {
	mu := s.lock(epid)
	mu.Lock()
	defer mu.Unlock()
	var ss Session
	if err := s.get(sessionPrefix+epid, &ss); err != nil {
		return false, err
	}
	if ss.State != StateEnded || !ss.Purged.IsZero() || !due(ss) {
		return false, nil
	}
	if err := os.RemoveAll(filepath.Join(s.dir, "blobs", epid)); err != nil {
		return false, err
	}
	if err := s.syncDir(filepath.Join(s.dir, "blobs")); err != nil {
		return false, err
	}
	ss.Purged = now.UTC()
	if err := s.Update(func(t *Tx) error { t.PutSession(ss); return nil }); err != nil {
		return false, err
	}
	s.m.documentsPurged.Inc()
	return true, nil
}

// RunJanitor sweeps (Sweep) every interval until ctx is done.
func RunJanitor(ctx context.Context, s *Store, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		expired, purged, err := s.Sweep()
		if err != nil {
			log.Error("upload janitor", "err", err)
		}
		if expired > 0 {
			log.Info("expired sessions", "count", expired)
		}
		if purged > 0 {
			log.Info("deleted the documents of mailings past the retention period", "mailings", purged, "retention", s.opt.Retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// recover finishes what a stopped process left unfinished, reading only
// where unfinished work can be: the blob directories of sessions being
// closed (purge/) are removed, and in those of open sessions temporary
// files and blobs without a record (an upload cut short, a replaced
// file's old blob) are removed. Ended sessions take no more files, and
// expired or abandoned ones have none, so their directories hold nothing
// unfinished. A store from before the indexes builds them first.
func (s *Store) recover() error {
	var version int
	if err := s.get(indexesKey, &version); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if version < indexVersion {
		if err := s.buildIndexes(); err != nil {
			return fmt.Errorf("upload store %s: building the session indexes: %w", s.dir, err)
		}
	}
	closing, err := s.epids(purgePrefix, prefixEnd(purgePrefix))
	if err != nil {
		return err
	}
	for _, epid := range closing {
		if err := s.removeBlobs(epid); err != nil {
			return err
		}
	}
	open, err := s.epids(openPrefix, prefixEnd(openPrefix))
	if err != nil {
		return err
	}
	for _, epid := range open {
		referenced := map[string]bool{}
		err := s.scan(filePrefix+epid+"/", func(_, v []byte) error {
			var f File
			if err := json.Unmarshal(v, &f); err != nil {
				return err
			}
			referenced[f.Blob] = true
			return nil
		})
		if err != nil {
			return err
		}
		if err := removeUnreferenced(filepath.Join(s.dir, "blobs", epid), referenced); err != nil {
			return err
		}
	}
	return nil
}

// removeUnreferenced removes the entries of dir not in keep; a missing
// dir has none.
func removeUnreferenced(dir string, keep map[string]bool) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !keep[e.Name()] {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// buildIndexes builds the open/ and kept/ indexes of a store written
// before they existed, from every session record, and tidies every blob
// directory as start-up did then (blobs without a record anywhere, temporary
// files), once: the indexes and indexesKey commit together, so that a
// crash before the commit builds them again at the next start.
func (s *Store) buildIndexes() error {
	referenced := map[string]map[string]bool{} // epid → blob → true
	err := s.scan(filePrefix, func(k, v []byte) error {
		var f File
		if err := json.Unmarshal(v, &f); err != nil {
			return err
		}
		epid, _, _ := strings.Cut(strings.TrimPrefix(string(k), filePrefix), "/")
		if referenced[epid] == nil {
			referenced[epid] = map[string]bool{}
		}
		referenced[epid][f.Blob] = true
		return nil
	})
	if err != nil {
		return err
	}
	root := filepath.Join(s.dir, "blobs")
	dirs, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if d.IsDir() {
			if err := removeUnreferenced(filepath.Join(root, d.Name()), referenced[d.Name()]); err != nil {
				return err
			}
		}
	}
	return s.Update(func(t *Tx) error {
		err := s.scan(sessionPrefix, func(_, v []byte) error {
			var ss Session
			if err := json.Unmarshal(v, &ss); err != nil {
				return err
			}
			switch {
			case ss.State == StateOpen:
				t.put(openKey(ss), ss.EPID)
			case ss.State == StateEnded && ss.Purged.IsZero():
				t.put(keptKey(ss), ss.EPID)
			}
			return nil
		})
		if err != nil {
			return err
		}
		t.put(indexesKey, indexVersion)
		return nil
	})
}
