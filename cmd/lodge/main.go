// Command lodge is the lodge service and its tools in one binary: it builds
// the reference index (import), cleanses address files (check) and serves
// the address check and mail upload interfaces (serve). This file holds
// flags and wiring only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/lodge-mail/lodge/bulk"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/index"
	"github.com/lodge-mail/lodge/progress"
	"github.com/lodge-mail/lodge/upload/inspect"
)

const usage = `lodge: Australian address check and mail upload service

usage:
  lodge serve [flags]           serve addr_check (JSON-RPC over HTTPS) on the default reference data
  lodge import [flags]          build the reference index from reference data
  lodge check [flags] [FILE]    check every address in a CSV or JSON lines file (or stdin)
  lodge account add|list        customer accounts
  lodge user add|passwd|disable portal users (Basic authentication)
  lodge key create|list|revoke  API keys (Bearer authentication)
  lodge version                 print the version

Run "lodge COMMAND -h" for a command's flags.
`

var version = "dev"

func main() {
	// A document inspector child process (see upload/inspect) runs here
	// and exits; nothing else happens in it.
	inspect.RunChildIfRequested()
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	var err error
	switch os.Args[1] {
	case "import":
		err = runImport(ctx, os.Args[2:])
	case "check":
		err = runCheck(ctx, os.Args[2:], os.Stdin, os.Stdout)
	case "serve":
		err = runServe(ctx, os.Args[2:])
	case "account":
		err = runAccount(os.Args[2:])
	case "user":
		err = runUser(os.Args[2:])
	case "key":
		err = runKey(os.Args[2:])
	case "version":
		fmt.Println("lodge", version, runtime.Version())
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "lodge: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "lodge:", err)
		os.Exit(1)
	}
}

// referenceFlags are the flags every command that needs an index shares.
type referenceFlags struct {
	dataDir     string
	reference   string
	geonamesURL string
	quiet       bool
}

func (r *referenceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.dataDir, "data-dir", "lodge-data", "directory holding the index and other state")
	fs.StringVar(&r.reference, "reference", "", "folder of reference data (default: ./reference, then ../shared/data, then a GeoNames download)")
	fs.StringVar(&r.geonamesURL, "geonames-url", index.DefaultGeoNamesURL, "base URL of the GeoNames postal code export (AU.zip, NZ.zip)")
	fs.BoolVar(&r.quiet, "quiet", false, "no progress output")
}

func (r *referenceFlags) resolve() index.ResolveOptions {
	return index.ResolveOptions{Reference: r.reference, DownloadDir: r.dataDir + "/reference", GeoNamesURL: r.geonamesURL, Log: slog.Default()}
}

// open opens the index, building it on first use, and says where its data
// came from and what the licences ask us to show.
func (r *referenceFlags) open(ctx context.Context, out io.Writer) (*index.Index, error) {
	ix, from, err := index.Ensure(ctx, r.dataDir, r.resolve(), index.BuildOptions{Log: slog.Default(), Progress: progress.Options{Quiet: r.quiet}})
	if err != nil {
		return nil, err
	}
	f := ix.Ref.Facts()
	fmt.Fprintf(out, "reference: %s (%d localities, %d postcodes, %d countries) loaded in %s\n", from, f.Localities, f.Postcodes, f.Countries, ix.LoadTime.Round(1e6))
	printAttributions(out, ix.Meta)
	return ix, nil
}

func printAttributions(out io.Writer, m index.Meta) {
	for _, a := range m.Attributions() {
		fmt.Fprintln(out, "  "+a)
	}
}

func runImport(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	var rf referenceFlags
	rf.register(fs)
	force := fs.Bool("force", false, "rebuild even when the index is up to date")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("import: unexpected arguments %q", fs.Args())
	}
	src, from, err := index.ResolveSources(ctx, rf.resolve())
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "importing from %s\n", from)
	res, err := index.Build(ctx, src, rf.dataDir, index.BuildOptions{Force: *force, Log: slog.Default(), Progress: progress.Options{Quiet: rf.quiet}})
	if err != nil {
		return err
	}
	if res.UpToDate {
		fmt.Fprintf(os.Stderr, "index %s is up to date with these sources (use -force to rebuild)\n", res.Dir)
	} else {
		c := res.Meta.Counts
		fmt.Fprintf(os.Stderr, "index %s: %d localities, %d postcodes, %d countries, %d New Zealand postcodes, built in %dms\n",
			res.Dir, c.Localities, c.Postcodes, c.Countries, c.NZPostcodes, res.Meta.BuildMS)
	}
	for _, s := range res.Meta.Sources {
		fmt.Fprintf(os.Stderr, "  %-16s %6d rows  %s  (%s)\n", s.Name, s.Rows, s.Path, s.Licence)
	}
	printAttributions(os.Stderr, res.Meta)
	return nil
}

func runCheck(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	var rf referenceFlags
	rf.register(fs)
	columns := fs.String("columns", "", "comma-separated column names or 1-based indexes forming the address (default: every column; JSON lines: the \"address\" field)")
	format := fs.String("format", "", "input format: csv or jsonl (default: detect)")
	noHeader := fs.Bool("no-header", false, "the CSV input has no header row")
	detail := fs.Bool("detail", false, "add detail columns (parsed components, granularity, suggestion, faults)")
	workers := fs.Int("workers", 0, "parallel workers (default: every core)")
	output := fs.String("o", "-", "output file (default: stdout)")
	cacheEntries := fs.Int64("cache", 0, "verdict cache entries (0: default 500,000; -1: off)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return fmt.Errorf("check: one input file at most, got %q", fs.Args())
	}
	in := stdin
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	ix, err := rf.open(ctx, os.Stderr)
	if err != nil {
		return err
	}
	defer ix.Close()
	eng, err := engine.New(ix.Ref, engine.Config{CacheEntries: *cacheEntries})
	if err != nil {
		return err
	}
	defer eng.Close()
	out := stdout
	if *output != "-" {
		f, err := os.Create(*output)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	cfg := bulk.Config{Format: *format, NoHeader: *noHeader, Detail: *detail, Workers: *workers,
		Progress: progress.Options{Quiet: rf.quiet}}
	if *columns != "" {
		for _, c := range strings.Split(*columns, ",") {
			cfg.Columns = append(cfg.Columns, strings.TrimSpace(c))
		}
	}
	sum, err := bulk.Run(ctx, eng, in, out, cfg)
	if err != nil {
		return err
	}
	if f, ok := out.(*os.File); ok && f != os.Stdout {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	fmt.Fprintln(os.Stderr, sum.String())
	return nil
}
