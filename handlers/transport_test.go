package handlers_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web"
)

// wantTransport fails unless r carries HSTS and Secure cookies exactly
// when tls is set.
func wantTransport(t *testing.T, what string, h http.Header, tls bool) {
	t.Helper()
	if got, want := h.Get("Strict-Transport-Security"), map[bool]string{true: web.HSTS}[tls]; got != want {
		t.Errorf("%s: Strict-Transport-Security = %q, want %q", what, got, want)
	}
	for _, c := range h.Values("Set-Cookie") {
		if secure := strings.Contains(strings.ToLower(c), "; secure"); secure != tls {
			t.Errorf("%s: cookie %q: Secure = %v, want %v", what, c[:strings.IndexByte(c, '=')], secure, tls)
		}
	}
}

// TestTransportSecurity: answers that arrived over TLS carry
// Strict-Transport-Security and Secure cookies (SPEC §11); behind a proxy
// only its X-Forwarded-Proto says so, and only when it is in
// TRUSTED_PROXIES.
func TestTransportSecurity(t *testing.T) {
	paths := []string{"/", "/staff/login", "/api/openapi.json", "/no/such/page"}
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		for _, tc := range []struct {
			name, proxies, proto string
			tls                  bool
		}{
			{"trusted proxy, https", "0.0.0.0", "https", true}, // app.Test's peer is 0.0.0.0
			{"trusted proxy, list ending https", "0.0.0.0", "http, https", true},
			{"trusted proxy, http", "0.0.0.0", "http", false},
			{"trusted proxy, no header", "0.0.0.0", "", false},
			{"untrusted proxy, https", "10.0.0.0/8", "https", false},
			{"no proxies, https", "", "https", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				a := handlerstest.NewOn(t, open, handlerstest.WithProxies(t, tc.proxies))
				hdr := map[string]string{}
				if tc.proto != "" {
					hdr["X-Forwarded-Proto"] = tc.proto
				}
				for _, p := range paths {
					r := a.Do(handlerstest.Req{Method: "GET", Path: p, Header: hdr})
					if p != "/no/such/page" && r.Status != http.StatusOK {
						t.Fatalf("GET %s = %d", p, r.Status)
					}
					if p == "/" && len(r.Header.Values("Set-Cookie")) == 0 {
						t.Fatal("GET / set no cookie to check")
					}
					wantTransport(t, "GET "+p, r.Header, tc.tls)
				}
			})
		}
		t.Run("TLS connection", func(t *testing.T) {
			a := handlerstest.NewOn(t, open) // no proxies: the connection itself says so
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			cert := selfSigned(t)
			go func() { _ = a.App.Listener(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}})) }()
			t.Cleanup(func() { _ = a.App.ShutdownWithTimeout(5 * time.Second) })
			client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
			t.Cleanup(client.CloseIdleConnections)
			for _, p := range paths {
				res, err := client.Get("https://" + ln.Addr().String() + p)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				wantTransport(t, "GET "+p+" over TLS", res.Header, true)
			}
		})
	})
}

// selfSigned makes a throwaway certificate for 127.0.0.1.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "petstore test"},
		// TLS checks validity against the real clock, so the window is
		// relative to the real present, not a calendar date.
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
