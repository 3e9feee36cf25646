package auth

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/internal/adminsock"
	"github.com/lodge-mail/lodge/internal/pebblelog"
)

// The pebble keys; see the package documentation.
const (
	prefix        = "auth/v1/"
	metaKey       = prefix + "meta"
	accountPrefix = prefix + "account/"
	userPrefix    = prefix + "user/"
	keyPrefix     = prefix + "key/"
	nonceKeyKey   = prefix + "nonce_key"
)

// meta is the auth/v1/meta record.
type meta struct {
	Format  int       `json:"format"`
	Realm   string    `json:"realm"`
	Created time.Time `json:"created"`
}

// nonceKeyRecord is what auth/v1/nonce_key holds: the key Digest nonces
// are signed with. Kept in the store so that a nonce issued before a
// restart still verifies after it (and is answered as stale, not as a
// failed login).
type nonceKeyRecord struct {
	Key     []byte    `json:"key"` // nonceKeyLen random bytes, base64 in JSON
	Created time.Time `json:"created"`
}

// pebbleStorage is the embedded storage of one node: a pebble database
// in a directory, every write one batch committed with pebble.Sync.
type pebbleStorage struct {
	dir string
	db  *pebble.DB
	wmu sync.Mutex // serialises read-modify-write operations
}

// Open opens the store in dir, creating it if needed.
func Open(dir string) (*Store, error) {
	return openStore(dir, defaultParams)
}

func openStore(dir string, params argonParams) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	db, err := pebble.Open(dir, &pebble.Options{Logger: pebblelog.Quiet{}})
	if err != nil {
		if adminsock.Locked(err) {
			return nil, &inUseError{dir: dir, err: err}
		}
		return nil, fmt.Errorf("auth store %s: %w", dir, err)
	}
	now := time.Now
	m, ok, err := getJSON[meta](db, metaKey)
	if err != nil {
		db.Close()
		return nil, err
	}
	if !ok {
		m = meta{Format: FormatVersion, Realm: DefaultRealm, Created: now().UTC()}
		b := db.NewBatch()
		if err := setJSON(b, metaKey, m); err != nil {
			db.Close()
			return nil, err
		}
		if err := b.Commit(pebble.Sync); err != nil {
			db.Close()
			return nil, err
		}
	} else if m.Format != FormatVersion {
		db.Close()
		return nil, fmt.Errorf("auth store %s has format %d; this lodge reads format %d", dir, m.Format, FormatVersion)
	}
	nonceKey, err := loadNonceKey(db, now())
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("auth store %s: %w", dir, err)
	}
	return newStore(&pebbleStorage{dir: dir, db: db}, m.Realm, nonceKey, params, now), nil
}

// loadNonceKey returns the store's Digest nonce key, making it (durably)
// the first time: a store made by an older lodge has none.
func loadNonceKey(db *pebble.DB, now time.Time) ([]byte, error) {
	r, ok, err := getJSON[nonceKeyRecord](db, nonceKeyKey)
	if err != nil {
		return nil, err
	}
	if ok {
		if len(r.Key) != nonceKeyLen {
			return nil, fmt.Errorf("record %q: key of %d bytes, want %d", nonceKeyKey, len(r.Key), nonceKeyLen)
		}
		return r.Key, nil
	}
	r = nonceKeyRecord{Key: make([]byte, nonceKeyLen), Created: now.UTC()}
	rand.Read(r.Key)
	b := db.NewBatch()
	defer b.Close()
	if err := setJSON(b, nonceKeyKey, r); err != nil {
		return nil, err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, err
	}
	return r.Key, nil
}

// inUseError is Open's error when another process (or another Store in
// this one) holds the store; OpenAdmin then tries the admin socket.
type inUseError struct {
	dir string
	err error
}

func (e *inUseError) Error() string {
	return fmt.Sprintf("auth store %s is in use by another process (is lodge serve running? stop it first): %v", e.dir, e.err)
}

func (e *inUseError) Unwrap() error { return e.err }

func (p *pebbleStorage) close() error { return p.db.Close() }

// batch runs fn serialised with every other write, with a batch it
// commits with pebble.Sync when fn returns nil.
func (p *pebbleStorage) batch(fn func(b *pebble.Batch) error) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	b := p.db.NewBatch()
	defer b.Close()
	if err := fn(b); err != nil {
		return err
	}
	return b.Commit(pebble.Sync)
}

func (p *pebbleStorage) account(code string) (Account, bool, error) {
	return getJSON[Account](p.db, accountPrefix+code)
}

func (p *pebbleStorage) accounts() ([]Account, error) {
	var out []Account
	err := scanJSON(p.db, accountPrefix, func(a Account) { out = append(out, a) })
	return out, err
}

func (p *pebbleStorage) addAccount(a Account) error {
	return p.batch(func(b *pebble.Batch) error {
		if _, ok, err := getJSON[Account](p.db, accountPrefix+a.Code); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("account %s: %w", a.Code, ErrExists)
		}
		return setJSON(b, accountPrefix+a.Code, a)
	})
}

func (p *pebbleStorage) setAccountDisabled(code string, disabled bool) error {
	return p.batch(func(b *pebble.Batch) error {
		a, ok, err := getJSON[Account](p.db, accountPrefix+code)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("account %s: %w", code, ErrNotFound)
		}
		a.Disabled = disabled
		return setJSON(b, accountPrefix+code, a)
	})
}

func (p *pebbleStorage) user(name string) (userRecord, bool, error) {
	return getJSON[userRecord](p.db, userPrefix+name)
}

func (p *pebbleStorage) users(account string) ([]userRecord, error) {
	var out []userRecord
	err := scanJSON(p.db, userPrefix, func(r userRecord) {
		if account == "" || r.Account == account {
			out = append(out, r)
		}
	})
	return out, err
}

func (p *pebbleStorage) addUser(rec userRecord) error {
	return p.batch(func(b *pebble.Batch) error {
		if _, ok, err := getJSON[Account](p.db, accountPrefix+rec.Account); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("account %s: %w", rec.Account, ErrNotFound)
		}
		if _, ok, err := getJSON[userRecord](p.db, userPrefix+rec.Name); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("user %s: %w", rec.Name, ErrExists)
		}
		return setJSON(b, userPrefix+rec.Name, rec)
	})
}

func (p *pebbleStorage) updateUser(name string, fn func(*userRecord)) error {
	return p.batch(func(b *pebble.Batch) error {
		rec, ok, err := getJSON[userRecord](p.db, userPrefix+name)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("user %s: %w", name, ErrNotFound)
		}
		fn(&rec)
		rec.Gen++
		return setJSON(b, userPrefix+name, rec)
	})
}

func (p *pebbleStorage) key(id string) (keyRecord, bool, error) {
	return getJSON[keyRecord](p.db, keyPrefix+id)
}

func (p *pebbleStorage) keys(account string) ([]keyRecord, error) {
	var out []keyRecord
	err := scanJSON(p.db, keyPrefix, func(r keyRecord) {
		if account == "" || r.Account == account {
			out = append(out, r)
		}
	})
	return out, err
}

func (p *pebbleStorage) addKey(rec keyRecord) error {
	return p.batch(func(b *pebble.Batch) error {
		if _, ok, err := getJSON[Account](p.db, accountPrefix+rec.Account); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("account %s: %w", rec.Account, ErrNotFound)
		}
		if _, ok, err := getJSON[keyRecord](p.db, keyPrefix+rec.ID); err != nil {
			return err
		} else if ok {
			return errKeyIDTaken
		}
		return setJSON(b, keyPrefix+rec.ID, rec)
	})
}

func (p *pebbleStorage) revokeKey(id string, at time.Time) error {
	return p.batch(func(b *pebble.Batch) error {
		rec, ok, err := getJSON[keyRecord](p.db, keyPrefix+id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("key %s: %w", id, ErrNotFound)
		}
		if rec.IsRevoked() {
			return nil
		}
		rec.Revoked = at
		return setJSON(b, keyPrefix+id, rec)
	})
}

func getJSON[T any](db *pebble.DB, key string) (T, bool, error) {
	var v T
	val, closer, err := db.Get([]byte(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	defer closer.Close()
	if err := json.Unmarshal(val, &v); err != nil {
		return v, false, fmt.Errorf("auth store: record %q: %w", key, err)
	}
	return v, true, nil
}

func setJSON(b *pebble.Batch, key string, v any) error {
	val, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Set([]byte(key), val, nil)
}

// scanJSON calls fn with every record under prefix, in key order.
func scanJSON[T any](db *pebble.DB, prefix string, fn func(T)) error {
	upper := []byte(prefix)
	upper[len(upper)-1]++ // prefixes end in '/'; '0' bounds them
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefix), UpperBound: upper})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		var v T
		if err := json.Unmarshal(it.Value(), &v); err != nil {
			it.Close()
			return fmt.Errorf("auth store: record %q: %w", bytes.Clone(it.Key()), err)
		}
		fn(v)
	}
	return it.Close()
}
