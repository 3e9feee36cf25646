-- The accounts' documents libraries of nodes sharing one database
-- (library.OpenShared): a row per document, its bytes the object
-- library/<account>/<blob> of the shared blob store. A document's name is
-- unique in its account (library.CheckName's rules).
CREATE TABLE library_documents (
	account  text NOT NULL,
	name     text NOT NULL,
	kind     text NOT NULL,
	size     bigint NOT NULL,
	pages    integer NOT NULL,
	sha1     text NOT NULL,
	uploaded timestamptz NOT NULL,
	by_user  text NOT NULL,
	blob     text NOT NULL,
	PRIMARY KEY (account, name)
);
-- Objects that no document may name: an upload's, from before its row is
-- committed, and a replaced or deleted document's, until the object is
-- deleted. A row left by a node that died is the object's only trace:
-- library.(*Library).Sweep deletes those older than an hour, object first.
CREATE TABLE library_loose (
	blob  text PRIMARY KEY,
	since timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX library_loose_since ON library_loose (since);
