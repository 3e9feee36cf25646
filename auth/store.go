package auth

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/pebble/v2"
	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/internal/adminsock"
	"github.com/lodge-mail/lodge/internal/pebblelog"
)

// Errors of the store. They are wrapped with the name concerned; test them
// with errors.Is.
var (
	ErrExists       = errors.New("already exists")
	ErrNotFound     = errors.New("not found")
	ErrInvalidInput = errors.New("invalid input")
	ErrClosed       = errors.New("auth store closed")
)

// FormatVersion is the version of the key layout and records; see the
// package documentation.
const FormatVersion = 1

// DefaultRealm is the realm of a new store: the HTTP authentication realm
// the Digest HA1 values are made for and challenges name.
const DefaultRealm = "lodge"

const (
	prefix        = "auth/v1/"
	metaKey       = prefix + "meta"
	accountPrefix = prefix + "account/"
	userPrefix    = prefix + "user/"
	keyPrefix     = prefix + "key/"
	nonceKeyKey   = prefix + "nonce_key"
)

// Account is a customer account.
type Account struct {
	Code     string    `json:"code"`
	Name     string    `json:"name"`
	Disabled bool      `json:"disabled,omitempty"`
	Created  time.Time `json:"created"`
}

// User is a user of an account who authenticates with a password. The
// password hash is not part of it.
type User struct {
	Name     string `json:"name"`
	Account  string `json:"account"`
	Disabled bool   `json:"disabled,omitempty"`
	// Role is RoleCustomer or RoleOperator. A record written before roles
	// existed has none and reads as RoleCustomer (see Store.User): the
	// customer role is stored as an absent field, so such a record and a
	// customer's are the same bytes.
	Role        string    `json:"role,omitempty"`
	Created     time.Time `json:"created"`
	PasswordSet time.Time `json:"password_set"`
}

// User roles. A customer's user sees its own account's mailings in the
// portal; an operator's sees them too and also the print room's pages of
// every account (the portal's operator view).
const (
	RoleCustomer = "customer"
	RoleOperator = "operator"
)

// IsOperator says whether the user has the operator role.
func (u User) IsOperator() bool { return u.Role == RoleOperator }

// CheckRole says why role is not one a user can have, or nil.
func CheckRole(role string) error {
	if role != RoleCustomer && role != RoleOperator {
		return fmt.Errorf("role %.32q: %w: want %s or %s", role, ErrInvalidInput, RoleCustomer, RoleOperator)
	}
	return nil
}

// withRole fills in the role a record without one has.
func (u User) withRole() User {
	if u.Role == "" {
		u.Role = RoleCustomer
	}
	return u
}

// Key is an API key without its secret.
type Key struct {
	ID      string    `json:"id"`
	Account string    `json:"account"`
	Label   string    `json:"label,omitempty"`
	Created time.Time `json:"created"`
	Revoked time.Time `json:"revoked"` // zero while the key is valid
}

// IsRevoked says whether the key was revoked.
func (k Key) IsRevoked() bool { return !k.Revoked.IsZero() }

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

// nonceKeyLen is the length of the Digest nonce key: an HMAC-SHA256 key.
const nonceKeyLen = 32

// userRecord is what auth/v1/user/<name> holds.
type userRecord struct {
	User
	// Gen changes with every write to the record; a cached verification
	// is honoured only while it matches.
	Gen       uint64 `json:"gen"`
	Hash      string `json:"hash"` // PHC string, see password.go
	Realm     string `json:"realm"`
	HA1MD5    string `json:"ha1_md5"`    // hex MD5(name:realm:password)
	HA1SHA256 string `json:"ha1_sha256"` // hex SHA-256(name:realm:password)
}

// keyRecord is what auth/v1/key/<id> holds.
type keyRecord struct {
	Key
	SHA256 []byte `json:"sha256"` // SHA-256 of the whole secret string
}

// Store holds accounts, users and API keys in a pebble database. It is
// safe for concurrent use.
type Store struct {
	dir    string
	db     *pebble.DB
	realm  string
	params argonParams
	// nonceKey signs Digest nonces; made once, see nonceKeyRecord.
	nonceKey []byte

	mu     sync.RWMutex // read-held by every operation, write-held by Close
	closed bool
	wmu    sync.Mutex // serialises read-modify-write operations

	dummyOnce sync.Once
	dummy     string // PHC hash of a random password with params

	// rcache holds decoded records the authentication path reads, so a
	// request costs no pebble read. Every write clears it; rgen tells a
	// reader that raced with a write not to store what it read. rgen is
	// also the store's generation (see generation): it changes only under
	// rmu, and is read without it.
	rmu    sync.RWMutex
	rgen   atomic.Uint64
	rcache map[string]cachedRecord

	now func() time.Time
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
	s := &Store{dir: dir, db: db, params: params, now: time.Now}
	m, ok, err := getJSON[meta](db, metaKey)
	if err != nil {
		db.Close()
		return nil, err
	}
	if !ok {
		m = meta{Format: FormatVersion, Realm: DefaultRealm, Created: s.now().UTC()}
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
	s.realm = m.Realm
	if s.nonceKey, err = loadNonceKey(db, s.now()); err != nil {
		db.Close()
		return nil, fmt.Errorf("auth store %s: %w", dir, err)
	}
	return s, nil
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

// Close closes the store. It waits for operations in progress.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.rmu.Lock()
	s.rgen.Add(1)   // a connection's remembered verification is not honoured past Close
	clear(s.rcache) // nor records read before it
	s.rmu.Unlock()
	return s.db.Close()
}

// Realm is the realm the Digest HA1 values are made for.
func (s *Store) Realm() string { return s.realm }

// read runs fn with the store open for reading.
func (s *Store) read(fn func() error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return fn()
}

// write runs fn serialised with every other write, with a batch it commits
// with pebble.Sync when fn returns nil.
func (s *Store) write(fn func(b *pebble.Batch) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.read(func() error {
		b := s.db.NewBatch()
		defer b.Close()
		if err := fn(b); err != nil {
			return err
		}
		err := b.Commit(pebble.Sync)
		s.rmu.Lock()
		s.rgen.Add(1)
		clear(s.rcache)
		s.rmu.Unlock()
		return err
	})
}

// generation changes with every write to the store (whatever it changes:
// a key revoked, a user or account disabled, a password or role changed)
// and when the store closes, after the write is committed and before the
// method that wrote returns. So a verification made after generation()
// read g holds for as long as generation() still reads g: no write has
// returned since g was read.
func (s *Store) generation() uint64 { return s.rgen.Load() }

// cachedRecord is a decoded record, or its absence.
type cachedRecord struct {
	v  any
	ok bool
}

// maxCachedRecords bounds the read cache; past it, the cache starts over.
const maxCachedRecords = 100_000

// getCached reads the record at key through the read cache.
func getCached[T any](s *Store, key string) (T, bool, error) {
	s.rmu.RLock()
	c, hit := s.rcache[key]
	gen := s.rgen.Load()
	s.rmu.RUnlock()
	if hit {
		if !c.ok {
			var zero T
			return zero, false, nil
		}
		return c.v.(T), true, nil
	}
	var v T
	var ok bool
	err := s.read(func() error {
		var err error
		v, ok, err = getJSON[T](s.db, key)
		return err
	})
	if err != nil {
		return v, false, err
	}
	s.rmu.Lock()
	if s.rgen.Load() == gen {
		if s.rcache == nil || len(s.rcache) >= maxCachedRecords {
			s.rcache = make(map[string]cachedRecord)
		}
		s.rcache[key] = cachedRecord{v: v, ok: ok}
	}
	s.rmu.Unlock()
	return v, ok, nil
}

// ---- accounts

// NormalizeAccountCode upper-cases and trims code.
func NormalizeAccountCode(code string) string {
	return strings.ToUpper(strings.TrimSpace(code))
}

// ValidAccountCode says whether code (already normalised) is three
// upper-case ASCII letters and five digits.
func ValidAccountCode(code string) bool {
	if len(code) != 8 {
		return false
	}
	for i := 0; i < 8; i++ {
		c := code[i]
		if i < 3 && (c < 'A' || c > 'Z') || i >= 3 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func checkCode(code string) (string, error) {
	c := NormalizeAccountCode(code)
	if !ValidAccountCode(c) {
		return "", fmt.Errorf("account code %q: %w: want three letters and five digits, like ABC12345", code, ErrInvalidInput)
	}
	return c, nil
}

// checkText validates a free-text field: valid UTF-8, no control
// characters, at most max bytes.
func checkText(what, v string, max int) error {
	if len(v) > max {
		return fmt.Errorf("%s: %w: longer than %d bytes", what, ErrInvalidInput, max)
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s: %w: not valid UTF-8", what, ErrInvalidInput)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%s: %w: control characters are not allowed", what, ErrInvalidInput)
		}
	}
	return nil
}

// AddAccount adds an account. code is upper-cased first; a code that is
// not three letters and five digits gives ErrInvalidInput, an existing one
// ErrExists.
func (s *Store) AddAccount(code, name string) (Account, error) {
	c, err := checkCode(code)
	if err != nil {
		return Account{}, err
	}
	name = strings.TrimSpace(name)
	if err := checkText("account name", name, 200); err != nil {
		return Account{}, err
	}
	a := Account{Code: c, Name: name, Created: s.now().UTC()}
	err = s.write(func(b *pebble.Batch) error {
		if _, ok, err := getJSON[Account](s.db, accountPrefix+c); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("account %s: %w", c, ErrExists)
		}
		return setJSON(b, accountPrefix+c, a)
	})
	if err != nil {
		return Account{}, err
	}
	return a, nil
}

// Account returns the account with code (upper-cased first), or
// ErrNotFound.
func (s *Store) Account(code string) (Account, error) {
	c := NormalizeAccountCode(code)
	var a Account
	err := s.read(func() error {
		var ok bool
		var err error
		a, ok, err = getJSON[Account](s.db, accountPrefix+c)
		if err == nil && !ok {
			err = fmt.Errorf("account %s: %w", c, ErrNotFound)
		}
		return err
	})
	return a, err
}

// Accounts returns every account in code order.
func (s *Store) Accounts() ([]Account, error) {
	var out []Account
	err := s.read(func() error {
		return scanJSON(s.db, accountPrefix, func(a Account) { out = append(out, a) })
	})
	return out, err
}

// DisableAccount disables an account: none of its keys or users
// authenticates until EnableAccount.
func (s *Store) DisableAccount(code string) error { return s.setAccountDisabled(code, true) }

// EnableAccount undoes DisableAccount.
func (s *Store) EnableAccount(code string) error { return s.setAccountDisabled(code, false) }

func (s *Store) setAccountDisabled(code string, disabled bool) error {
	c := NormalizeAccountCode(code)
	return s.write(func(b *pebble.Batch) error {
		a, ok, err := getJSON[Account](s.db, accountPrefix+c)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("account %s: %w", c, ErrNotFound)
		}
		a.Disabled = disabled
		return setJSON(b, accountPrefix+c, a)
	})
}

// accountActive says whether the account exists and is not disabled.
func (s *Store) accountActive(code string) (bool, error) {
	a, ok, err := getCached[Account](s, accountPrefix+code)
	return ok && !a.Disabled, err
}

// ---- users

// ValidUserName says whether name is 1 to 64 characters of A-Z a-z 0-9
// . _ @ -.
func ValidUserName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '@', c == '-':
		default:
			return false
		}
	}
	return true
}

// CheckPassword says why password cannot be used, or nil: it must be 8 to
// 1024 bytes of UTF-8 without control characters.
func CheckPassword(password string) error {
	if len(password) < 8 {
		return fmt.Errorf("password: %w: shorter than 8 bytes", ErrInvalidInput)
	}
	return checkText("password", password, 1024)
}

// AddUser adds a user with a password to an existing account.
func (s *Store) AddUser(account, name, password string) (User, error) {
	c := NormalizeAccountCode(account)
	if !ValidUserName(name) {
		return User{}, fmt.Errorf("user name %q: %w: want 1 to 64 of A-Z a-z 0-9 . _ @ -", name, ErrInvalidInput)
	}
	if err := CheckPassword(password); err != nil {
		return User{}, err
	}
	if s.isClosed() {
		return User{}, ErrClosed
	}
	now := s.now().UTC()
	rec := userRecord{User: User{Name: name, Account: c, Created: now, PasswordSet: now}, Gen: 1}
	s.setSecrets(&rec, password) // slow: outside the write lock
	err := s.write(func(b *pebble.Batch) error {
		if _, ok, err := getJSON[Account](s.db, accountPrefix+c); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("account %s: %w", c, ErrNotFound)
		}
		if _, ok, err := getJSON[userRecord](s.db, userPrefix+name); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("user %s: %w", name, ErrExists)
		}
		return setJSON(b, userPrefix+name, rec)
	})
	if err != nil {
		return User{}, err
	}
	return rec.User.withRole(), nil
}

func (s *Store) isClosed() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.closed
}

// setSecrets fills in the password hash and the Digest HA1 values.
func (s *Store) setSecrets(rec *userRecord, password string) {
	rec.Hash = hashPassword(s.params, []byte(password))
	rec.Realm = s.realm
	rec.HA1MD5, rec.HA1SHA256 = digestHA1s(rec.Name, s.realm, password)
}

// User returns the user called name, or ErrNotFound.
func (s *Store) User(name string) (User, error) {
	rec, ok, err := s.userRecord(name)
	if err == nil && !ok {
		err = fmt.Errorf("user %s: %w", name, ErrNotFound)
	}
	return rec.User.withRole(), err
}

func (s *Store) userRecord(name string) (userRecord, bool, error) {
	return getCached[userRecord](s, userPrefix+name)
}

// SetPassword replaces a user's password (and Digest HA1 values). Cached
// verifications of the old password stop being honoured at once.
func (s *Store) SetPassword(name, password string) error {
	if err := CheckPassword(password); err != nil {
		return err
	}
	if s.isClosed() {
		return ErrClosed
	}
	fresh := userRecord{User: User{Name: name}}
	s.setSecrets(&fresh, password)
	return s.updateUser(name, func(rec *userRecord) {
		rec.Hash, rec.Realm, rec.HA1MD5, rec.HA1SHA256 = fresh.Hash, fresh.Realm, fresh.HA1MD5, fresh.HA1SHA256
		rec.PasswordSet = s.now().UTC()
	})
}

// SetRole gives a user a role (RoleCustomer or RoleOperator). Like every
// change to a user, it ends the cached verifications of its password, so
// that the next sign-in carries the new role.
func (s *Store) SetRole(name, role string) error {
	if err := CheckRole(role); err != nil {
		return err
	}
	return s.updateUser(name, func(rec *userRecord) {
		rec.Role = role
		if role == RoleCustomer {
			rec.Role = "" // stored as absent, as before roles existed
		}
	})
}

// DisableUser stops a user from authenticating until EnableUser.
func (s *Store) DisableUser(name string) error {
	return s.updateUser(name, func(rec *userRecord) { rec.Disabled = true })
}

// EnableUser undoes DisableUser.
func (s *Store) EnableUser(name string) error {
	return s.updateUser(name, func(rec *userRecord) { rec.Disabled = false })
}

func (s *Store) updateUser(name string, fn func(*userRecord)) error {
	return s.write(func(b *pebble.Batch) error {
		rec, ok, err := getJSON[userRecord](s.db, userPrefix+name)
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

// Users returns the users of an account in name order; account "" means
// every account.
func (s *Store) Users(account string) ([]User, error) {
	c := NormalizeAccountCode(account)
	var out []User
	err := s.read(func() error {
		return scanJSON(s.db, userPrefix, func(r userRecord) {
			if c == "" || r.Account == c {
				out = append(out, r.User.withRole())
			}
		})
	})
	return out, err
}

// ---- keys

// CreateKey makes a new API key for an existing account. The secret is
// returned here only: the store keeps its SHA-256.
func (s *Store) CreateKey(account, label string) (secret string, k Key, err error) {
	c := NormalizeAccountCode(account)
	label = strings.TrimSpace(label)
	if err := checkText("key label", label, 200); err != nil {
		return "", Key{}, err
	}
	err = s.write(func(b *pebble.Batch) error {
		if _, ok, err := getJSON[Account](s.db, accountPrefix+c); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("account %s: %w", c, ErrNotFound)
		}
		for {
			var id string
			id, secret = newKeySecret()
			if _, ok, err := getJSON[keyRecord](s.db, keyPrefix+id); err != nil {
				return err
			} else if ok {
				continue // 50 random bits collided: draw again
			}
			k = Key{ID: id, Account: c, Label: label, Created: s.now().UTC()}
			sum := keyHash(secret)
			return setJSON(b, keyPrefix+id, keyRecord{Key: k, SHA256: sum[:]})
		}
	})
	if err != nil {
		return "", Key{}, err
	}
	return secret, k, nil
}

// Key returns the key with id, or ErrNotFound.
func (s *Store) Key(id string) (Key, error) {
	rec, ok, err := s.keyRecord(strings.ToLower(strings.TrimSpace(id)))
	if err == nil && !ok {
		err = fmt.Errorf("key %s: %w", id, ErrNotFound)
	}
	return rec.Key, err
}

func (s *Store) keyRecord(id string) (keyRecord, bool, error) {
	return getCached[keyRecord](s, keyPrefix+id)
}

// Keys returns the keys of an account, revoked ones too, oldest first;
// account "" means every account.
func (s *Store) Keys(account string) ([]Key, error) {
	c := NormalizeAccountCode(account)
	var out []Key
	err := s.read(func() error {
		return scanJSON(s.db, keyPrefix, func(r keyRecord) {
			if c == "" || r.Account == c {
				out = append(out, r.Key)
			}
		})
	})
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Account != b.Account {
			return a.Account < b.Account
		}
		if !a.Created.Equal(b.Created) {
			return a.Created.Before(b.Created)
		}
		return a.ID < b.ID
	})
	return out, err
}

// RevokeKey revokes a key; it stops authenticating at once. Revoking a
// revoked key changes nothing.
func (s *Store) RevokeKey(id string) error {
	id = strings.ToLower(strings.TrimSpace(id))
	return s.write(func(b *pebble.Batch) error {
		rec, ok, err := getJSON[keyRecord](s.db, keyPrefix+id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("key %s: %w", id, ErrNotFound)
		}
		if rec.IsRevoked() {
			return nil
		}
		rec.Revoked = s.now().UTC()
		return setJSON(b, keyPrefix+id, rec)
	})
}

// ---- pebble helpers

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
