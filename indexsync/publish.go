package indexsync

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/index"
	"github.com/lodge-mail/lodge/internal/safetar"
)

// PublishOptions tune Publish. The zero value keeps two tars and logs to
// slog.Default.
type PublishOptions struct {
	// Keep is how many published tars stay in the store, the new one
	// included: 0 means 2, so that a node still downloading the one
	// before finishes.
	Keep int
	Log  *slog.Logger
}

// ErrNewerPublished is Publish's error when the store's manifest names
// an index newer than the one to publish.
var ErrNewerPublished = errors.New("a newer index is published")

var errUploadEnded = errors.New("upload ended")

// Publish puts the built index directory dir (an index-<stamp> directory:
// index.BuildResult.Dir) into the store as TarKey(stamp), then writes the
// manifest naming it (ManifestKey), then removes older tars beyond
// o.Keep. An index already published (the manifest names its stamp and
// the tar is there) is not sent again.
func Publish(ctx context.Context, store blob.Store, dir string, o PublishOptions) (Manifest, error) {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	start := time.Now()
	stamp := index.StampOf(dir)
	if stamp == "" {
		return Manifest{}, fmt.Errorf("publish %s: not an index directory (index-<stamp>)", dir)
	}
	prev, err := loadManifest(ctx, store)
	switch {
	case errors.Is(err, errNoManifest):
	case err != nil:
		log.Warn("published index manifest unreadable; publishing over it", "key", ManifestKey, "err", err)
	case prev.Stamp > stamp:
		// a later format's manifest too: its stamp is still read
		return Manifest{}, fmt.Errorf("publish %s: %w (%s)", stamp, ErrNewerPublished, trunc(prev.Stamp))
	case prev.Stamp == stamp && prev.check() == nil:
		if info, err := store.Stat(ctx, prev.Key); err == nil && info.Size == prev.Size {
			log.Info("index already published", "stamp", stamp, "key", prev.Key)
			return prev, nil
		}
	}

	m := Manifest{Format: index.FormatVersion, Stamp: stamp, Key: TarKey(stamp)}
	pr, pw := io.Pipe()
	h := sha1.New()
	var size int64
	wrote := make(chan error, 1)
	go func() {
		cw := &countWriter{w: io.MultiWriter(pw, h), n: &size}
		err := safetar.Write(ctx, cw, dir)
		pw.CloseWithError(err)
		wrote <- err
	}()
	info, err := store.Put(ctx, m.Key, pr, -1)
	pr.CloseWithError(errUploadEnded) // unblocks the writer when Put stopped reading
	werr := <-wrote
	switch {
	case werr != nil && !errors.Is(werr, errUploadEnded):
		return Manifest{}, fmt.Errorf("publish %s: %w", dir, werr) // the tar failed, not the store
	case err != nil:
		return Manifest{}, fmt.Errorf("publish %s: %w", m.Key, err)
	case werr != nil:
		return Manifest{}, fmt.Errorf("publish %s: the store stopped reading: %w", m.Key, werr)
	}
	m.Size, m.SHA1 = size, hex.EncodeToString(h.Sum(nil))
	if info.Size != m.Size || (info.SHA1 != "" && info.SHA1 != m.SHA1) {
		return Manifest{}, fmt.Errorf("publish %s: the store kept %d bytes of SHA-1 %s, %d of SHA-1 %s were sent", m.Key, info.Size, info.SHA1, m.Size, m.SHA1)
	}
	m.PublishedAt = time.Now().UTC().Format(time.RFC3339)
	b, err := json.Marshal(m)
	if err != nil {
		return Manifest{}, err
	}
	if _, err := store.Put(ctx, ManifestKey, bytes.NewReader(b), int64(len(b))); err != nil {
		return Manifest{}, fmt.Errorf("publish %s: %w", ManifestKey, err)
	}
	log.Info("index published", "stamp", stamp, "key", m.Key, "bytes", m.Size, "sha1", m.SHA1, "took", time.Since(start).Round(time.Millisecond))
	prune(ctx, store, m, o.Keep, log)
	return m, nil
}

// prune removes published tars older than the keep newest (m's tar is
// always kept). Failures are logged: a tar left behind costs only space.
func prune(ctx context.Context, store blob.Store, m Manifest, keep int, log *slog.Logger) {
	if keep <= 0 {
		keep = 2
	}
	var stamps []string
	err := store.List(ctx, "index/", func(info blob.Info) error {
		s, ok := strings.CutSuffix(strings.TrimPrefix(info.Key, "index/"), ".tar")
		if ok && index.CheckStamp(s) == nil && info.Key == TarKey(s) {
			stamps = append(stamps, s)
		}
		return nil
	})
	if err != nil {
		log.Warn("old published indexes not removed", "err", err)
		return
	}
	sort.Sort(sort.Reverse(sort.StringSlice(stamps)))
	kept := 1 // m's own
	for _, s := range stamps {
		switch {
		case s >= m.Stamp:
			continue // ours, or published after ours began: not ours to remove
		case kept < keep:
			kept++
			continue
		}
		if err := store.Delete(ctx, TarKey(s)); err != nil {
			log.Warn("old published index not removed", "key", TarKey(s), "err", err)
		}
	}
}

// countWriter counts what passes through.
type countWriter struct {
	w io.Writer
	n *int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}
