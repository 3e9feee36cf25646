package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lodge-mail/lodge/internal/durable"
)

// SelfSignedPaths returns where the self-signed certificate and key of a
// data directory live.
func SelfSignedPaths(dataDir string) (cert, key string) {
	return filepath.Join(dataDir, "tls", "cert.pem"), filepath.Join(dataDir, "tls", "key.pem")
}

// ensureSelfSigned makes a self-signed certificate for localhost, this
// host's name and the loopback addresses in dataDir/tls on first use, and
// returns its paths. The key is written 0600 through a temporary file and
// renamed, so a crash never leaves half a key.
func ensureSelfSigned(dataDir string) (string, string, bool, error) {
	certPath, keyPath := SelfSignedPaths(dataDir)
	if _, err := os.Stat(certPath); err == nil {
		if _, err := os.Stat(keyPath); err == nil {
			return certPath, keyPath, false, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(certPath), 0o700); err != nil {
		return "", "", false, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", false, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return "", "", false, err
	}
	host, _ := os.Hostname()
	names := []string{"localhost"}
	if host != "" && host != "localhost" {
		names = append(names, host)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "lodge (self-signed)", Organization: []string{"lodge"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(2, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              names,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", false, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", false, err
	}
	if err := durable.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return "", "", false, err
	}
	if err := durable.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return "", "", false, err
	}
	return certPath, keyPath, true, nil
}

// Fingerprint returns the SHA-256 fingerprint of a certificate, as
// AB:CD:... hex pairs.
func Fingerprint(c tls.Certificate) string {
	if len(c.Certificate) == 0 {
		return ""
	}
	sum := sha256.Sum256(c.Certificate[0])
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	var b strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String()
}

// loadTLS loads the certificate, making a self-signed one when none is
// configured, and returns a TLS 1.2+ configuration.
func loadTLS(certFile, keyFile, dataDir string) (*tls.Config, tls.Certificate, bool, error) {
	made := false
	if certFile == "" && keyFile == "" {
		var err error
		if certFile, keyFile, made, err = ensureSelfSigned(dataDir); err != nil {
			return nil, tls.Certificate{}, false, fmt.Errorf("self-signed certificate: %w", err)
		}
	} else if certFile == "" || keyFile == "" {
		return nil, tls.Certificate{}, false, fmt.Errorf("give both --tls-cert and --tls-key, or neither")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, tls.Certificate{}, false, err
	}
	cfg := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"http/1.1"},
	}
	return cfg, cert, made, nil
}
