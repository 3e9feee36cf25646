package auth

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/pgdb"
)

// Tests of what only sharing adds: two Stores on one PostgreSQL database
// are two nodes.

// pgNode is a node: a store with a pool of its own on the fixture's
// database, and an Authenticator over it.
type pgNode struct {
	s  *Store
	db *pgdb.DB
	a  *Authenticator
}

func newNode(t *testing.T, fx *fixture, cfg PostgresConfig, acfg Config) *pgNode {
	t.Helper()
	s, db, err := openPostgresTest(t, fx.place, cfg)
	mustNil(t, err)
	if acfg.Now == nil {
		acfg.Now = fx.clock.Now
	}
	return &pgNode{s: s, db: db, a: NewAuthenticator(s, acfg)}
}

func (n *pgNode) pg() *pgStorage { return n.s.st.(*pgStorage) }

// How a node learns of another's writes.
var propagations = []struct {
	name string
	cfg  PostgresConfig
}{
	{"notify", PostgresConfig{Poll: time.Hour}},                           // the notification alone
	{"poll", PostgresConfig{Poll: 20 * time.Millisecond, noListen: true}}, // the poll alone
	{"both", PostgresConfig{}},                                            // as lodge serve runs it
}

// TestNodesChanges: a change made on node A (the fixture's store) reaches
// node B's open connections, which had the credentials verified and
// remembered, and B's read cache: a revoked key, a disabled user or
// account, a new password are refused on B, a new role is B's too.
func TestNodesChanges(t *testing.T) {
	alice := Principal{Account: "ABC12345", User: "alice", Method: MethodBasic, Role: RoleCustomer}
	key := Principal{Account: "ABC12345", Method: MethodBearer}
	client := func() string { return "192.0.2.1" }
	bearer := func(fx *fixture) string { return "Bearer " + fx.good }
	aliceBasic := func(fx *fixture) string { return basic("alice", "password1") }
	for _, prop := range propagations {
		t.Run(prop.name, func(t *testing.T) {
			f := func(name string, header func(fx *fixture) string, want Principal, change func(fx *fixture) error, wantErr error, after Principal) {
				t.Helper()
				fx := newFixtureOn(t, postgresKind, Config{}) // node A
				b := newNode(t, fx, prop.cfg, Config{})       // node B, its Basic cache on
				if want.Method == MethodBearer {
					want.KeyID = fx.goodID
				}
				h := []byte(header(fx))
				var c ConnCache // a keep-alive connection to B
				for i := range 2 {
					if p, err := b.a.AuthenticateConn(&c, h, client); err != nil || p != want {
						t.Fatalf("%s: request %d on B before the change = %+v, %v; want %+v", name, i+1, p, err, want)
					}
				}
				mustNil(t, change(fx))
				var p Principal
				var err error
				testenv.WaitFor(t, func() bool {
					p, err = b.a.AuthenticateConn(&c, h, client)
					return errors.Is(err, wantErr) && p == after
				}, func() string {
					return fmt.Sprintf("%s on A to reach B's connection: %+v, %v; want %+v, %v", name, p, err, after, wantErr)
				})
				// and a new connection, and a plain request, see it too
				if p, err := b.a.Authenticate(h, client()); !errors.Is(err, wantErr) || p != after {
					t.Errorf("%s: a request on B = %+v, %v; want %+v, %v", name, p, err, after, wantErr)
				}
			}
			none := Principal{}
			f("key revoked", bearer, key, func(fx *fixture) error { return fx.s.RevokeKey(fx.goodID) }, ErrInvalid, none)
			f("key's account disabled", bearer, key, func(fx *fixture) error { return fx.s.DisableAccount("ABC12345") }, ErrInvalid, none)
			f("user disabled", aliceBasic, alice, func(fx *fixture) error { return fx.s.DisableUser("alice") }, ErrInvalid, none)
			f("user's account disabled", aliceBasic, alice, func(fx *fixture) error { return fx.s.DisableAccount("ABC12345") }, ErrInvalid, none)
			f("password changed", aliceBasic, alice, func(fx *fixture) error { return fx.s.SetPassword("alice", "password9") }, ErrInvalid, none)
			f("role changed", aliceBasic, alice, func(fx *fixture) error { return fx.s.SetRole("alice", RoleOperator) },
				nil, Principal{Account: "ABC12345", User: "alice", Method: MethodBasic, Role: RoleOperator})
		})
	}
}

// TestNodesUnsharedControl: without the notification and the poll, node
// B goes on honouring a key A revoked (its connection's remembered
// header and its read cache): what TestNodesChanges sees arrive is
// carried by them, not by chance.
func TestNodesUnsharedControl(t *testing.T) {
	fx := newFixtureOn(t, postgresKind, Config{})
	b := newNode(t, fx, PostgresConfig{Poll: time.Hour, noListen: true}, Config{})
	h := []byte("Bearer " + fx.good)
	var c ConnCache
	client := func() string { return "192.0.2.1" }
	for range 2 {
		_, err := b.a.AuthenticateConn(&c, h, client)
		mustNil(t, err)
	}
	mustNil(t, fx.s.RevokeKey(fx.goodID))
	if _, err := fx.a.Authenticate(h, client()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("A still takes the key it revoked: %v", err)
	}
	if _, err := b.a.AuthenticateConn(&c, h, client); err != nil {
		t.Fatalf("B refused the key without hearing of the change: %v (the control is broken)", err)
	}
	if _, err := b.a.Authenticate(h, client()); err != nil {
		t.Fatalf("B's read cache did not hold the key: %v (the control is broken)", err)
	}
}

// TestNodesSignIn: a user disabled on A cannot sign in on B, even with
// the password B verified (and cached) a moment before; enabled again on
// A, B takes it again.
func TestNodesSignIn(t *testing.T) {
	fx := newFixtureOn(t, postgresKind, Config{})
	b := newNode(t, fx, PostgresConfig{}, Config{})
	cred := []byte(basic("alice", "password1"))
	if p, err := b.a.Authenticate(cred, "192.0.2.1"); err != nil || p.User != "alice" {
		t.Fatalf("sign-in on B: %+v, %v", p, err)
	}
	mustNil(t, fx.s.DisableUser("alice"))
	testenv.WaitFor(t, func() bool {
		_, err := b.a.Authenticate(cred, "192.0.2.1")
		return errors.Is(err, ErrInvalid)
	}, func() string { return "the user disabled on A to be refused on B" })
	mustNil(t, fx.s.EnableUser("alice"))
	testenv.WaitFor(t, func() bool {
		_, err := b.a.Authenticate(cred, "192.0.2.1")
		return err == nil
	}, func() string { return "the user enabled on A to sign in on B" })
	// What B writes, A sees: the stores are one.
	mustNil(t, b.s.SetPassword("alice", "password7"))
	testenv.WaitFor(t, func() bool {
		_, err := fx.a.Authenticate([]byte(basic("alice", "password7")), "192.0.2.2")
		return err == nil
	}, func() string { return "the password set on B to work on A" })
	if _, err := fx.a.Authenticate(cred, "192.0.2.2"); !errors.Is(err, ErrInvalid) {
		t.Errorf("the old password on A after B changed it: %v", err)
	}
}

// TestNodesNonce: every node signs nonces with the one key in the
// database, so a nonce issued by A verifies on B, with the same opaque;
// a forged one is refused on B as on A.
func TestNodesNonce(t *testing.T) {
	cfg := Config{Digest: true, MaxFailures: -1, CacheTTL: -1}
	fx := newDigestFixtureOn(t, postgresKind, cfg)
	b := newNode(t, fx.fixture, PostgresConfig{}, cfg)
	if !bytesEqual(b.s.nonceKey, fx.s.nonceKey) || b.a.digest.opaque != fx.a.digest.opaque {
		t.Fatal("the nodes have different nonce keys")
	}
	fx.clock.Add(time.Second) // issued after B's Authenticator started: not a nonce of an earlier process
	nonce := fx.a.newNonce()  // A issues
	req := func(a *Authenticator, h string) (Principal, error) {
		return a.AuthenticateRequest([]byte(h), []byte("GET"), []byte("/x"), "192.0.2.1")
	}
	if p, err := req(b.a, fx.header("nonce="+nonce)); err != nil || p.User != "alice" || p.Method != MethodDigest {
		t.Fatalf("A's nonce on B: %+v, %v", p, err)
	}
	if p, err := req(b.a, fx.header("nonce="+nonce, "nc=00000002", "algorithm=SHA-256")); err != nil || p.User != "alice" {
		t.Fatalf("A's nonce on B, next count: %+v, %v", p, err)
	}
	if _, err := req(b.a, fx.header("nonce="+flip(nonce, 30))); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a forged nonce on B: %v", err)
	}
	// And a challenge B sends is one A takes.
	ch := b.a.DigestChallenges(false)[0]
	bn := ch[len(`Digest realm="lodge", qop="auth", algorithm=SHA-256, nonce="`):]
	bn = bn[:len(nonce)]
	if p, err := req(fx.a, fx.header("nonce="+bn)); err != nil || p.User != "alice" {
		t.Fatalf("B's nonce on A: %+v, %v", p, err)
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// TestNodesListenerReconnects: when B's listening connection is cut, B
// listens again on a new one and reads the counter then, so a change made
// while it was down, and one made after, both reach it, with the poll too
// slow to matter (an hour).
func TestNodesListenerReconnects(t *testing.T) {
	fx := newFixtureOn(t, postgresKind, Config{})
	b := newNode(t, fx, PostgresConfig{Poll: time.Hour}, Config{})
	pg := b.pg()
	testenv.WaitFor(t, func() bool { return pg.listens.Load() == 1 }, func() string { return "B to listen" })
	good2, k2, err := fx.s.CreateKey("ABC12345", "second")
	mustNil(t, err)
	client := func() string { return "192.0.2.1" }
	var c1, c2 ConnCache
	for _, h := range []struct {
		c   *ConnCache
		key string
	}{{&c1, fx.good}, {&c2, good2}} {
		testenv.WaitFor(t, func() bool {
			_, err := b.a.AuthenticateConn(h.c, []byte("Bearer "+h.key), client)
			return err == nil
		}, func() string { return "B to take the keys" })
	}

	// Cut B's listener off, and revoke at once: before B listens again,
	// or after; either way B must learn of it.
	admin, err := pgdb.Open(context.Background(), pgdb.Config{URL: fx.place})
	mustNil(t, err)
	defer admin.Close()
	var cut bool
	mustNil(t, admin.Pool.QueryRow(context.Background(), `SELECT pg_terminate_backend($1)`, int32(pg.listenPID.Load())).Scan(&cut))
	if !cut {
		t.Fatal("the listener's backend was not terminated")
	}
	mustNil(t, fx.s.RevokeKey(fx.goodID))
	testenv.WaitFor(t, func() bool {
		_, err := b.a.AuthenticateConn(&c1, []byte("Bearer "+fx.good), client)
		return errors.Is(err, ErrInvalid)
	}, func() string { return "the key revoked while B's listener was cut to be refused on B" })
	testenv.WaitFor(t, func() bool { return pg.listens.Load() == 2 }, func() string { return "B to listen again" })

	// A change after B listens again arrives by notification.
	if _, err := b.a.AuthenticateConn(&c2, []byte("Bearer "+good2), client); err != nil {
		t.Fatalf("the second key on B: %v", err)
	}
	mustNil(t, fx.s.RevokeKey(k2.ID))
	testenv.WaitFor(t, func() bool {
		_, err := b.a.AuthenticateConn(&c2, []byte("Bearer "+good2), client)
		return errors.Is(err, ErrInvalid)
	}, func() string { return "the key revoked after B listened again to be refused on B" })
}

// TestPostgresRoundTrips counts the database round trips of a key
// verification on a node: 2 (the key and its account) when nothing is
// cached, 0 while the node's read cache holds them, 0 for a connection's
// remembered header; of a Basic sign-in; and of the writes. The figures
// are the report's (go test -run TestPostgresRoundTrips -v ./auth).
func TestPostgresRoundTrips(t *testing.T) {
	fx := newFixtureOn(t, postgresKind, Config{})
	b := newNode(t, fx, PostgresConfig{Poll: time.Hour}, Config{})
	testenv.WaitFor(t, func() bool { return b.pg().listens.Load() == 1 }, func() string { return "B to listen" })
	h := []byte("Bearer " + fx.good)
	client := func() string { return "192.0.2.1" }
	trips := func(what string, want int64, fn func()) {
		t.Helper()
		before := b.db.RoundTrips()
		fn()
		got := b.db.RoundTrips() - before
		t.Logf("%s: %d round trips", what, got)
		if got != want {
			t.Errorf("%s: %d round trips, want %d", what, got, want)
		}
	}
	var c ConnCache
	trips("key verification, nothing cached", 2, func() { _, err := b.a.AuthenticateConn(&c, h, client); mustNil(t, err) })
	trips("the connection's remembered key", 0, func() { _, err := b.a.AuthenticateConn(&c, h, client); mustNil(t, err) })
	trips("key verification, read cache warm", 0, func() { _, err := b.a.Authenticate(h, client()); mustNil(t, err) })
	trips("Basic sign-in, the user not cached (its account is)", 1, func() { _, err := b.a.Authenticate([]byte(basic("alice", "password1")), client()); mustNil(t, err) })
	trips("Basic, verification cached", 0, func() { _, err := b.a.Authenticate([]byte(basic("alice", "password1")), client()); mustNil(t, err) })
	// A write: begin, the statement(s), the generation and its
	// notification, commit.
	trips("RevokeKey", 4, func() { mustNil(t, b.s.RevokeKey(fx.goodID)) })
	trips("DisableUser (read for update, write)", 5, func() { mustNil(t, b.s.DisableUser("alice")) })
	// Another node's write empties the cache: the next verification
	// reads again.
	gen := b.s.generation()
	good2, _, err := fx.s.CreateKey("ABC12345", "")
	mustNil(t, err)
	testenv.WaitFor(t, func() bool { return b.s.generation() != gen }, func() string { return "A's write to reach B" })
	h2 := []byte("Bearer " + good2)
	trips("key verification after another node's write", 2, func() { _, err := b.a.Authenticate(h2, client()); mustNil(t, err) })
}

// TestNodesPostgresRestart: after the database restarts (immediate
// shutdown: every connection cut), the nodes carry on: B listens again,
// and a key revoked on A (retried until the database answers) is refused
// on B's open connection, with the poll too slow to matter.
func TestNodesPostgresRestart(t *testing.T) {
	fx := newFixtureOn(t, postgresKind, Config{})
	b := newNode(t, fx, PostgresConfig{Poll: time.Hour}, Config{})
	pg := b.pg()
	testenv.WaitFor(t, func() bool { return pg.listens.Load() == 1 }, func() string { return "B to listen" })
	h := []byte("Bearer " + fx.good)
	client := func() string { return "192.0.2.1" }
	var c ConnCache
	_, err := b.a.AuthenticateConn(&c, h, client)
	mustNil(t, err)
	mustNil(t, testpg.Shared(t).Restart())
	testenv.WaitFor(t, func() bool { return pg.listens.Load() == 2 }, func() string { return "B to listen again after the restart" })
	var rerr error
	testenv.WaitFor(t, func() bool { rerr = fx.s.RevokeKey(fx.goodID); return rerr == nil }, func() string { return fmt.Sprintf("the revocation on A: %v", rerr) })
	testenv.WaitFor(t, func() bool {
		_, err := b.a.AuthenticateConn(&c, h, client)
		return errors.Is(err, ErrInvalid)
	}, func() string { return "the key revoked on A after the restart to be refused on B" })
}
