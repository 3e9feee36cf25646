package auth

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
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

// storage is where a Store keeps its records: a pebble database (Open,
// pebble.go) or PostgreSQL shared by several nodes (OpenPostgres,
// postgres.go). The Store validates and normalises what it is given and
// keeps the read cache and the generation; a storage only stores. Each
// write is durable when it returns nil and is atomic against concurrent
// writes (in this process or, on PostgreSQL, any node).
type storage interface {
	account(code string) (Account, bool, error)
	accounts() ([]Account, error) // in code order
	// addAccount: ErrExists when the code is taken.
	addAccount(a Account) error
	// setAccountDisabled: ErrNotFound for an unknown code.
	setAccountDisabled(code string, disabled bool) error

	user(name string) (userRecord, bool, error)
	users(account string) ([]userRecord, error) // in name order; account "": all
	// addUser: ErrNotFound when the account does not exist, ErrExists
	// when the name is taken.
	addUser(rec userRecord) error
	// updateUser applies fn to the record, raises its Gen and stores
	// it, atomically; ErrNotFound for an unknown name.
	updateUser(name string, fn func(*userRecord)) error

	key(id string) (keyRecord, bool, error)
	keys(account string) ([]keyRecord, error) // any order; account "": all
	// addKey: ErrNotFound when the account does not exist,
	// errKeyIDTaken when the id is (the caller draws another).
	addKey(rec keyRecord) error
	// revokeKey sets Revoked to at unless it is set; ErrNotFound for an
	// unknown id.
	revokeKey(id string, at time.Time) error

	close() error
}

// errKeyIDTaken: a new key drew the id of an existing one (50 random
// bits collided).
var errKeyIDTaken = errors.New("key id taken")

// Store holds accounts, users and API keys in a storage: pebble (Open) or
// PostgreSQL (OpenPostgres). It is safe for concurrent use.
type Store struct {
	st     storage
	realm  string
	params argonParams
	// nonceKey signs Digest nonces; made once, see nonceKeyRecord.
	nonceKey []byte

	mu     sync.RWMutex // read-held by every operation, write-held by Close
	closed bool

	dummyOnce sync.Once
	dummy     string // PHC hash of a random password with params

	// rcache holds decoded records the authentication path reads, so a
	// request costs no storage read. Every write clears it (on
	// PostgreSQL, every other node's write too: see changed); rgen
	// tells a reader that raced with a write not to store what it read.
	// rgen is also the store's generation (see generation): it changes
	// only under rmu, and is read without it.
	rmu    sync.RWMutex
	rgen   atomic.Uint64
	rcache map[string]cachedRecord

	now func() time.Time
}

func newStore(st storage, realm string, nonceKey []byte, params argonParams, now func() time.Time) *Store {
	return &Store{st: st, realm: realm, nonceKey: nonceKey, params: params, now: now}
}

// Close closes the store. It waits for operations in progress. A store
// on PostgreSQL stops listening for other nodes' changes; the database
// handle stays open (its owner closes it).
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.changed() // a connection's remembered verification is not honoured past Close, nor records read before it
	return s.st.close()
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

// write runs fn, a write to the storage, and then moves the generation
// and clears the read cache, before the method that wrote returns.
func (s *Store) write(fn func() error) error {
	return s.read(func() error {
		err := fn()
		s.changed()
		return err
	})
}

// changed moves the generation and clears the read cache: the store
// changed. Its own writes call it, and on PostgreSQL the listener and the
// poll when another node's write arrives.
func (s *Store) changed() {
	s.rmu.Lock()
	s.rgen.Add(1)
	clear(s.rcache)
	s.rmu.Unlock()
}

// generation changes with every write to the store (whatever it changes:
// a key revoked, a user or account disabled, a password or role changed)
// and when the store closes, after the write is committed and before the
// method that wrote returns. So a verification made after generation()
// read g holds for as long as generation() still reads g: no write has
// returned since g was read. On PostgreSQL another node's write moves it
// when its notification arrives (or the poll sees it): see OpenPostgres.
func (s *Store) generation() uint64 { return s.rgen.Load() }

// cachedRecord is a decoded record, or its absence.
type cachedRecord struct {
	v  any
	ok bool
}

// maxCachedRecords bounds the read cache; past it, the cache starts over.
const maxCachedRecords = 100_000

// Keys of the read cache, one prefix per kind of record.
const (
	cacheAccount = "a/"
	cacheUser    = "u/"
	cacheKey     = "k/"
)

// getCached reads a record through the read cache: key names it there,
// load reads it from the storage.
func getCached[T any](s *Store, key string, load func() (T, bool, error)) (T, bool, error) {
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
		v, ok, err = load()
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
	if err := s.write(func() error { return s.st.addAccount(a) }); err != nil {
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
		a, ok, err = s.st.account(c)
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
		var err error
		out, err = s.st.accounts()
		return err
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
	return s.write(func() error { return s.st.setAccountDisabled(c, disabled) })
}

// accountActive says whether the account exists and is not disabled.
func (s *Store) accountActive(code string) (bool, error) {
	a, ok, err := getCached(s, cacheAccount+code, func() (Account, bool, error) { return s.st.account(code) })
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
	if err := s.write(func() error { return s.st.addUser(rec) }); err != nil {
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
	return getCached(s, cacheUser+name, func() (userRecord, bool, error) { return s.st.user(name) })
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
	return s.write(func() error { return s.st.updateUser(name, fn) })
}

// Users returns the users of an account in name order; account "" means
// every account.
func (s *Store) Users(account string) ([]User, error) {
	c := NormalizeAccountCode(account)
	var out []User
	err := s.read(func() error {
		recs, err := s.st.users(c)
		for _, r := range recs {
			out = append(out, r.User.withRole())
		}
		return err
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
	err = s.write(func() error {
		for {
			var id string
			id, secret = newKeySecret()
			k = Key{ID: id, Account: c, Label: label, Created: s.now().UTC()}
			sum := keyHash(secret)
			if err := s.st.addKey(keyRecord{Key: k, SHA256: sum[:]}); !errors.Is(err, errKeyIDTaken) {
				return err
			} // 50 random bits collided: draw again
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
	return getCached(s, cacheKey+id, func() (keyRecord, bool, error) { return s.st.key(id) })
}

// Keys returns the keys of an account, revoked ones too, oldest first;
// account "" means every account.
func (s *Store) Keys(account string) ([]Key, error) {
	c := NormalizeAccountCode(account)
	var out []Key
	err := s.read(func() error {
		recs, err := s.st.keys(c)
		for _, r := range recs {
			out = append(out, r.Key)
		}
		return err
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
	return s.write(func() error { return s.st.revokeKey(id, s.now().UTC()) })
}
