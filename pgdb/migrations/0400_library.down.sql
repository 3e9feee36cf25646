DROP TABLE library_loose;
DROP TABLE library_documents;
