DROP TABLE upload_files;
DROP TABLE upload_sessions;
