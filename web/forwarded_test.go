package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"

	"petstore/web/ratelimit"
)

// mustProxies parses a TRUSTED_PROXIES value.
func mustProxies(t *testing.T, list string) ratelimit.TrustedProxies {
	t.Helper()
	p, err := ratelimit.ParseTrustedProxies(list)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// clientAddress is what a request's client address comes to.
type clientAddress struct {
	IP     string // ClientIP: what the audit log records
	Bucket string // ClientBucket: what every per-address limit counts by
}

// TestClientAddress: the client address (SPEC §17) is read from every
// X-Forwarded-For line as one list, in the order the lines came, from the
// right, skipping trusted proxies: the right-most address that is not a
// trusted proxy is the client, so nothing a client writes left of it (a
// line of its own before the proxy's included) chooses the address or
// the rate-limit bucket. X-Forwarded-For counts only when the peer is a
// trusted proxy. An IPv6 client counts by its /64. app.Test's peer is
// 0.0.0.0, so "0.0.0.0" in the proxies makes the peer a trusted proxy.
func TestClientAddress(t *testing.T) {
	for _, tc := range []struct {
		name, proxies string
		lines         []string // X-Forwarded-For lines, in order
		want          clientAddress
	}{
		{"one line", "0.0.0.0", []string{"203.0.113.7"}, clientAddress{"203.0.113.7", "203.0.113.7"}},
		{"a forged line before the proxy's", "0.0.0.0", []string{"198.51.100.1", "203.0.113.7"}, clientAddress{"203.0.113.7", "203.0.113.7"}},
		{"a forged list before the proxy's", "0.0.0.0", []string{"198.51.100.1, 198.51.100.2", "203.0.113.7"}, clientAddress{"203.0.113.7", "203.0.113.7"}},
		{"two proxies, two lines", "0.0.0.0, 10.0.0.0/8", []string{"198.51.100.1", "203.0.113.7, 10.0.0.5"}, clientAddress{"203.0.113.7", "203.0.113.7"}},
		{"trusted hops skipped, forged hops left of the client ignored", "0.0.0.0, 10.0.0.0/8", []string{"203.0.113.9, 192.0.2.7, 10.2.2.2"}, clientAddress{"192.0.2.7", "192.0.2.7"}},
		{"every hop trusted: the left-most", "0.0.0.0, 10.0.0.0/8", []string{"10.0.0.1", "10.0.0.2"}, clientAddress{"10.0.0.1", "10.0.0.1"}},
		{"spaces", "0.0.0.0, 10.0.0.0/8", []string{"  203.0.113.7 ,   10.0.0.5  "}, clientAddress{"203.0.113.7", "203.0.113.7"}},
		{"garbage left of the client", "0.0.0.0", []string{"not-an-ip", "203.0.113.7"}, clientAddress{"203.0.113.7", "203.0.113.7"}},
		{"garbage as the last hop: the peer", "0.0.0.0", []string{"203.0.113.7", "not-an-ip"}, clientAddress{"0.0.0.0", "0.0.0.0"}},
		{"a port", "0.0.0.0", []string{"203.0.113.7:5555"}, clientAddress{"203.0.113.7", "203.0.113.7"}},
		{"IPv4-mapped IPv6 as IPv4", "0.0.0.0", []string{"::ffff:203.0.113.7"}, clientAddress{"203.0.113.7", "203.0.113.7"}},
		{"IPv6 by its /64", "0.0.0.0", []string{"198.51.100.1", "2001:db8:1:2::5"}, clientAddress{"2001:db8:1:2::5", "2001:db8:1:2::/64"}},
		{"IPv6 elsewhere in the /64: the same bucket", "0.0.0.0", []string{"2001:db8:1:2:ffff:ffff:ffff:ffff"}, clientAddress{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"}},
		{"IPv6 in the next /64: a bucket of its own", "0.0.0.0", []string{"2001:db8:1:3::1"}, clientAddress{"2001:db8:1:3::1", "2001:db8:1:3::/64"}},
		{"IPv6 bracketed with a port", "0.0.0.0", []string{"[2001:db8:1:2::5]:443"}, clientAddress{"2001:db8:1:2::5", "2001:db8:1:2::/64"}},
		{"IPv6 proxies skipped", "0.0.0.0, fd00::/8", []string{"203.0.113.7, fd00::1, fd00::2"}, clientAddress{"203.0.113.7", "203.0.113.7"}},
		{"untrusted peer: the header ignored", "10.0.0.0/8", []string{"203.0.113.7"}, clientAddress{"0.0.0.0", "0.0.0.0"}},
		{"no proxies: the header ignored", "", []string{"203.0.113.7"}, clientAddress{"0.0.0.0", "0.0.0.0"}},
		{"no header", "0.0.0.0", nil, clientAddress{"0.0.0.0", "0.0.0.0"}},
		{"an empty line", "0.0.0.0", []string{""}, clientAddress{"0.0.0.0", "0.0.0.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxies := mustProxies(t, tc.proxies)
			var got clientAddress
			app := newTestApp(t, AppOptions{Proxies: proxies}, func(r *Routes) {
				r.Add(route("GET", "/who", func(c *fiber.Ctx) error {
					got = clientAddress{IP: ClientIP(c, proxies), Bucket: ClientBucket(c, proxies)}
					return c.SendStatus(http.StatusNoContent)
				}))
			})
			req := httptest.NewRequest(http.MethodGet, "/who", nil)
			for _, l := range tc.lines {
				req.Header.Add(fiber.HeaderXForwardedFor, l)
			}
			if a := send(t, app, req); a.Status != http.StatusNoContent {
				t.Fatalf("status %d, want 204", a.Status)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("X-Forwarded-For %q via %q (-want +got):\n%s", tc.lines, tc.proxies, diff)
			}
		})
	}
}

// TestHeaderList: a header sent on several lines is one comma-separated
// list, in the order the lines came (RFC 9110 §5.3); c.Get would read the
// first line alone.
func TestHeaderList(t *testing.T) {
	var got, first string
	app := newTestApp(t, AppOptions{}, func(r *Routes) {
		r.Add(route("GET", "/h", func(c *fiber.Ctx) error {
			got, first = HeaderList(c, "X-List"), strings.Clone(c.Get("X-List"))
			return c.SendStatus(http.StatusNoContent)
		}))
	})
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"absent", nil, ""},
		{"one line", []string{"a, b"}, "a, b"},
		{"two lines", []string{"a", "b"}, "a,b"},
		{"lines of lists", []string{"a, b", "c", "d,e"}, "a, b,c,d,e"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/h", nil)
			for _, l := range tc.lines {
				req.Header.Add("X-List", l)
			}
			send(t, app, req)
			if got != tc.want {
				t.Errorf("HeaderList = %q, want %q", got, tc.want)
			}
			if len(tc.lines) > 1 && first != tc.lines[0] {
				t.Errorf("c.Get = %q, want the first line %q (HeaderList is what reads them all)", first, tc.lines[0])
			}
		})
	}
}
