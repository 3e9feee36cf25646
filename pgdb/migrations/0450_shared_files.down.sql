DROP TABLE lodge_shared_files;
