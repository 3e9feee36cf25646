// Package auth keeps lodge's customer accounts and their credentials, and
// authenticates requests with them.
//
// The contract is ../shared/spec/mail-upload-address-check.md section 5:
// addr_check takes a Bearer API key or HTTP Basic credentials, one method
// per request; a missing or wrong credential gives 401 with
// WWW-Authenticate; credentials never travel in the URL. Account codes look
// like ABC12345 (../shared/docs/service-compat.md).
//
// # What is stored
//
//   - Accounts: a code (three upper-case letters, five digits), a name and
//     whether the account is disabled.
//   - Users: a name (1 to 64 of A-Z a-z 0-9 . _ @ -, compared exactly), the
//     account they belong to, whether they are disabled, their role
//     ("operator", or absent for a customer: records made before roles
//     read as customers) and their password as an argon2id hash in PHC form
//     ($argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>, salt and hash base64
//     without padding). The parameters travel in the hash, so they can be
//     raised later without invalidating stored passwords. Alongside it, for
//     HTTP Digest (RFC 7616), the hex HA1 values H(user:realm:password) for
//     MD5 and SHA-256 and the realm they were made for; see DigestHA1.
//   - The Digest nonce key: 32 random bytes, made when the store is first
//     opened, which Digest nonces and the opaque value are signed with (see
//     Authentication).
//   - API keys: a public id (10 characters of lower-case base32), the
//     account, a label, whether revoked, and the SHA-256 of the secret. The
//     secret itself (lk_<id>_<43 characters of base64url: 256 random bits>)
//     is returned once by CreateKey and never stored.
//
// Passwords must be 8 to 1024 bytes of UTF-8 without control characters.
//
// # Pebble keys (format version 1)
//
// Every key starts with "auth/v1/"; values are JSON.
//
//	auth/v1/meta            format version and the Digest realm
//	auth/v1/account/<CODE>  Account
//	auth/v1/user/<name>     User with the password hash and Digest HA1s
//	auth/v1/key/<id>        Key with the SHA-256 of its secret
//	auth/v1/nonce_key       the Digest nonce key (base64 in JSON) and when it was made
//
// The store directory is created with mode 0700: it holds password hashes.
//
// # PostgreSQL (several nodes)
//
// OpenPostgres keeps the same records in the database that several lodge
// nodes share (package pgdb; tables made by its migration 0100_auth):
//
//	auth_meta        one row: format, realm, the Digest nonce key, created
//	auth_generation  one row: gen, raised by every write (see below)
//	auth_accounts    code, name, disabled, created
//	auth_users       name, account, disabled, role, created, password_set,
//	                 gen, hash, realm, ha1_md5, ha1_sha256
//	auth_keys        id, account, label, created, revoked (NULL: valid),
//	                 sha256 of the secret
//
// The first node to open the store makes the nonce key (INSERT ... ON
// CONFLICT DO NOTHING, then every node reads the one stored), so a nonce
// issued by one node verifies on every other. Times are kept to the
// microsecond.
//
// Every write is one transaction that also raises auth_generation and
// sends its new value on the channel lodge_auth (pg_notify, delivered at
// commit). Every node LISTENs on a connection of its own and, when a
// value it has not seen arrives, moves its generation and empties its
// read cache, as its own writes do; it also reads the counter every
// PostgresConfig.Poll (default 1 second), in case a notification was
// missed, and when it listens again after its connection failed. So a
// change (a key revoked, a user or account disabled, a password or role
// changed) takes effect at once on the node that made it, and on other
// nodes, their open keep-alive connections included, within the
// notification's delivery, at most the poll interval while the listener
// is down.
//
// # Durability
//
// Every write is one pebble batch committed with pebble.Sync: when a method
// that changes the store returns a nil error, the change is on disk.
// Read-modify-write operations (adding with a duplicate check, changing a
// password, disabling) are serialised inside the Store, so concurrent
// callers never lose each other's updates. On PostgreSQL each write is one
// committed transaction (durable as the server's settings make commits),
// duplicates are refused by the tables' keys and a user is changed under
// its row lock (SELECT ... FOR UPDATE), so concurrent writers on any
// nodes never lose each other's updates.
//
// Pebble locks its directory: one process at a time opens a store; Open
// says so when the directory is in use (on PostgreSQL any number of
// nodes open the one store). While lodge serve holds it, the
// account, user and key commands reach it through the admin socket.
//
// # Admin socket
//
// lodge serve registers AdminOps on the data directory's admin socket
// <data-dir>/admin.sock (package internal/adminsock: one socket for the
// operations of every part; ServeAdmin serves auth's alone). The commands
// call OpenAdmin: it opens the store directly when it can and, when the
// store is in use and the socket exists, returns the client DialAdmin
// makes. Both are an Admin, so the commands work the same whether or not
// a server runs.
//
// The protocol (adminsock's) is one request per connection, each a line
// of JSON:
//
//	-> {"op":"add_account","args":{"code":"ABC12345","name":"Acme"}}
//	<- {"ok":true,"result":{"code":"ABC12345","name":"Acme","created":"..."}}
//	<- {"ok":false,"error":"account ABC12345: already exists","kind":"exists"}
//
// auth's ops are add_account (code, name), account (code), accounts,
// disable_account and enable_account (code), add_user (account, name,
// password), user (name), set_password (name, password), set_role (name, role:
// customer or operator), disable_user
// and enable_user (name), users (account), create_key (account, label;
// answers {"secret":...,"key":{...}}), keys (account) and revoke_key
// (id); ping (answers {"protocol":1,"ops":[...]}) is the socket's. Each
// takes exactly those string arguments, all but name, label and the
// account of users and keys required; results are the Store method's, in
// JSON. An error's kind is exists, notfound, invalid or closed for
// ErrExists, ErrNotFound, ErrInvalidInput and ErrClosed (the client's
// errors wrap them again, with the server's text), badrequest for a
// request that is not one of these, denied for a peer refused, internal
// otherwise.
//
// A request line is at most 64 KiB, its newline included; a connection
// gets 10 seconds for its request, the work and the answer, and at most
// 16 connections are served at a time. The socket file has mode 0600 (set
// after listening, whatever the umask) and on Linux (SO_PEERCRED), macOS
// and FreeBSD (LOCAL_PEERCRED) a peer whose user is not the server's is
// refused; elsewhere the file mode is the only guard. Passwords and new
// API key secrets travel over the socket in clear, which is local and
// same-user; the server logs nothing. A socket file left by an earlier
// server is removed only when nothing answers on it, and stopping the
// server removes the file and waits for the requests in progress.
//
// # Authentication
//
// An Authenticator checks Authorization header values against a Store:
//
//   - Bearer: the key is looked up by its public id and the SHA-256 of the
//     presented secret compared in constant time. A 256-bit random secret
//     needs no slow hash: nobody can search its space. An unknown id or a
//     secret of the wrong shape costs the same hash and comparison (against
//     a dummy) as a known one. Key ids are not secret.
//   - Basic: the password is verified with argon2id. An unknown user, a
//     disabled user and a wrong password cost the same verification (an
//     unknown user is verified against a dummy hash with the store's
//     parameters). Successful verifications are cached in memory for
//     Config.CacheTTL under an HMAC of user and password with a per-process
//     random key; a hit is honoured only while the user record still has
//     the generation it had when cached, so SetPassword, DisableUser and
//     EnableUser take effect at once. Concurrent requests with the same
//     credentials share one verification, and at most
//     Config.MaxConcurrentHashes verifications run at a time, which bounds
//     the memory argon2 takes (19 MiB each).
//   - Digest (RFC 7616, AuthenticateRequest with Config.Digest): nonces
//     carry their issue time and are signed with the store's nonce key, so
//     they outlive a restart. A nonce with the right response that is
//     expired, forgotten (Config.MaxNonces) or issued before the
//     Authenticator was made (it may have been used before a restart) is
//     ErrStaleNonce: the client retries with a fresh nonce, and it is not
//     counted as a failure. A nonce not signed with the key is ErrInvalid.
//   - Failed credential checks (ErrInvalid) are counted in a sliding
//     window per client and presented identity: the user name (Basic and
//     Digest alike; names that cannot exist count as one) or the API key
//     id (keys not shaped like one count as one). Config.MaxFailures
//     failures within Config.FailureWindow for one identity from one
//     client throttle that identity from that client: its requests get a
//     *ThrottledError without the credentials being looked up or
//     verified, until the oldest of those failures leaves the window.
//     Other users and keys from the same client are not affected, so
//     tenants behind one address do not lock each other out. A client
//     with Config.MaxClientFailures failures (default ten times as many)
//     within the window, whatever the identities, is throttled as a
//     whole, before its header is parsed, so a guesser rotating names is
//     slowed down too. The client is an IP address, IPv6 counted per
//     /64; behind trusted proxies ClientAddr takes it from
//     X-Forwarded-For. Both tables are bounded by Config.MaxClients.
//     The tables belong to the Authenticator: endpoints that share one
//     (lodge serve's JSON-RPC and uploads, which call Authenticate and
//     AuthenticateRequest) share the budget, as they must.
//     With several nodes the throttle is per node, on purpose: a shared
//     one would need a database write for every failed attempt, which
//     hands a guesser a way to load the database, and a read for every
//     attempt. A guesser spread over n nodes by the load balancer gets
//     at most n times the budget; a load balancer that keeps a client
//     on one node (by address) keeps it at one.
//   - Digest nonce counts are remembered per node too (Config.MaxNonces):
//     the same header sent to another node is taken there once more.
//     Every node refuses a replay it has seen; a shared table would cost
//     a write per request.
//
// Revoking a key, disabling a user or an account, changing a password or
// a role takes effect on the next request, on connections already open
// too (on other nodes sharing PostgreSQL: when the change's notification
// arrives; see above). Authenticate reads the key and user records (through an in-memory
// copy every write clears) on every request. AuthenticateConn, which
// lodge serve's JSON-RPC endpoint uses, verifies a connection's
// Authorization header once and remembers it in the connection's
// ConnCache with the store's generation: a counter every write to the
// store moves, before the method that wrote returns. The same header on
// the same connection is then honoured without hashing or look-ups until
// the generation moves, when it is verified afresh; a different header is
// always verified. Only Bearer and Basic are remembered: a Digest header
// signs one request (its nonce count rises every time), so the same
// header again is a replay and is refused as before. A connection's
// remembered header still gets a *ThrottledError while its client, or
// the client and that identity, are throttled.
//
// # Concurrency
//
// A Store and an Authenticator are safe for concurrent use. Close the
// Store once nothing uses it; methods called after Close return ErrClosed.
// Closing a store on PostgreSQL stops its listener and poll; the *pgdb.DB
// stays open for its owner to close. Each of its database operations is
// bounded by PostgresConfig.Timeout (default 10 seconds).
package auth
