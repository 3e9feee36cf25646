// Package e2e holds the end-to-end tests: they build the real lodge binary,
// start it with a temporary data directory, and talk to it over HTTPS with
// real clients (curl, Python's requests); TestREADMECommands runs every
// command block of README.md with bash. It has no code other than tests.
//
// A server is started with its listeners on port 0 (-addr 127.0.0.1:0,
// -plain-addr 127.0.0.1:0) and the tests read the addresses the kernel
// gave it from the line it logs once it serves (`msg=serving
// https=ADDR plain=ADDR`). No test picks a "free" port by listening and
// closing: another socket on the machine can take that port before the
// server binds it. A server that exits before it serves fails its test at
// once, with its last log lines.
//
// The upload, mailroom, delivery, printer and portal tests run twice, as
// subtests: single, one node on its own data directory, and three_nodes,
// three nodes sharing one PostgreSQL database (internal/testpg) and one
// S3 bucket (internal/tests3, versitygw) behind a round-robin TCP
// balancer that passes TLS through (shared_test.go). The clients open a
// new connection for each request (curl does; the Go client and Python's
// requests are told to, Chromium is sent Connection: close), so the
// requests of one session go to every node in turn.
package e2e
