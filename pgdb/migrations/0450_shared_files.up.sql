-- The small files of the data directory that every node must read alike
-- (package datafiles, datafiles.NewPostgres): account settings
-- (accounts/<ACCOUNT>.json), price tables (prices.json,
-- prices/<ACCOUNT>.json), letter profiles (profiles/<ACCOUNT>/<name>.json
-- or .xml) and the signed links' key (links.key). name is the file's path
-- under the data directory, slash-separated; the bounds are
-- datafiles.CheckName's and datafiles.MaxSize.
CREATE TABLE lodge_shared_files (
	name       text PRIMARY KEY CHECK (octet_length(name) BETWEEN 1 AND 512),
	body       bytea NOT NULL CHECK (octet_length(body) <= 1048576),
	updated_at timestamptz NOT NULL DEFAULT now()
);
