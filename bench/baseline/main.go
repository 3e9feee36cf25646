// Command baseline is the yardstick for lodge's performance figures: a
// minimal fasthttp server, over HTTPS, that answers every POST with one
// fixed JSON-RPC result and does nothing else.
//
// Benchmark machines are shared and noisy, so lodge is not judged by
// absolute requests per second but by its ratio to this server, measured
// side by side by the same load generator (bench/loadgen) in the same run
// (bench/serve-bench.sh). What the ratio leaves for lodge to account for is
// its own work: authentication, JSON-RPC decoding and encoding and the
// address check. Everything else is the same as lodge's server: TLS 1.2 or
// newer through crypto/tls, keep-alive connections, and the fasthttp
// settings lodge uses by default (timeouts, body, header and per-client
// limits).
//
// The answer is always
//
//	{"jsonrpc":"2.0","id":1,"result":{"status":"matched","nation":"AUS","address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}}
//
// whatever the request was, batches of addresses included, so the baseline
// is only a yardstick for single-address requests; for batches its figure
// shows what the transport alone could carry with a small answer. The
// request is not authenticated nor parsed (fasthttp reads it whole). GET
// and HEAD of any path answer 200 "ready" for readiness probes; other
// methods get 405.
//
// The first line baseline prints on stdout is "listening HOST:PORT", the
// address it listens on (-addr 127.0.0.1:0, the default, picks a free
// port). It serves until interrupted or terminated.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

var result = []byte(`{"jsonrpc":"2.0","id":1,"result":{"status":"matched","nation":"AUS","address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}}`)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "HTTPS listen address; port 0 picks a free one")
	certFile := flag.String("tls-cert", "", "TLS certificate (PEM); default a self-signed one made in memory")
	keyFile := flag.String("tls-key", "", "TLS key (PEM)")
	flag.Parse()
	if err := run(*addr, *certFile, *keyFile); err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
}

func run(addr, certFile, keyFile string) error {
	var cert tls.Certificate
	var err error
	switch {
	case certFile == "" && keyFile == "":
		cert, err = selfSigned()
	case certFile == "" || keyFile == "":
		err = fmt.Errorf("give both -tls-cert and -tls-key, or neither")
	default:
		cert, err = tls.LoadX509KeyPair(certFile, keyFile)
	}
	if err != nil {
		return err
	}
	tlsConfig := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"http/1.1"},
	}
	// lodge's defaults (server.Config): the same limits cost the same.
	srv := &fasthttp.Server{
		Handler:               handle,
		Name:                  "lodge-baseline",
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          60 * time.Second,
		IdleTimeout:           120 * time.Second,
		MaxConnsPerIP:         512,
		MaxRequestBodySize:    32 << 20,
		ReadBufferSize:        16 << 10,
		NoDefaultServerHeader: true,
		CloseOnShutdown:       true,
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("listening %s\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(tls.NewListener(ln, tlsConfig)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.ShutdownWithContext(sctx)
}

var (
	ctJSON = []byte("application/json")
	ready  = []byte("ready\n")
)

func handle(ctx *fasthttp.RequestCtx) {
	switch {
	case ctx.IsPost():
		ctx.SetContentTypeBytes(ctJSON)
		ctx.SetBody(result)
	case ctx.IsGet() || ctx.IsHead():
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBody(ready)
	default:
		ctx.Error("method not allowed\n", fasthttp.StatusMethodNotAllowed)
	}
}

// selfSigned makes a certificate for localhost and the loopback addresses
// that lasts for this process only.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "lodge baseline (self-signed)"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(0, 0, 7),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
