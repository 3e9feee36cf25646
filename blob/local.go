package blob

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lodge-mail/lodge/internal/durable"
)

// Local keeps objects on this node's disk: the key k is the file <root>/k
// (so "blobs/<epid>/<rand>.blob" is where package upload has always kept
// an upload). Files are written 0600 and directories 0750. The files
// .tmp-* beside the objects are Puts in progress or left by a crash;
// nothing reads them and List skips them (a caller that owns a directory
// may remove them when no Put can be running).
type Local struct {
	root string

	mu     sync.Mutex
	making map[string]*mkdirDone // directories made but not yet synced into their parent
}

type mkdirDone struct {
	done chan struct{}
	err  error
}

// NewLocal returns the store of the directory root, making it (and its
// parents, each synced into its own parent) when it is missing.
func NewLocal(root string) (*Local, error) {
	if root == "" {
		return nil, errors.New("blob: local store without a directory")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	if err := mkdirAllSynced(abs); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	return &Local{root: abs, making: map[string]*mkdirDone{}}, nil
}

// mkdirAllSynced makes dir and its missing parents, syncing each new
// directory's name into its parent.
func mkdirAllSynced(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAllSynced(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o750); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return durable.SyncDir(parent)
}

// Root is the store's directory.
func (l *Local) Root() string { return l.root }

func (l *Local) path(key string) string {
	return filepath.Join(l.root, filepath.FromSlash(key))
}

// mkdirs makes the directories of rel (a key's directory, slash
// separated, "." for the root) under the root. A directory's name is
// synced into its parent before any Put can rely on it: one that another
// Put of this store is still syncing is waited for.
func (l *Local) mkdirs(rel string) error {
	if rel == "." {
		return nil
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		full := l.path(sub)
		l.mu.Lock()
		if m := l.making[sub]; m != nil {
			l.mu.Unlock()
			<-m.done
			if m.err != nil {
				return m.err
			}
			continue
		}
		err := os.Mkdir(full, 0o750)
		if errors.Is(err, fs.ErrExist) {
			l.mu.Unlock()
			continue // a file there fails the Put at CreateTemp, as ENOTDIR
		}
		if err != nil {
			l.mu.Unlock()
			return err
		}
		m := &mkdirDone{done: make(chan struct{})}
		l.making[sub] = m
		l.mu.Unlock()
		m.err = durable.SyncDir(filepath.Dir(full))
		l.mu.Lock()
		delete(l.making, sub)
		l.mu.Unlock()
		close(m.done)
		if m.err != nil {
			return m.err
		}
	}
	return nil
}

// Put writes r to <dir>/.tmp-*, syncs it, renames it to the key's file
// and syncs the directory.
func (l *Local) Put(ctx context.Context, key string, r io.Reader, size int64) (Info, error) {
	if err := CheckKey(key); err != nil {
		return Info{}, err
	}
	info, err := l.put(ctx, key, r, size)
	if err != nil {
		return Info{}, fmt.Errorf("blob: put %s: %w", key, err)
	}
	return info, nil
}

func (l *Local) put(ctx context.Context, key string, r io.Reader, size int64) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	if err := l.mkdirs(path.Dir(key)); err != nil {
		return Info{}, err
	}
	dst := l.path(key)
	dir := filepath.Dir(dst)
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return Info{}, err
	}
	defer func() {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	sr := newSumReader(ctx, r)
	n, err := copyBody(tmp, sr, size)
	if err != nil {
		return Info{}, err
	}
	if err := tmp.Sync(); err != nil {
		return Info{}, err
	}
	fi, err := tmp.Stat()
	if err != nil {
		return Info{}, err
	}
	if err := tmp.Close(); err != nil {
		return Info{}, err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return Info{}, err
	}
	tmp = nil
	if err := durable.SyncDir(dir); err != nil {
		return Info{}, err
	}
	return Info{Key: key, Size: n, SHA1: sr.sum(), ModTime: fi.ModTime()}, nil
}

// copyBody copies r to w: exactly size bytes when size >= 0 (fewer or
// more is an error), else all of it.
func copyBody(w io.Writer, r io.Reader, size int64) (int64, error) {
	buf := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(buf)
	if size < 0 {
		return io.CopyBuffer(w, r, *buf)
	}
	n, err := io.CopyBuffer(w, io.LimitReader(r, size+1), *buf)
	if err != nil {
		return n, err
	}
	if n != size {
		return n, sizeError(n, size)
	}
	return n, nil
}

func sizeError(got, want int64) error {
	if got > want {
		return fmt.Errorf("body longer than its declared size %d", want)
	}
	return fmt.Errorf("body of %d bytes, its declared size was %d", got, want)
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// sumReader hashes and counts what is read through it, and stops with the
// context's error once it is cancelled.
type sumReader struct {
	ctx context.Context
	r   io.Reader
	h   hash.Hash
	n   int64
}

func newSumReader(ctx context.Context, r io.Reader) *sumReader {
	return &sumReader{ctx: ctx, r: r, h: sha1.New()}
}

func (s *sumReader) Read(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := s.r.Read(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	return n, err
}

func (s *sumReader) sum() string { return hex.EncodeToString(s.h.Sum(nil)) }

// openFile opens the key's file; a missing one, or a directory, is
// ErrNotFound.
func (l *Local) openFile(key string) (*os.File, fs.FileInfo, error) {
	f, err := os.Open(l.path(key))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
			return nil, nil, ErrNotFound
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, ErrNotFound
	}
	return f, fi, nil
}

// Open opens the key's file. Info.SHA1 is "": the file system does not
// keep it.
func (l *Local) Open(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	if err := CheckKey(key); err != nil {
		return nil, Info{}, err
	}
	f, fi, err := l.openFile(key)
	if err != nil {
		return nil, Info{}, fmt.Errorf("blob: open %s: %w", key, err)
	}
	return f, Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Stat reports the key's file; Info.SHA1 is "".
func (l *Local) Stat(ctx context.Context, key string) (Info, error) {
	if err := CheckKey(key); err != nil {
		return Info{}, err
	}
	fi, err := os.Stat(l.path(key))
	if err == nil && !fi.Mode().IsRegular() {
		err = ErrNotFound
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
		err = ErrNotFound
	}
	if err != nil {
		return Info{}, fmt.Errorf("blob: stat %s: %w", key, err)
	}
	return Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Delete removes the key's file and syncs its directory. Directories
// left empty stay (their owner, such as package upload's sessions,
// removes them).
func (l *Local) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	p := l.path(key)
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) || (err == nil && fi.IsDir()) {
		return nil
	}
	if err == nil {
		err = os.Remove(p)
	}
	if err == nil {
		err = durable.SyncDir(filepath.Dir(p))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob: delete %s: %w", key, err)
	}
	return nil
}

// List walks the directories under the root in key order (a directory d
// sorts as "d/", so "a.c" comes before "a/b" as in object storage),
// visiting only those that can hold keys beginning with prefix. Names
// beginning with '.' (.tmp-* files) and anything but regular files and
// directories are skipped. Info.SHA1 is "".
func (l *Local) List(ctx context.Context, prefix string, fn func(Info) error) error {
	if err := CheckPrefix(prefix); err != nil {
		return err
	}
	// start at the deepest directory the prefix names whole
	dir := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir = prefix[:i+1]
	}
	err := l.walk(ctx, dir, prefix, fn)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
		return nil // no such directory: no keys
	}
	return err
}

// walk lists the directory whose keys begin with dir ("" or ending in
// '/').
func (l *Local) walk(ctx context.Context, dir, prefix string, fn func(Info) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ents, err := os.ReadDir(l.path(strings.TrimSuffix(dir, "/")))
	if err != nil {
		if dir != "" && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir)) {
			return nil // removed while listing, or a file where the prefix wants a directory
		}
		return fmt.Errorf("blob: list %s: %w", prefix, err)
	}
	type ent struct {
		name string // the key, or the directory's key prefix ending in '/'
		de   fs.DirEntry
	}
	list := make([]ent, 0, len(ents))
	for _, de := range ents {
		if strings.HasPrefix(de.Name(), ".") || CheckKey(de.Name()) != nil {
			continue // temporary files, and names no key can have
		}
		name := dir + de.Name()
		switch {
		case de.IsDir():
			name += "/"
			if !strings.HasPrefix(name, prefix) && !strings.HasPrefix(prefix, name) {
				continue
			}
		case de.Type().IsRegular():
			if !strings.HasPrefix(name, prefix) {
				continue
			}
		default:
			continue
		}
		list = append(list, ent{name, de})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name })
	for _, e := range list {
		if e.de.IsDir() {
			if err := l.walk(ctx, e.name, prefix, fn); err != nil {
				return err
			}
			continue
		}
		fi, err := e.de.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted since ReadDir
		}
		if err != nil {
			return fmt.Errorf("blob: list %s: %w", prefix, err)
		}
		if err := fn(Info{Key: e.name, Size: fi.Size(), ModTime: fi.ModTime()}); err != nil {
			return err
		}
	}
	return nil
}

// LocalPath returns the key's own file.
func (l *Local) LocalPath(ctx context.Context, key string) (string, error) {
	if _, err := l.Stat(ctx, key); err != nil {
		return "", err
	}
	return l.path(key), nil
}

// DownloadURL returns "": lodge serves a local file itself.
func (l *Local) DownloadURL(ctx context.Context, key, filename string, expiry time.Duration) (string, error) {
	return "", CheckKey(key)
}

// Ready writes, syncs and removes a probe file in the root.
func (l *Local) Ready(ctx context.Context) error {
	f, err := os.CreateTemp(l.root, ".ready-*")
	if err != nil {
		return fmt.Errorf("blob: ready: %w", err)
	}
	_, err = f.Write([]byte("ready\n"))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if rerr := os.Remove(f.Name()); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("blob: ready: %w", err)
	}
	return nil
}
