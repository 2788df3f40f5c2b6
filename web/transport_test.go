package web

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"
)

// transportApp is an app whose /tls route says whether the request came
// over TLS (OverTLS, what the session cookie's Secure asks), over proxies.
func transportApp(t *testing.T, proxies string) *fiber.App {
	t.Helper()
	return newTestApp(t, AppOptions{Proxies: mustProxies(t, proxies)}, func(r *Routes) {
		r.Add(route("GET", "/tls", func(c *fiber.Ctx) error { return c.SendString(strconv.FormatBool(OverTLS(c))) }))
	})
}

// overTLS is what an answer says of the request's transport.
type overTLS struct {
	HSTS    string // Strict-Transport-Security
	OverTLS bool   // OverTLS in the handler; false for an error answer
}

// TestTransport: a request arrived over TLS when the connection says so
// or a trusted proxy's X-Forwarded-Proto says https (SPEC §11, §17); the
// header from any other peer is the client's say-so and is ignored. Its
// lines are one list, and of a list the last value counts: the one the
// trusted peer wrote. Every answer to such a request, an error included,
// carries Strict-Transport-Security, and OverTLS reports it. app.Test's
// peer is 0.0.0.0.
func TestTransport(t *testing.T) {
	tlsAnswer := overTLS{HSTS: HSTS, OverTLS: true}
	for _, tc := range []struct {
		name, proxies string
		lines         []string // X-Forwarded-Proto lines, in order
		want          overTLS
	}{
		{"trusted proxy, https", "0.0.0.0", []string{"https"}, tlsAnswer},
		{"trusted proxy, HTTPS", "0.0.0.0", []string{" HTTPS "}, tlsAnswer},
		{"trusted proxy, a list ending https", "0.0.0.0", []string{"http, https"}, tlsAnswer},
		{"trusted proxy, a list ending http", "0.0.0.0", []string{"https, http"}, overTLS{}},
		{"client's http line, proxy's https line", "0.0.0.0", []string{"http", "https"}, tlsAnswer},
		{"client's https line, proxy's http line", "0.0.0.0", []string{"https", "http"}, overTLS{}},
		{"trusted proxy, http", "0.0.0.0", []string{"http"}, overTLS{}},
		{"trusted proxy, something else", "0.0.0.0", []string{"httpsx"}, overTLS{}},
		{"trusted proxy, no header", "0.0.0.0", nil, overTLS{}},
		{"trusted proxy by its network", "0.0.0.0/8", []string{"https"}, tlsAnswer},
		{"untrusted proxy, https", "10.0.0.0/8", []string{"https"}, overTLS{}},
		{"no proxies, https", "", []string{"https"}, overTLS{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := transportApp(t, tc.proxies)
			for _, path := range []string{"/tls", "/no/such/page"} {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				for _, l := range tc.lines {
					req.Header.Add(fiber.HeaderXForwardedProto, l)
				}
				a := send(t, app, req)
				got := overTLS{HSTS: a.Header.Get(fiber.HeaderStrictTransportSecurity), OverTLS: string(a.Body) == "true"}
				want := tc.want
				if path != "/tls" {
					want.OverTLS = false // the 404 has no handler to ask
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("GET %s with X-Forwarded-Proto %q via %q (-want +got):\n%s", path, tc.lines, tc.proxies, diff)
				}
			}
		})
	}
}

// TestTransportTLSConnection: a request on a TLS connection arrived over
// TLS with no proxy to say so: its answers, errors included, carry
// Strict-Transport-Security.
func TestTransportTLSConnection(t *testing.T) {
	app := transportApp(t, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = app.Listener(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}}))
	}()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	t.Cleanup(client.CloseIdleConnections)
	for _, tc := range []struct {
		path string
		want overTLS
	}{
		{"/tls", overTLS{HSTS: HSTS, OverTLS: true}},
		{"/no/such/page", overTLS{HSTS: HSTS}},
	} {
		res, err := client.Get("https://" + ln.Addr().String() + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := overTLS{HSTS: res.Header.Get(fiber.HeaderStrictTransportSecurity), OverTLS: string(body) == "true"}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("GET %s over TLS (-want +got):\n%s", tc.path, diff)
		}
	}
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
