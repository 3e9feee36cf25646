// The settings command: the small files the server reads while it runs
// (account settings, price tables, letter profiles), in the data
// directory of one node or in the database several nodes share (package
// datafiles), each checked as the server reads it before it is stored.

package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/lodge-mail/lodge/billing"
	"github.com/lodge-mail/lodge/datafiles"
	"github.com/lodge-mail/lodge/delivery/links"
	"github.com/lodge-mail/lodge/pgdb"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/upload/metadata"
)

const settingsUsage = `usage:
  lodge settings list [DIR] [-db URL]        the files (all, or those under DIR)
  lodge settings get NAME [-db URL]          print a file
  lodge settings put NAME FILE [-db URL]     check FILE ("-": standard input) as the server
                                             reads it, then store it as NAME
  lodge settings rm NAME [-db URL]           remove a file
  lodge settings import -db URL [-data-dir DIR] [-replace]
                                             copy a node's files into the database

NAME is the file's path under the data directory:
  accounts/<ACCOUNT>.json                    an account's settings (cancel_window, senders)
  prices.json, prices/<ACCOUNT>.json         the price tables
  profiles/<ACCOUNT>/<name>.json (or .xml)   the account's letter profiles
With -db the files are the shared database's (lodge serve -db), which every
node reads within 2 seconds of a change; without it, the data directory's
(-data-dir), written whole and synced as the server writes them. A profile
is checked as the server parses it; its values, as always, with each mailing
that uses it.
import copies the data directory's files of those names into the database,
and its links.key unless the database has a key already (so that the links
this node gave keep working on every node); a file the database has with
other bytes is kept unless -replace.
`

// settingsKind is a kind of file the settings command handles, by name.
type settingsKind struct {
	pattern *regexp.Regexp
	what    string
	perm    fs.FileMode
	check   func(name string, b []byte) error
}

var settingsKinds = []settingsKind{
	{regexp.MustCompile(`^accounts/[A-Z0-9]{1,32}\.json$`), "account settings", 0o640,
		func(_ string, b []byte) error { return pipeline.CheckAccountSettings(b) }},
	{regexp.MustCompile(`^prices(/[A-Z0-9]{1,32})?\.json$`), "price table", 0o644,
		func(_ string, b []byte) error { _, err := billing.ParseTable(b); return err }},
	{regexp.MustCompile(`^profiles/[A-Za-z0-9._-]{1,64}/[A-Za-z0-9._-]{1,64}\.(json|xml)$`), "profile", 0o640, checkProfile},
}

// maxProfileBytes is upload's bound of a profile file.
const maxProfileBytes = 1 << 20

func checkProfile(name string, b []byte) error {
	if len(b) > maxProfileBytes {
		return fmt.Errorf("%d bytes, more than %d", len(b), maxProfileBytes)
	}
	stem := strings.TrimSuffix(strings.TrimSuffix(path.Base(name), ".json"), ".xml")
	if len(stem) > 64 || len(path.Base(path.Dir(name))) > 64 {
		return errors.New("a profile's and an account's names are at most 64 characters")
	}
	_, probs := metadata.ParseProfile(path.Base(name), b, metadata.Limits{})
	if !metadata.HasErrors(probs) {
		return nil
	}
	var msgs []string
	for _, p := range probs {
		if !p.Warning {
			msgs = append(msgs, p.String())
		}
	}
	return errors.New(strings.Join(msgs, "; "))
}

// settingsKindOf returns the kind of a file name, or an error saying
// which names there are.
func settingsKindOf(name string) (settingsKind, error) {
	if name == links.SharedKeyName {
		return settingsKind{}, errors.New("links.key is the server's own (made at its first start, or copied by import): it is not shown, set or removed")
	}
	if err := datafiles.CheckName(name); err != nil {
		return settingsKind{}, err
	}
	for _, k := range settingsKinds {
		if k.pattern.MatchString(name) {
			return k, nil
		}
	}
	return settingsKind{}, fmt.Errorf("%q: not a file the server reads (accounts/<ACCOUNT>.json, prices.json, prices/<ACCOUNT>.json, profiles/<ACCOUNT>/<name>.json or .xml)", name)
}

// openSettingsFiles opens the files: the database's when url is set, else
// the data directory's. done closes what was opened.
func openSettingsFiles(ctx context.Context, url, dataDir string) (f datafiles.Files, done func(), err error) {
	if url == "" {
		return datafiles.Dir(dataDir), func() {}, nil
	}
	db, err := pgdb.Open(ctx, pgdb.Config{URL: url})
	if err != nil {
		return nil, nil, fmt.Errorf("-db: %w", err)
	}
	p, err := datafiles.NewPostgres(db, datafiles.Options{CacheFor: -1})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return p, db.Close, nil
}

func runSettings(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, settingsUsage)
		return errors.New("settings: a subcommand is needed")
	}
	sub := args[0]
	fset := flag.NewFlagSet("settings "+sub, flag.ContinueOnError)
	fset.SetOutput(stderr)
	url := fset.String("db", "", "the PostgreSQL database nodes share (as lodge serve -db); without it, the data directory's files")
	dataDir := fset.String("data-dir", "lodge-data", "the data directory")
	replace := fset.Bool("replace", false, "import: replace a file the database has with other bytes")
	fset.Usage = func() {
		fmt.Fprint(fset.Output(), settingsUsage+"\nflags:\n")
		fset.PrintDefaults()
	}
	// flags may follow the arguments: "put NAME FILE -db URL"
	var pos []string
	rest := args[1:]
	for {
		if err := fset.Parse(rest); err != nil {
			return err
		}
		rest = fset.Args()
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		rest = rest[1:]
	}
	want := map[string][2]int{"list": {0, 1}, "get": {1, 1}, "put": {2, 2}, "rm": {1, 1}, "import": {0, 0}}
	n, ok := want[sub]
	if !ok {
		fmt.Fprint(stderr, settingsUsage)
		return fmt.Errorf("settings: unknown subcommand %q", sub)
	}
	if len(pos) < n[0] || len(pos) > n[1] {
		fset.Usage()
		return fmt.Errorf("settings %s: %d argument(s)", sub, len(pos))
	}
	if sub == "import" && *url == "" {
		fset.Usage()
		return errors.New("settings import: -db is required")
	}
	// check what is to be stored before connecting
	var kind settingsKind
	var body []byte
	if sub == "get" || sub == "put" || sub == "rm" {
		var err error
		if kind, err = settingsKindOf(pos[0]); err != nil {
			return fmt.Errorf("settings %s: %w", sub, err)
		}
	}
	if sub == "put" {
		var err error
		if body, err = readSettingsInput(pos[1], stdin); err != nil {
			return fmt.Errorf("settings put: %w", err)
		}
		if err := kind.check(pos[0], body); err != nil {
			return fmt.Errorf("settings put: %s, as the server would read it: %w; nothing stored", pos[1], err)
		}
	}
	files, done, err := openSettingsFiles(ctx, *url, *dataDir)
	if err != nil {
		return err
	}
	defer done()
	switch sub {
	case "list":
		dir := ""
		if len(pos) == 1 {
			dir = strings.Trim(pos[0], "/")
		}
		infos, err := files.List(dir)
		if err != nil {
			return fmt.Errorf("settings list: %w", err)
		}
		for _, i := range infos {
			if _, err := settingsKindOf(i.Name); err == nil || i.Name == links.SharedKeyName {
				fmt.Fprintf(stdout, "%s\t%d bytes\t%s\n", i.Name, i.Size, i.ModTime.UTC().Format("2006-01-02 15:04:05Z"))
			}
		}
		return nil
	case "get":
		b, err := files.Read(pos[0], datafiles.MaxSize)
		if err != nil {
			return fmt.Errorf("settings get: %w", err)
		}
		_, err = stdout.Write(b)
		return err
	case "put":
		if err := files.Write(pos[0], body, kind.perm); err != nil {
			return fmt.Errorf("settings put: %w", err)
		}
		fmt.Fprintf(stdout, "%s: stored (%d bytes) in %s\n", pos[0], len(body), files.Where(pos[0]))
		return nil
	case "rm":
		if err := files.Remove(pos[0]); err != nil {
			return fmt.Errorf("settings rm: %w", err)
		}
		fmt.Fprintf(stdout, "%s: removed\n", pos[0])
		return nil
	}
	return importSettings(datafiles.Dir(*dataDir), files, *replace, stdout)
}

// readSettingsInput reads a file to put ("-": stdin), at most
// datafiles.MaxSize bytes.
func readSettingsInput(name string, stdin io.Reader) ([]byte, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, datafiles.MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > datafiles.MaxSize {
		return nil, fmt.Errorf("%s: more than %d bytes", name, datafiles.MaxSize)
	}
	return b, nil
}

// importSettings copies the files of a data directory that the server
// reads into the database, each checked; it fails, after trying every
// file, when one could not be copied.
func importSettings(from datafiles.Dir, to datafiles.Files, replace bool, stdout io.Writer) error {
	var failed int
	for _, dir := range []string{"accounts", "prices", "profiles"} {
		infos, err := from.List(dir)
		if err != nil {
			return fmt.Errorf("settings import: %w", err)
		}
		for _, i := range infos {
			if !importOne(from, to, i.Name, replace, stdout) {
				failed++
			}
		}
	}
	if _, err := from.Read("prices.json", datafiles.MaxSize); !errors.Is(err, fs.ErrNotExist) {
		if !importOne(from, to, "prices.json", replace, stdout) {
			failed++
		}
	}
	if !importKey(from, to, stdout) {
		failed++
	}
	if failed > 0 {
		return fmt.Errorf("settings import: %d file(s) not imported", failed)
	}
	return nil
}

func importOne(from datafiles.Dir, to datafiles.Files, name string, replace bool, stdout io.Writer) bool {
	kind, err := settingsKindOf(name)
	if err != nil {
		fmt.Fprintf(stdout, "%s: skipped: not a file the server reads\n", name)
		return true
	}
	b, err := from.Read(name, datafiles.MaxSize)
	if err == nil {
		err = kind.check(name, b)
	}
	if err != nil {
		fmt.Fprintf(stdout, "%s: not imported: %v\n", name, err)
		return false
	}
	var status string
	err = to.Update(name, datafiles.MaxSize, kind.perm, func(old []byte, exists bool) ([]byte, error) {
		switch {
		case !exists:
			status = "imported"
		case bytes.Equal(old, b):
			status = "the same in the database"
		case replace:
			status = "replaced the database's"
		default:
			status = "kept the database's, which differs (-replace to replace it)"
			return old, nil
		}
		return b, nil
	})
	if err != nil {
		fmt.Fprintf(stdout, "%s: not imported: %v\n", name, err)
		return false
	}
	fmt.Fprintf(stdout, "%s: %s\n", name, status)
	return true
}

// importKey copies the node's links key into the database, unless the
// database has one (replacing it would stop the links the other nodes
// gave).
func importKey(from datafiles.Dir, to datafiles.Files, stdout io.Writer) bool {
	name := links.SharedKeyName
	if _, err := from.Read(name, datafiles.MaxSize); errors.Is(err, fs.ErrNotExist) {
		return true
	}
	key, err := links.LoadOrCreateKey(from.Where(name)) // its checks: size and mode
	if err != nil {
		fmt.Fprintf(stdout, "%s: not imported: %v\n", name, err)
		return false
	}
	got, err := to.Create(name, key, 0o600)
	switch {
	case err != nil:
		fmt.Fprintf(stdout, "%s: not imported: %v\n", name, err)
		return false
	case bytes.Equal(got, key):
		fmt.Fprintf(stdout, "%s: imported (or the same in the database)\n", name)
	default:
		fmt.Fprintf(stdout, "%s: kept the database's, which differs: the links this node gave stop working\n", name)
	}
	return true
}
