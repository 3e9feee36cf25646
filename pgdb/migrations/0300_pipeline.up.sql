-- The mailroom's records and queue (package pipeline, PostgresStore).
-- Records are stored as the JSON of pipeline's Go structs (rec, bytea:
-- the exact bytes, as the embedded Pebble store keeps them), beside the
-- columns the queries need. Times are Unix nanoseconds (bigint): the
-- order and cursors of the embedded store, exactly. Text columns that
-- order or page are COLLATE "C" (byte order, whatever the database's
-- locale); strings that come from customers and are only compared (a
-- letter's reference, a gateway's id, the folded title) are bytea, so
-- no byte they hold can fail a write.

-- A mailing and its summary (what a list of mailings shows): counts of
-- its letters per status, summary.go's encoding of the summary, and the
-- title and department lower-cased as Go does (strings.ToLower) for
-- SearchMailings' text filter.
CREATE TABLE pipeline_mailings (
	epid       text COLLATE "C" PRIMARY KEY,
	account    text COLLATE "C" NOT NULL,
	created_ns bigint NOT NULL,
	rec        bytea NOT NULL,
	counts     jsonb NOT NULL DEFAULT '{}',
	summary    bytea NOT NULL,
	title_fold bytea NOT NULL,
	dept_fold  bytea NOT NULL
);
-- an account's mailings, newest first, those of one instant in EPID order
CREATE INDEX pipeline_mailings_account ON pipeline_mailings (account, created_ns DESC, epid);

CREATE TABLE pipeline_letters (
	epid        text COLLATE "C" NOT NULL,
	idx         integer NOT NULL,
	account     text COLLATE "C" NOT NULL,
	ref         bytea,  -- NULL: no reference
	status      text COLLATE "C" NOT NULL,
	failover_ns bigint, -- when it failed over to post; NULL: it did not
	rec         bytea NOT NULL,
	PRIMARY KEY (epid, idx)
);
CREATE INDEX pipeline_letters_ref ON pipeline_letters (account, ref) WHERE ref IS NOT NULL;
CREATE INDEX pipeline_letters_failover ON pipeline_letters (account, failover_ns DESC, epid, idx) WHERE failover_ns IS NOT NULL;

CREATE TABLE pipeline_batches (
	id         text COLLATE "C" PRIMARY KEY,
	epid       text COLLATE "C" NOT NULL,
	state      text COLLATE "C" NOT NULL,
	created_ns bigint NOT NULL,
	rec        bytea NOT NULL
);
CREATE INDEX pipeline_batches_state ON pipeline_batches (state, created_ns, id);

-- a letter by a gateway's id for it (SMS message ids)
CREATE TABLE pipeline_aliases (
	alias bytea PRIMARY KEY,
	epid  text COLLATE "C" NOT NULL,
	idx   integer NOT NULL
);

-- The queue. A job is claimed by setting lease (63 random bits, new for
-- every claim), lease_owner (the node) and lease_expires; a claim whose
-- lease_expires has passed may be taken by another node, which gives the
-- job a new lease. Ending a job (pipeline_end_job) needs the lease it
-- was claimed under.
CREATE TABLE pipeline_jobs (
	id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	kind          text COLLATE "C" NOT NULL,
	key           text COLLATE "C" NOT NULL,
	due_ns        bigint NOT NULL,
	rec           bytea NOT NULL,
	lease         bigint UNIQUE,
	lease_owner   text,
	lease_expires timestamptz
);
-- the claim's order: due, then kind and key (ties in byte order)
CREATE INDEX pipeline_jobs_due ON pipeline_jobs (due_ns, kind, key);
CREATE INDEX pipeline_jobs_kind_key ON pipeline_jobs (kind, key);

-- pipeline_end_job removes the job claimed under a lease, or fails the
-- transaction (SQLSTATE LJ001, the lease in DETAIL) when no job holds it
-- any more: another node took it over, or it was ended already.
CREATE FUNCTION pipeline_end_job(token bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM pipeline_jobs WHERE lease = token;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'job lease % lost', token USING ERRCODE = 'LJ001', DETAIL = token::text;
	END IF;
END
$$;
