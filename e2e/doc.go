// Package e2e holds the end-to-end tests: they build the real lodge binary,
// start it on free ports with a temporary data directory, and talk to it
// over HTTPS with real clients (curl, Python's requests). It has no code
// other than tests.
package e2e
