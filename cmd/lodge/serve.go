package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	_ "net/http/pprof" // served only with -debug-addr
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/delivery"
	"github.com/lodge-mail/lodge/delivery/email"
	"github.com/lodge-mail/lodge/delivery/links"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/extraction"
	"github.com/lodge-mail/lodge/internal/adminsock"
	"github.com/lodge-mail/lodge/internal/smpp"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/portal"
	"github.com/lodge-mail/lodge/printroom"
	"github.com/lodge-mail/lodge/production"
	"github.com/lodge-mail/lodge/rpc"
	"github.com/lodge-mail/lodge/server"
	"github.com/lodge-mail/lodge/upload"
)

func runServe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var rf referenceFlags
	rf.register(fs)
	addr := fs.String("addr", ":8443", "HTTPS listen address")
	plain := fs.String("plain-addr", "", "plain HTTP listen address for the upload endpoints (addr_check refuses there); empty for none")
	cert := fs.String("tls-cert", "", "TLS certificate (PEM); default a self-signed one made in the data directory")
	key := fs.String("tls-key", "", "TLS key (PEM)")
	proxies := fs.String("trusted-proxy", "", "comma-separated CIDRs of proxies that terminate TLS and send X-Forwarded-Proto: https to the plain listener")
	demo := fs.Bool("demo", false, "create a demo account and API key and print a curl command that uses them")
	maxBody := fs.Int("max-body-bytes", 32<<20, "largest request body accepted (HTTP 413 above)")
	maxAddrs := fs.Int("max-addresses", 10_000, "most addresses in one addr_check call (JSON-RPC -32602 above)")
	maxReqAddrs := fs.Int("max-request-addresses", 0, "most addresses in one HTTP request, the calls of a batch together (JSON-RPC -32602 for the call that passes it; 0: 10,000 or -max-addresses if larger)")
	largeBytes := fs.Int("large-rpc-bytes", 0, "body bytes of large JSON-RPC requests (over 64 KiB) held at once, in all (HTTP 503 past it; 0: 4 times -max-body-bytes)")
	largeBytesAccount := fs.Int("large-rpc-bytes-per-account", 0, "the same for one account (HTTP 429 past it; 0: -max-body-bytes)")
	largeWorkers := fs.Int("large-rpc-workers", 0, "large JSON-RPC requests worked on at once; the others wait their turn up to 5 s (0: the number of CPUs less one, at least one)")
	maxConns := fs.Int("max-conns", 0, "most open connections, both listeners together; more are closed at once (0: 3/4 of the open file limit less 256)")
	cacheEntries := fs.Int64("cache", 0, "verdict cache entries (0: default 500,000; -1: off)")
	drain := fs.Duration("drain-delay", 0, "how long readiness reports 503 before the listeners close on shutdown")
	maxUpload := fs.Int64("max-upload-bytes", 1<<30, "largest file accepted by PUT /direct_upload (HTTP 413 above)")
	sessionTTL := fs.Duration("session-ttl", 24*time.Hour, "how long an upload session stays open; its files are deleted when it expires")
	retention := fs.Duration("upload-retention", upload.DefaultRetention, "how long the uploaded documents of an ended mailing are kept once its letters are produced (the preview period); then they are deleted (its records stay)")
	cancelWindow := fs.Duration("cancel-window", time.Hour, "how long after end_session letters can be cancelled: production waits for it (an account's own: <data-dir>/accounts/<ACCOUNT>.json)")
	outbox := fs.String("print-outbox", "", "the print room's hot folder, where finished batches appear (default <data-dir>/print/outbox)")
	printerURI := fs.String("printer", "", "also send each print batch to this IPP printer, for example ipp://printhost:631/printers/NAME (empty: the hot folder only)")
	minFree := fs.Int64("min-free-bytes", 1<<30, "disk space an upload must leave free in the data directory (HTTP 503 with Retry-After when it would not)")
	debugAddr := fs.String("debug-addr", "", "serve Go's pprof profiles on this address (for example 127.0.0.1:6060); empty for none")
	shutdownTimeout := fs.Duration("shutdown-timeout", 30*time.Second, "how long in-flight requests may take to finish on shutdown")
	smtpURL := fs.String("smtp", "", "send email (and fax) through this SMTP server: smtp://user:pass@host:587 (STARTTLS) or smtps://user:pass@host:465; empty: no email")
	smtpPool := fs.Int("smtp-pool", 0, "SMTP connections kept open (0: 4)")
	emailFrom := fs.String("email-from", "", "the From of emails whose mailing has no email_from, and of confirmation emails")
	dkimDomain := fs.String("dkim-domain", "", "sign emails with DKIM for this domain (with -dkim-selector and -dkim-key)")
	dkimSelector := fs.String("dkim-selector", "", "the DKIM selector")
	dkimKey := fs.String("dkim-key", "", "the DKIM private key (PEM)")
	smppURL := fs.String("smpp", "", "send SMS through this SMPP 3.4 server: smpp://system_id:password@host:2775; empty: no SMS")
	smsFrom := fs.String("sms-from", "", "the sender of SMS whose mailing has no sms_from (empty: the SMSC's default)")
	faxDomain := fs.String("fax-gateway-domain", "", "send faxes as email to <number>@this domain (an email-to-fax gateway; needs -smtp)")
	bounceAddr := fs.String("bounce-addr", "", "take bounces (delivery status notifications) by SMTP on this address, e.g. :2525; needs -bounce-domain")
	bounceDomain := fs.String("bounce-domain", "", "the domain of the VERP return paths (bounce+<letter>@domain) whose mail -bounce-addr takes")
	var cf clusterFlags
	fs.StringVar(&cf.db, "db", "", "share state with other nodes in this PostgreSQL database: postgres://user@host/db or host=/run/postgresql dbname=lodge (password: PGPASSWORD or ~/.pgpass); empty: this node's own stores")
	fs.StringVar(&cf.blob, "blob", "", "with -db, keep documents and produced files in S3-compatible storage: s3://bucket[/prefix]?endpoint=host:port[&region=R][&secure=false] (keys: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY); empty: this node's disk")
	fs.StringVar(&cf.node, "node", "", "with -db, this node's name in the database's leases and heartbeats (default host:pid; give each node its own)")
	indexPoll := fs.Duration("index-poll", 30*time.Second, "with -db, how often to look for an index published by lodge import -publish (taken into use without a restart)")
	publicURL := fs.String("public-url", "", "the HTTPS address lodge is reached at from outside, e.g. https://mail.example.com.au: links to letters' PDFs and email tracking start with it (empty: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var trusted []netip.Prefix
	for _, c := range strings.Split(*proxies, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return fmt.Errorf("--trusted-proxy %q: %w", c, err)
		}
		trusted = append(trusted, p.Masked())
	}
	log := slog.Default()
	if *debugAddr != "" {
		go func() {
			log.Info("pprof", "addr", *debugAddr)
			if err := http.ListenAndServe(*debugAddr, nil); err != nil {
				log.Error("pprof", "err", err)
			}
		}()
	}

	// The shared database and object store, when there are: opened first
	// and closed last, since the stores below live on them.
	shared, err := openCluster(ctx, cf, rf.dataDir, log)
	if err != nil {
		return err
	}
	defer shared.close()

	// Opened in this order, closed in reverse: index, engine, accounts.
	ix, err := rf.open(ctx, os.Stderr)
	if err != nil {
		return err
	}
	defer ix.Close()
	// A node of several follows the index published to the object store
	// (lodge import -publish) without a restart; a single node keeps the
	// fixed engine, whose checks cost less (no generation to count).
	eng, follower, err := shared.engine(ix, rf.dataDir, engine.Config{CacheEntries: *cacheEntries}, *indexPoll, log)
	if err != nil {
		return err
	}
	defer func() {
		if follower != nil {
			follower.Close()
		} else {
			eng.Close()
		}
	}()
	store, err := shared.authStore(ctx, rf.dataDir)
	if err != nil {
		return err
	}
	defer store.Close()
	// One Authenticator for JSON-RPC and uploads: one failed-login budget.
	// JSON-RPC takes Bearer and Basic; Digest only reaches the uploads.
	authn := auth.NewAuthenticator(store, auth.Config{Digest: true})

	// The mailroom: its records and queue, and print production. Opened
	// before the upload store (which asks it whether documents are still
	// needed) and closed after it.
	uploadMetrics, mailroomMetrics := metrics.NewSet(), metrics.NewSet()
	prices := shared.prices(rf.dataDir)
	mailroomStore, err := shared.mailroomStore(rf.dataDir, log, mailroomMetrics)
	if err != nil {
		return err
	}
	defer mailroomStore.Close()
	producer, err := production.New(production.Config{DataDir: rf.dataDir, HotFolder: *outbox, Blobs: shared.blobs, Prices: prices}, log)
	if err != nil {
		return err
	}
	var printer pipeline.Printer // stays nil without -printer (a nil *production.Printer in it would not be)
	if *printerURI != "" {
		p, err := production.NewPrinter(production.PrinterConfig{URI: *printerURI, Batches: producer.Batches()}, log)
		if err != nil {
			return fmt.Errorf("-printer: %w", err)
		}
		printer = p
		log.Info("print batches are also sent to a printer", "printer", *printerURI)
	}

	// the upload and mailroom counters are served on /metrics with the
	// server's (below)
	uploads, err := shared.uploadStore(rf.dataDir, upload.Options{MaxFileBytes: *maxUpload, SessionTTL: *sessionTTL,
		MinFreeBytes: *minFree, Retention: *retention, Metrics: uploadMetrics,
		Keep: func(epid string) bool {
			m, err := mailroomStore.Mailing(epid)
			return err == nil && !m.Purged
		}})
	if err != nil {
		return err
	}
	defer uploads.Close()
	accounts := shared.accountSettings(rf.dataDir)
	window := *cancelWindow
	if window == 0 {
		window = -1 // none (the Config's zero is its default)
	}
	// electronic delivery: email, fax, SMS, confirmations
	var dcfg delivery.Config
	dcfg.FaxDomain, dcfg.From, dcfg.SMSFrom, dcfg.BounceDomain, dcfg.LinkBase = *faxDomain, *emailFrom, *smsFrom, *bounceDomain, *publicURL
	dcfg.PDF, dcfg.DocumentError = producer.LetterPDF, production.DocumentError
	if h, _ := os.Hostname(); strings.Contains(h, ".") {
		dcfg.Host = h
	}
	if *smtpURL != "" {
		mailer, err := email.New(email.Config{URL: *smtpURL, Pool: *smtpPool, Metrics: mailroomMetrics, Log: log,
			DKIM: email.DKIM{Domain: *dkimDomain, Selector: *dkimSelector, KeyPath: *dkimKey}})
		if err != nil {
			return fmt.Errorf("-smtp: %w", err)
		}
		defer mailer.Close()
		dcfg.Mailer = mailer
	}
	var sms *delivery.SMSC
	if *smppURL != "" {
		scfg, err := smpp.ParseURL(*smppURL)
		if err != nil {
			return fmt.Errorf("-smpp: %w", err)
		}
		scfg.Log, scfg.Metrics = log, mailroomMetrics
		sms = delivery.DialSMSC(ctx, scfg, log) // binds in the background: a down SMSC does not stop the server
		defer sms.Close()
		dcfg.SMS = sms
	}
	linkKey, err := shared.linkKey(rf.dataDir)
	if err != nil {
		return err
	}
	dcfg.LinkKey = linkKey
	var confirmer pipeline.Confirmer // stays nil without a mailer
	if c := delivery.Confirmer(dcfg); c != nil {
		confirmer = c
	}
	mailroom := pipeline.New(mailroomStore, producer, pipeline.Config{
		CancelWindow: window,
		Window:       accounts.CancelWindow,
		Retention:    *retention,
		Purge: func(epid string) error { // the documents, and the PDFs made of its letters for email and links
			if err := uploads.PurgeMailing(epid); err != nil {
				return err
			}
			return producer.RemoveLetterPDFs(epid)
		},
		CheckAddress: func(lines []string) pipeline.Verdict {
			r := eng.Check(lines, false)
			return pipeline.Verdict{Status: r.Status.String(), Nation: r.Nation, Message: r.Message}
		},
		SuggestAddress: func(lines []string) (pipeline.Verdict, []string) {
			r := eng.Check(lines, true)
			v := pipeline.Verdict{Status: r.Status.String(), Nation: r.Nation, Message: r.Message}
			if r.Detail == nil || r.Status == engine.StatusMatched {
				return v, nil
			}
			return v, r.Detail.Suggestion
		},
		Printer: printer,
		// the auto processor: letters read out of documents uploaded
		// without metadata letters
		Extractor: extraction.New(extraction.Config{PDF: producer.PDF, DocumentError: production.DocumentError, Metrics: mailroomMetrics, Blobs: shared.blobs}, log),
		Senders:   delivery.Senders(dcfg),
		Confirmer: confirmer,
		Metrics:   mailroomMetrics,
	}, log)
	// The account, user, key, print and invoice commands reach the stores
	// through this socket while we hold them; it stops before they close.
	adminSrv := adminsock.NewServer(adminsock.Config{})
	adminSrv.HandleOps(auth.AdminOps(store))
	adminSrv.HandleOps(printroom.AdminOps(mailroom))
	adminSock := adminsock.Path(rf.dataDir)
	stopAdmin, err := adminSrv.Serve(ctx, adminSock)
	if err != nil {
		return err
	}
	defer stopAdmin()
	log.Info("admin socket", "path", adminSock)
	// the documents library: documents uploaded in the portal that
	// metadata names (end_session copies them into the mailing)
	docLib, err := shared.library(rf.dataDir)
	if err != nil {
		return err
	}
	lodger := upload.NewLodger(uploads, eng, mailroom, upload.LodgerConfig{ProfileDir: filepath.Join(rf.dataDir, "profiles"), Profiles: shared.profiles(), Senders: accounts.Senders, Library: docLib}, log)
	uploadHandler := upload.NewHandler(uploads, lodger, upload.Config{}, log)
	// the janitor and the mailroom's workers stop before the stores close
	workers, stopWorkers := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(4)
	go func() { defer wg.Done(); upload.RunJanitor(workers, uploads, time.Minute, log) }()
	go func() { defer wg.Done(); shared.heartbeat(workers) }()
	go func() { defer wg.Done(); shared.sweepLibrary(workers, docLib, log) }()
	go func() { defer wg.Done(); mailroom.Run(workers) }()
	defer func() { stopWorkers(); wg.Wait() }()
	if sms != nil {
		// delivery receipts: Delivered, or a failover to post
		go func() {
			if c, ok := sms.Client(); ok {
				delivery.TakeReceipts(workers, c.Receipts(), mailroom, log)
			}
		}()
	}
	if *bounceAddr != "" {
		stopBounces, err := delivery.ServeBounces(*bounceAddr, *bounceDomain, mailroom, mailroomMetrics, log)
		if err != nil {
			return fmt.Errorf("-bounce-addr: %w", err)
		}
		defer stopBounces()
	}
	linkHandler, err := links.New(links.Config{Key: linkKey, Store: delivery.LinkStore{Mailroom: mailroom, PDF: producer.LetterPDF, Existing: producer.ExistingLetterPDF, DocumentError: production.DocumentError}, Log: log, Metrics: mailroomMetrics})
	if err != nil {
		return err
	}
	methods := mailroom.Methods()
	methods["recent_uploads"] = rpc.Documented{Handle: lodger.RecentUploads, Doc: upload.RecentUploadsDoc}

	// the signed links, and the customer portal (its own sign-in, the
	// API's failed-login throttle)
	public := portal.Mux{delivery.PublicLinks{Handler: linkHandler},
		portal.New(portal.Config{Mailroom: mailroom, Auth: authn, TrustedProxies: trusted, Log: log,
			Prices:  prices, // the usage page's currency, as lodge invoice's
			Preview: producer.PreviewPDF, PreviewBusy: production.ErrPreviewBusy, DocumentError: production.DocumentError,
			Uploads: uploadHandler, Library: docLib, Sessions: shared.portalSessions(), Batches: producer.Batches()})}
	srv, err := server.New(server.Config{
		Upload:  uploadHandler,
		Public:  public,
		Methods: methods,
		Addr:    *addr, PlainAddr: *plain, TLSCert: *cert, TLSKey: *key, DataDir: rf.dataDir,
		TrustedProxies: trusted, MaxBodyBytes: *maxBody, MaxConns: *maxConns,
		LargeRPCBytes: *largeBytes, LargeRPCBytesPerAccount: *largeBytesAccount, LargeRPCWorkers: *largeWorkers, DrainDelay: *drain, ShutdownTimeout: *shutdownTimeout,
		RPC:         rpc.Config{MaxAddresses: *maxAddrs, MaxRequestAddresses: *maxReqAddrs},
		ReadyChecks: shared.readyChecks(),
	}, eng, ix, authn, log)
	if err != nil {
		return err
	}
	srv.Metrics().RegisterMetricsWriter(uploadMetrics.WritePrometheus)
	srv.Metrics().RegisterMetricsWriter(mailroomMetrics.WritePrometheus)
	srv.Metrics().RegisterMetricsWriter(shared.set.WritePrometheus)
	if follower != nil {
		follower.RegisterMetrics(srv.Metrics())
		wg.Add(1)
		go func() { defer wg.Done(); follower.Run(workers) }()
	}
	c, made := srv.Certificate()
	if *cert == "" {
		certPath, _ := server.SelfSignedPaths(rf.dataDir)
		verb := "using"
		if made {
			verb = "made"
		}
		fmt.Fprintf(os.Stderr, "TLS: %s a self-signed certificate %s\n  SHA-256 fingerprint %s\n", verb, certPath, server.Fingerprint(c))
	}
	port := portOf(srv.Addr().String())
	url := fmt.Sprintf("https://localhost:%s/apiv2/jsonrpc", port)
	fmt.Fprintf(os.Stderr, "addr_check: %s (also /publicinterface/jsonrpc)\n", url)
	if *demo {
		account, secret, err := auth.Demo(store)
		if err != nil {
			return err
		}
		certOpt := "-k"
		if *cert == "" {
			certPath, _ := server.SelfSignedPaths(rf.dataDir)
			if abs, err := filepath.Abs(certPath); err == nil {
				certOpt = "--cacert " + abs
			}
		}
		fmt.Fprintf(os.Stderr, "demo account %s with a new API key; try:\n\n  curl %s %s -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' -d '%s'\n\n",
			account, certOpt, url, secret, `{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}}`)
	} else if keys, err := store.Keys(""); err == nil && len(keys) == 0 {
		fmt.Fprintf(os.Stderr, "no API keys yet. Make the first one:\n  lodge account add ABC12345 -name 'My company' -data-dir %s\n  lodge key create -account ABC12345 -data-dir %s\n(or run lodge serve -demo)\n", rf.dataDir, rf.dataDir)
	}
	start := time.Now()
	err = srv.Run(ctx)
	log.Info("server stopped", "uptime", time.Since(start).Round(time.Second))
	return err
}

func portOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[i+1:]
	}
	return addr
}
