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
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/lodge-mail/lodge/bulk"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/extraction"
	"github.com/lodge-mail/lodge/index"
	"github.com/lodge-mail/lodge/indexsync"
	"github.com/lodge-mail/lodge/progress"
	"github.com/lodge-mail/lodge/upload/inspect"
)

const usage = `lodge: Australian address check and mail upload service

usage:
  lodge serve [flags]           serve addr_check (JSON-RPC over HTTPS) on the default reference data
  lodge import [KIND] [flags]   build the reference index (KIND gnaf, openaddresses, csv: add street data)
  lodge check [flags] [FILE]    check every address in a CSV or JSON lines file (or stdin)
  lodge account add|list        customer accounts
  lodge user add|passwd|disable portal users (Basic authentication)
  lodge key create|list|revoke  API keys (Bearer authentication)
  lodge print list|show|done|lodged   print batches; mark one printed, then lodged
  lodge invoice [flags]         an account's invoices for a period, one per purchase order
  lodge db status|migrate       the PostgreSQL database several nodes share (serve -db)
  lodge settings list|get|put|rm|import   account settings, prices and profiles (the data directory's, or -db)
  lodge version                 print the version

Run "lodge COMMAND -h" for a command's flags.
`

var version = "dev"

func main() {
	// A document inspector child process (see upload/inspect) runs here
	// and exits; nothing else happens in it.
	inspect.RunChildIfRequested()
	// So does the auto processor's text reader (see extraction).
	extraction.RunChildIfRequested()
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
	case "print":
		err = runPrint(os.Args[2:], os.Stdout, os.Stderr)
	case "invoice":
		err = runInvoice(os.Args[2:], os.Stdout, os.Stderr)
	case "db":
		err = runDB(ctx, os.Args[2:], os.Stdout, os.Stderr)
	case "settings":
		err = runSettings(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
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
	if f.Streets > 0 {
		fmt.Fprintf(out, "street level: %d streets in %d places, %d address points\n", f.Streets, f.StreetGroups, f.Points)
	}
	printAttributions(out, ix.Meta)
	return ix, nil
}

func printAttributions(out io.Writer, m index.Meta) {
	for _, a := range m.Attributions() {
		fmt.Fprintln(out, "  "+a)
	}
}

const importUsage = `usage:
  lodge import [flags]                       rebuild the index: reference data plus remembered street sources
  lodge import gnaf [flags] PATH             add a G-NAF release (its ZIP or unzipped folder): street and premise level
  lodge import openaddresses [flags] PATH    add an OpenAddresses-style CSV of address points
  lodge import csv [flags] PATH              add a CSV of address points with named columns (-columns)
  lodge import forget PATH|all               stop using a street source and rebuild
`

func runImport(ctx context.Context, args []string) error {
	kind := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		kind, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("import "+kind, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), importUsage, "\nflags:\n"); fs.PrintDefaults() }
	var rf referenceFlags
	rf.register(fs)
	force := fs.Bool("force", false, "rebuild even when the index is up to date")
	publish := fs.String("publish", "", "then publish the index to this object store (as lodge serve -blob: s3://bucket?endpoint=host:port; keys in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), where every node of several takes it into use without a restart")
	state := fs.String("state", "", "openaddresses, csv: the state of rows that name none (QLD for Brisbane's list)")
	columns := fs.String("columns", "", "csv: field=header pairs, comma-separated (fields: number, street, street_type, unit, building, locality, state, postcode, lat, lon, id); unnamed fields are found by their usual headers")
	complete := fs.Bool("complete", false, "openaddresses, csv: the list holds every street and address of its places (a street or number it lacks there is then unmatched)")
	licence := fs.String("licence", "", "openaddresses, csv: the list's licence, recorded and shown by serve")
	attribution := fs.String("attribution", "", "openaddresses, csv: the attribution the list's licence requires")
	if err := fs.Parse(args); err != nil {
		return err
	}
	saved, err := index.LoadStreetSources(rf.dataDir)
	if err != nil {
		return err
	}
	switch kind {
	case "":
		if fs.NArg() > 0 {
			return fmt.Errorf("import: unexpected arguments %q\n%s", fs.Args(), importUsage)
		}
	case index.StreetsGNAF, index.StreetsOpenAddresses, index.StreetsCSV:
		if fs.NArg() != 1 {
			return fmt.Errorf("import %s: want one PATH\n%s", kind, importUsage)
		}
		p, err := filepath.Abs(fs.Arg(0))
		if err != nil {
			return err
		}
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("import %s: %w", kind, err)
		}
		ss := index.StreetSource{Kind: kind, Path: p, State: strings.ToUpper(*state), Complete: *complete || kind == index.StreetsGNAF,
			Licence: *licence, Attribution: *attribution}
		if *columns != "" {
			ss.Columns = map[string]string{}
			for _, kv := range strings.Split(*columns, ",") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" {
					return fmt.Errorf("import %s: -columns: want field=header, got %q", kind, kv)
				}
				ss.Columns[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
			}
		}
		if err := index.CheckStreetSource(ss); err != nil {
			return err
		}
		saved = index.AddStreetSource(saved, ss)
	case "forget":
		if fs.NArg() != 1 {
			return fmt.Errorf("import forget: want one PATH or all")
		}
		var keep []index.StreetSource
		if fs.Arg(0) != "all" {
			p, _ := filepath.Abs(fs.Arg(0))
			for _, s := range saved {
				if s.Path != p {
					keep = append(keep, s)
				}
			}
			if len(keep) == len(saved) {
				return fmt.Errorf("import forget: %s is not a street source of %s", p, rf.dataDir)
			}
		}
		saved = keep
	default:
		return fmt.Errorf("import: unknown source kind %q\n%s", kind, importUsage)
	}
	src, from, err := index.ResolveSources(ctx, rf.resolve())
	if err != nil {
		return err
	}
	src.Streets = saved
	fmt.Fprintf(os.Stderr, "importing from %s\n", from)
	for _, s := range saved {
		fmt.Fprintf(os.Stderr, "  and street source %s %s\n", s.Kind, s.Path)
	}
	res, err := index.Build(ctx, src, rf.dataDir, index.BuildOptions{Force: *force, Log: slog.Default(), Progress: progress.Options{Quiet: rf.quiet}})
	if err != nil {
		return err
	}
	// Remembered only once an index with them is current: a failed import
	// changes nothing.
	if kind != "" {
		if err := index.SaveStreetSources(rf.dataDir, saved); err != nil {
			return err
		}
	}
	if res.UpToDate {
		fmt.Fprintf(os.Stderr, "index %s is up to date with these sources (use -force to rebuild)\n", res.Dir)
	} else {
		c := res.Meta.Counts
		fmt.Fprintf(os.Stderr, "index %s: %d localities, %d postcodes, %d countries, %d New Zealand postcodes, built in %dms\n",
			res.Dir, c.Localities, c.Postcodes, c.Countries, c.NZPostcodes, res.Meta.BuildMS)
		if c.Streets > 0 {
			fmt.Fprintf(os.Stderr, "  street level: %d streets in %d places, %d address points\n", c.Streets, c.StreetGroups, c.AddressPoints)
		}
	}
	for _, s := range res.Meta.Sources {
		fmt.Fprintf(os.Stderr, "  %-23s %6d rows  %s  (%s)\n", s.Name, s.Rows, s.Path, s.Licence)
	}
	printAttributions(os.Stderr, res.Meta)
	if *publish != "" {
		store, err := openBlobs(ctx, *publish, rf.dataDir, nil)
		if err != nil {
			return fmt.Errorf("-publish: %w", err)
		}
		m, err := indexsync.Publish(ctx, store, res.Dir, indexsync.PublishOptions{Log: slog.Default()})
		if err != nil {
			return fmt.Errorf("-publish: %w", err)
		}
		fmt.Fprintf(os.Stderr, "published index %s (%d bytes, SHA-1 %s): nodes following the store take it within their -index-poll\n", m.Stamp, m.Size, m.SHA1)
	}
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
		if err := syncRegular(f); err != nil {
			return err
		}
	}
	fmt.Fprintln(os.Stderr, sum.String())
	return nil
}

// syncRegular makes an output file durable. Only a regular file can be: a
// device, pipe or socket (-o /dev/null, a FIFO) holds nothing to sync,
// and fsync on one fails (EINVAL).
func syncRegular(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	return f.Sync()
}
