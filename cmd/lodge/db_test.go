package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/pgdb"
)

// The package's tests share one PostgreSQL server (internal/testpg).
func TestMain(m *testing.M) { testpg.Main(m) }

func TestDBCommand(t *testing.T) {
	url := testpg.NewDatabase(t)
	ctx := context.Background()
	ms, err := pgdb.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	newest := ms[len(ms)-1].Version
	f := func(want string, args ...string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := runDB(ctx, args, &out, &errOut); err != nil {
			t.Fatalf("lodge db %v: %v\n%s", args, err, errOut.String())
		}
		if !strings.Contains(out.String(), want) {
			t.Fatalf("lodge db %v: %q, want %q", args, out.String(), want)
		}
	}
	f("schema version 0;", "status", "-db", url)
	f("schema version "+strconv.Itoa(newest)+" (was 0)", "migrate", "-db", url)
	f("schema version 0 (was "+strconv.Itoa(newest)+")", "migrate", "-db", url, "-to", "0")
	f("schema version "+strconv.Itoa(newest)+" (was 0)", "migrate", "-db", url)

	bad := func(want string, args ...string) {
		t.Helper()
		var out, errOut bytes.Buffer
		err := runDB(ctx, args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("lodge db %v: %v, want %q", args, err, want)
		}
	}
	bad("a subcommand is needed")
	bad("-db is required", "status")
	bad("unknown subcommand", "drop", "-db", url)
	bad("no migration", "migrate", "-db", url, "-to", "99999")
}
