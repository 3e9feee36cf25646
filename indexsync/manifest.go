package indexsync

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/index"
)

// ManifestKey is the key of the manifest of the newest published index.
const ManifestKey = "index/latest.json"

// maxManifestBytes bounds what is read of a manifest: a real one is
// about 200 bytes.
const maxManifestBytes = 64 << 10

// TarKey is the key of the published index of the given stamp.
func TarKey(stamp string) string { return "index/" + stamp + ".tar" }

// Manifest describes the newest published index.
type Manifest struct {
	Format      int    `json:"format"` // the index format (index.FormatVersion)
	Stamp       string `json:"stamp"`  // the index's stamp: newer sorts after older
	Key         string `json:"key"`    // TarKey(Stamp)
	Size        int64  `json:"size"`   // bytes of the tar
	SHA1        string `json:"sha1"`   // of the tar, lower-case hex
	PublishedAt string `json:"published_at,omitempty"`
}

// check returns what is wrong with a manifest read from the store.
func (m Manifest) check() error {
	if m.Format != index.FormatVersion {
		return fmt.Errorf("published index has format %d, this lodge reads %d", m.Format, index.FormatVersion)
	}
	if err := index.CheckStamp(m.Stamp); err != nil {
		return err
	}
	if m.Key != TarKey(m.Stamp) {
		return fmt.Errorf("key %q is not %q", trunc(m.Key), TarKey(m.Stamp))
	}
	if m.Size <= 0 {
		return fmt.Errorf("size %d", m.Size)
	}
	if len(m.SHA1) != 40 || !isLowerHex(m.SHA1) {
		return fmt.Errorf("sha1 %q is not 40 lower-case hex digits", trunc(m.SHA1))
	}
	return nil
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// decodeManifest decodes a manifest: one JSON object, fields of a later
// version ignored. It does not check it.
func decodeManifest(b []byte) (Manifest, error) {
	var m Manifest
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", ManifestKey, err)
	}
	if _, err := d.Token(); err != io.EOF {
		return Manifest{}, fmt.Errorf("%s: data after the JSON object", ManifestKey)
	}
	return m, nil
}

// errNoManifest: nothing is published yet.
var errNoManifest = errors.New("no index published")

// loadManifest reads and decodes the store's manifest; errNoManifest when
// there is none.
func loadManifest(ctx context.Context, store blob.Store) (Manifest, error) {
	rc, _, err := store.Open(ctx, ManifestKey)
	if errors.Is(err, blob.ErrNotFound) {
		return Manifest{}, errNoManifest
	}
	if err != nil {
		return Manifest{}, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxManifestBytes+1))
	if err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", ManifestKey, err)
	}
	if len(b) > maxManifestBytes {
		return Manifest{}, fmt.Errorf("%s: more than %d bytes", ManifestKey, maxManifestBytes)
	}
	return decodeManifest(b)
}

// readManifest is loadManifest and check.
func readManifest(ctx context.Context, store blob.Store) (Manifest, error) {
	m, err := loadManifest(ctx, store)
	if err != nil {
		return Manifest{}, err
	}
	if err := m.check(); err != nil {
		return m, fmt.Errorf("%s: %w", ManifestKey, err)
	}
	return m, nil
}
