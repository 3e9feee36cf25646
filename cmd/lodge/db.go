// The db command: the schema and the nodes of the PostgreSQL database that
// several lodge nodes share (lodge serve -db).

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/lodge-mail/lodge/pgdb"
)

const dbUsage = `usage:
  lodge db status -db URL          the schema version and the nodes seen
  lodge db migrate -db URL [-to N] migrate the schema to version N (default: the newest)
lodge serve -db migrates to the newest version itself when it starts; migrate
-to a lower version undoes the migrations above it (stop the nodes first).
`

func runDB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, dbUsage)
		return errors.New("db: a subcommand is needed")
	}
	fs := flag.NewFlagSet("db "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("db", "", "the PostgreSQL database: postgres://user:pass@host/db or host=/run/postgresql dbname=lodge (required)")
	to := fs.Int("to", -1, "migrate: the schema version to end at (-1: the newest this binary knows)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), dbUsage+"\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *url == "" || fs.NArg() != 0 {
		fs.Usage()
		return errors.New("db: -db is required and takes no arguments")
	}
	db, err := pgdb.Connect(ctx, pgdb.Config{URL: *url})
	if err != nil {
		return err
	}
	defer db.Close()
	switch args[0] {
	case "migrate":
		from, err := db.Version(ctx)
		if err != nil {
			return err
		}
		at, err := db.Migrate(ctx, *to)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "schema version %d (was %d)\n", at, from)
		return nil
	case "status":
		v, err := db.Version(ctx)
		if err != nil {
			return err
		}
		ms, err := pgdb.Migrations()
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "schema version %d; this binary's newest %d\n", v, ms[len(ms)-1].Version)
		if v == 0 {
			return nil
		}
		nodes, err := db.Nodes(ctx)
		if err != nil {
			return err
		}
		for _, n := range nodes {
			fmt.Fprintf(stdout, "node %s %s started %s, last seen %s ago\n", n.Name, n.Version,
				n.StartedAt.Format(time.RFC3339), time.Since(n.SeenAt).Round(time.Second))
		}
		return nil
	default:
		fmt.Fprint(stderr, dbUsage)
		return fmt.Errorf("db: unknown subcommand %q", args[0])
	}
}
