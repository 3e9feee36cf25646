-- The nodes sharing this database: each running lodge serve writes its
-- row at start and every 10 s (seen), so operators and /readyz can tell
-- which nodes are alive; a row is never needed for correctness.
CREATE TABLE lodge_nodes (
	node       text PRIMARY KEY,
	started_at timestamptz NOT NULL,
	seen_at    timestamptz NOT NULL,
	version    text NOT NULL DEFAULT ''
);
