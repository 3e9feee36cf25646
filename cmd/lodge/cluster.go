// Wiring of a node of several (lodge serve -db, -blob): which stores are
// shared, and how they are opened and closed. serve.go asks for each
// store here; with neither flag every store is the embedded one, as on a
// single node.

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/billing"
	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/datafiles"
	"github.com/lodge-mail/lodge/delivery/links"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/index"
	"github.com/lodge-mail/lodge/indexsync"
	"github.com/lodge-mail/lodge/library"
	"github.com/lodge-mail/lodge/pgdb"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/portal"
	"github.com/lodge-mail/lodge/upload"
)

// clusterFlags are serve's flags for sharing state with other nodes.
type clusterFlags struct {
	db, blob, node string
}

// cluster is what a node shares with the others: nil fields on a single
// node.
type cluster struct {
	db    *pgdb.DB
	blobs blob.Store
	files datafiles.Files // the data directory's small files, shared
	node  string
	set   *metrics.Set
}

// openCluster connects to the shared database and object store the flags
// name (none: a single node, c.db nil). The schema is migrated here,
// before any store opens, so that nodes starting together agree on it.
func openCluster(ctx context.Context, f clusterFlags, dataDir string, log *slog.Logger) (*cluster, error) {
	c := &cluster{set: metrics.NewSet()}
	if f.db == "" {
		if f.blob != "" {
			return nil, errors.New("-blob needs -db: a node shares its records and their objects together")
		}
		return c, nil
	}
	db, err := pgdb.Open(ctx, pgdb.Config{URL: f.db})
	if err != nil {
		return nil, fmt.Errorf("-db: %w", err)
	}
	c.db = db
	// without -blob, objects stay on this node's disk, where the embedded
	// store keeps them: right for one node on PostgreSQL, or several on a
	// shared file system mounted at the same path
	blobs, err := openBlobs(ctx, f.blob, dataDir, c.set)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("-blob: %w", err)
	}
	c.blobs = blobs
	if c.files, err = datafiles.NewPostgres(db, datafiles.Options{}); err != nil {
		db.Close()
		return nil, err
	}
	c.node = f.node
	if c.node == "" {
		host, _ := os.Hostname()
		c.node = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	c.set.NewGauge("lodge_db_round_trips_total", func() float64 { return float64(db.RoundTrips()) })
	c.set.NewGauge("lodge_db_pool_connections", func() float64 { return float64(db.Pool.Stat().TotalConns()) })
	c.set.NewGauge("lodge_db_pool_acquired", func() float64 { return float64(db.Pool.Stat().AcquiredConns()) })
	v, _ := db.Version(ctx)
	log.Info("shared state", "node", c.node, "schema", v, "objects", blobKind(f.blob))
	return c, nil
}

// openBlobs opens the -blob store; an object store's cache of objects
// read on this node is <data-dir>/blobcache unless the URL names one.
func openBlobs(ctx context.Context, url, dataDir string, set *metrics.Set) (blob.Store, error) {
	if url == "" {
		return blob.NewLocal(filepath.Join(dataDir, "upload"))
	}
	cfg, err := blob.ParseURL(url)
	if err != nil {
		return nil, err
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = filepath.Join(dataDir, "blobcache")
	}
	cfg.Metrics = set
	return blob.NewS3(ctx, cfg)
}

func blobKind(url string) string {
	if url == "" {
		return "local disk"
	}
	if i := strings.IndexByte(url, '?'); i >= 0 {
		url = url[:i]
	}
	return url
}

// shared reports whether this node shares its state.
func (c *cluster) shared() bool { return c.db != nil }

// close closes the database last: every store on it closes first.
func (c *cluster) close() {
	if c.db != nil {
		c.db.Close()
	}
}

// heartbeat records the node in lodge_nodes until ctx ends.
func (c *cluster) heartbeat(ctx context.Context) {
	if c.db != nil {
		c.db.Heartbeat(ctx, c.node, version, 0)
	}
}

// readyChecks are /readyz's checks of the shared stores.
func (c *cluster) readyChecks() map[string]func(context.Context) error {
	if c.db == nil {
		return nil
	}
	return map[string]func(context.Context) error{
		"database":     c.db.Ping,
		"object store": c.blobs.Ready,
	}
}

func (c *cluster) authStore(ctx context.Context, dataDir string) (*auth.Store, error) {
	if c.db == nil {
		return auth.Open(filepath.Join(dataDir, "auth"))
	}
	return auth.OpenPostgres(ctx, c.db, auth.PostgresConfig{})
}

func (c *cluster) mailroomStore(dataDir string, log *slog.Logger, set *metrics.Set) (pipeline.Store, error) {
	if c.db == nil {
		return pipeline.OpenPebble(filepath.Join(dataDir, "mailroom"))
	}
	return pipeline.OpenPostgres(c.db, pipeline.PostgresOptions{Node: c.node, Metrics: set, Log: log})
}

func (c *cluster) uploadStore(dataDir string, opt upload.Options) (*upload.Store, error) {
	if c.db == nil {
		return upload.Open(filepath.Join(dataDir, "upload"), opt)
	}
	return upload.OpenShared(c.db, c.blobs, opt)
}

func (c *cluster) library(dataDir string) (*library.Library, error) {
	if c.db == nil {
		return library.Open(filepath.Join(dataDir, "library"), library.Options{})
	}
	return library.OpenShared(c.db, c.blobs, library.Options{})
}

// accountSettings are the accounts' settings files: the data directory's,
// or the shared ones (lodge settings put).
func (c *cluster) accountSettings(dataDir string) pipeline.AccountSettings {
	a := pipeline.AccountSettings{Dir: filepath.Join(dataDir, "accounts")}
	if c.files != nil {
		a.Files = datafiles.Sub(c.files, "accounts")
	}
	return a
}

// profiles are the accounts' letter profiles on a node of several (nil:
// the data directory's profiles/).
func (c *cluster) profiles() datafiles.Files {
	if c.files == nil {
		return nil
	}
	return datafiles.Sub(c.files, "profiles")
}

// prices are the price tables, the data directory's or the shared ones.
func (c *cluster) prices(dataDir string) *billing.Prices {
	return &billing.Prices{Dir: dataDir, Files: c.files}
}

// linkKey signs the links of emails and letters: every node of several
// has the same one.
func (c *cluster) linkKey(dataDir string) ([]byte, error) {
	if c.files == nil {
		return links.LoadOrCreateKey(filepath.Join(dataDir, "links.key"))
	}
	return links.LoadOrCreateSharedKey(c.files)
}

// sweepLibrary deletes, every hour until ctx ends, the library objects a
// node of several left loose (nothing on a single node).
func (c *cluster) sweepLibrary(ctx context.Context, lib *library.Library, log *slog.Logger) {
	if c.db == nil {
		return
	}
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n, err := lib.Sweep(ctx); err != nil {
			log.Warn("library sweep", "err", err)
		} else if n > 0 {
			log.Info("library sweep", "deleted", n)
		}
	}
}

// engine is the address engine: on a node of several a live one that
// follows the index published to the shared object store (its Follower
// returned, to Run and Close), else a fixed one over ix.
func (c *cluster) engine(ix *index.Index, dataDir string, cfg engine.Config, poll time.Duration, log *slog.Logger) (*engine.Engine, *indexsync.Follower, error) {
	if c.db == nil {
		eng, err := engine.New(ix.Ref, cfg)
		return eng, nil, err
	}
	f, err := indexsync.NewFollower(c.blobs, dataDir, ix, cfg, indexsync.Config{Interval: poll, Log: log})
	if err != nil {
		return nil, nil, err
	}
	return f.Engine(), f, nil
}

// portalSessions is nil (in memory) on a single node.
func (c *cluster) portalSessions() portal.SessionStore {
	if c.db == nil {
		return nil
	}
	return portal.NewPostgresSessions(c.db, 0)
}
