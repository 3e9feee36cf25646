-- Package auth on PostgreSQL (auth.OpenPostgres): the accounts, users and
-- API keys every node shares, the Digest nonce key they all sign with,
-- and the generation counter whose change tells every node to drop what
-- it remembered of these tables. See auth's package documentation.

-- One row: the format of these tables, the Digest realm the HA1 values
-- are made for and the Digest nonce key (HMAC-SHA256, 32 bytes). The
-- first node to open the store makes it (INSERT ... ON CONFLICT DO
-- NOTHING); every node reads the same one back.
CREATE TABLE auth_meta (
	id        boolean PRIMARY KEY DEFAULT true CHECK (id),
	format    integer NOT NULL,
	realm     text NOT NULL,
	nonce_key bytea NOT NULL CHECK (octet_length(nonce_key) = 32),
	created   timestamptz NOT NULL
);

-- One row: raised in the transaction of every write to the tables below,
-- which also sends its new value on the channel lodge_auth (pg_notify).
CREATE TABLE auth_generation (
	id  boolean PRIMARY KEY DEFAULT true CHECK (id),
	gen bigint NOT NULL
);
INSERT INTO auth_generation (gen) VALUES (0);

CREATE TABLE auth_accounts (
	code     text PRIMARY KEY CHECK (code ~ '^[A-Z]{3}[0-9]{5}$'),
	name     text NOT NULL,
	disabled boolean NOT NULL DEFAULT false,
	created  timestamptz NOT NULL
);

-- hash: argon2id in PHC form; ha1_md5, ha1_sha256: hex HA1 values for
-- HTTP Digest made for realm; gen: raised by every change of the row
-- (a cached password verification holds only while it is unchanged).
CREATE TABLE auth_users (
	name         text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9._@-]{1,64}$'),
	account      text NOT NULL REFERENCES auth_accounts (code),
	disabled     boolean NOT NULL DEFAULT false,
	role         text NOT NULL DEFAULT 'customer' CHECK (role IN ('customer', 'operator')),
	created      timestamptz NOT NULL,
	password_set timestamptz NOT NULL,
	gen          bigint NOT NULL,
	hash         text NOT NULL,
	realm        text NOT NULL,
	ha1_md5      text NOT NULL,
	ha1_sha256   text NOT NULL
);
CREATE INDEX auth_users_account ON auth_users (account);

-- sha256: of the whole secret (lk_<id>_<secret>), which is not stored;
-- revoked: NULL while the key is valid.
CREATE TABLE auth_keys (
	id      text PRIMARY KEY CHECK (id ~ '^[a-z2-7]{10}$'),
	account text NOT NULL REFERENCES auth_accounts (code),
	label   text NOT NULL DEFAULT '',
	created timestamptz NOT NULL,
	revoked timestamptz,
	sha256  bytea NOT NULL CHECK (octet_length(sha256) = 32)
);
CREATE INDEX auth_keys_account ON auth_keys (account);
