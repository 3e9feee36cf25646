-- The portal's sessions shared by every node (portal.NewPostgresSessions):
-- a session signed in on one node is accepted on every other, and signing
-- out on one ends it on all. key is the SHA-256 of the session id (the
-- id itself, the lodge_portal cookie, is not stored); account is '' until
-- the session signs in; last_used is written at most once a minute per
-- session, not on every request; flash is the one-time message of the
-- next page.
CREATE TABLE portal_sessions (
	key       bytea PRIMARY KEY CHECK (octet_length(key) = 32),
	account   text NOT NULL DEFAULT '',
	user_name text NOT NULL DEFAULT '',
	operator  boolean NOT NULL DEFAULT false,
	csrf      text NOT NULL,
	created   timestamptz NOT NULL,
	last_used timestamptz NOT NULL,
	flash     text NOT NULL DEFAULT ''
);
CREATE INDEX portal_sessions_last_used ON portal_sessions (last_used);
CREATE INDEX portal_sessions_created ON portal_sessions (created);
