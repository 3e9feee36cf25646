DROP TABLE auth_keys;
DROP TABLE auth_users;
DROP TABLE auth_accounts;
DROP TABLE auth_generation;
DROP TABLE auth_meta;
