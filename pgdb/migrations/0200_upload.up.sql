-- Upload sessions and the records of their files (package upload,
-- OpenShared). The files' bytes are objects of the blob store under
-- blobs/<epid>/<blob>. Times a Go time.Time held are timestamptz
-- (microseconds); a file's upload times are Unix seconds as the
-- end_session answer gives them. EPIDs and file names compare byte by
-- byte (COLLATE "C"), as the embedded store's keys do, whatever the
-- database's locale.
CREATE TABLE upload_sessions (
	epid        text COLLATE "C" PRIMARY KEY,
	account     text NOT NULL,
	user_name   text NOT NULL,
	state       text NOT NULL CHECK (state IN ('open', 'ended', 'expired', 'abandoned')),
	created     timestamptz NOT NULL,
	expires     timestamptz NOT NULL,
	ended       timestamptz,
	ended_by    text NOT NULL DEFAULT '',
	purged      timestamptz,
	reason      text NOT NULL DEFAULT '',
	result      jsonb,
	-- sweep: the session's blobs are being deleted (it expired or was
	-- abandoned, or its documents are being purged), set in the commit
	-- that decided it and cleared once they are gone; sweep_until: until
	-- when the node that set it is taken to be at it (after that any
	-- node's janitor may take it over)
	sweep       boolean NOT NULL DEFAULT false,
	sweep_until timestamptz
);

-- recent_uploads: an account's sessions, newest first
CREATE INDEX upload_sessions_account ON upload_sessions (account, created DESC, epid);
-- the janitor's work: open sessions by expiry, kept documents by end
-- time, deletions in progress by lease
CREATE INDEX upload_sessions_open ON upload_sessions (expires) WHERE state = 'open';
CREATE INDEX upload_sessions_kept ON upload_sessions (ended) WHERE state = 'ended' AND purged IS NULL;
CREATE INDEX upload_sessions_sweep ON upload_sessions (sweep_until) WHERE sweep;

CREATE TABLE upload_files (
	epid       text COLLATE "C" NOT NULL REFERENCES upload_sessions (epid) ON DELETE CASCADE,
	name       text COLLATE "C" NOT NULL,
	size       bigint NOT NULL,
	received   bigint NOT NULL,
	declared   bigint NOT NULL,
	chunks     integer NOT NULL,
	intent     integer NOT NULL DEFAULT 0,
	first_at   double precision NOT NULL,
	last_at    double precision NOT NULL,
	sha1       text NOT NULL,
	kind       text NOT NULL,
	pages      integer NOT NULL DEFAULT 0,
	blob       text NOT NULL,
	archive    text NOT NULL DEFAULT '',
	portal     boolean NOT NULL DEFAULT false,
	by_user    text NOT NULL DEFAULT '',
	page_sizes text NOT NULL DEFAULT '',
	PRIMARY KEY (epid, name)
);
