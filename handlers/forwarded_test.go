package handlers_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/ratelimit"
)

// TestForwardedHeaderShapes: the anonymous API limit counts a request
// against the bucket of its client as SPEC §17 reads it: every
// X-Forwarded-For line is one list, read from the right, trusted hops
// skipped. A client's own line before a proxy's cannot choose the bucket.
// app.Test's peer is 0.0.0.0, so "0.0.0.0" makes the peer a trusted proxy.
func TestForwardedHeaderShapes(t *testing.T) {
	free := db.PlanLimits[db.PlanFree]
	limits := ratelimit.Limits{Plan: db.PlanFree, PerMinute: free.PerMinute, PerDay: free.PerDay}
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		for _, tc := range []struct {
			name, proxies string
			lines         []string // X-Forwarded-For lines, in order
			want          string   // the bucket counted
		}{
			{"one line", "0.0.0.0", []string{"203.0.113.7"}, "203.0.113.7"},
			{"a forged line before the proxy's", "0.0.0.0", []string{"198.51.100.1", "203.0.113.7"}, "203.0.113.7"},
			{"forged list before the proxy's", "0.0.0.0", []string{"198.51.100.1, 198.51.100.2", "203.0.113.7"}, "203.0.113.7"},
			{"two proxies, two lines", "0.0.0.0, 10.0.0.0/8", []string{"198.51.100.1", "203.0.113.7, 10.0.0.5"}, "203.0.113.7"},
			{"spaces", "0.0.0.0, 10.0.0.0/8", []string{"  203.0.113.7 ,   10.0.0.5  "}, "203.0.113.7"},
			{"garbage left of the client", "0.0.0.0", []string{"not-an-ip", "203.0.113.7"}, "203.0.113.7"},
			{"garbage as the last hop", "0.0.0.0", []string{"203.0.113.7", "not-an-ip"}, "0.0.0.0"},
			{"IPv6 by its /64", "0.0.0.0", []string{"198.51.100.1", "2001:db8:1:2::5"}, "2001:db8:1:2::/64"},
			{"IPv6 bracketed with a port", "0.0.0.0", []string{"[2001:db8:1:2::5]:443"}, "2001:db8:1:2::/64"},
			{"untrusted peer", "10.0.0.0/8", []string{"203.0.113.7"}, "0.0.0.0"},
			{"no header", "0.0.0.0", nil, "0.0.0.0"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				a := handlerstest.NewOn(t, open, handlerstest.WithProxies(t, tc.proxies))
				req := httptest.NewRequest("GET", "/api/openapi.json", nil)
				for _, l := range tc.lines {
					req.Header.Add("X-Forwarded-For", l)
				}
				res, err := a.App.Test(req, -1)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != 200 || res.Header.Get("X-RateLimit-Remaining-Minute") != "59" {
					t.Fatalf("status %d, remaining %q", res.StatusCode, res.Header.Get("X-RateLimit-Remaining-Minute"))
				}
				d, err := a.Handler.Limiter.Status(context.Background(), "ip:"+tc.want, limits)
				if err != nil {
					t.Fatal(err)
				}
				if d.Minute.Remaining != free.PerMinute-1 {
					t.Errorf("bucket %s: %d of %d left this minute, want the request counted there", tc.want, d.Minute.Remaining, free.PerMinute)
				}
			})
		}
	})
}

// TestForwardedProtoLines: X-Forwarded-Proto's lines are one list too;
// the last value, the one the trusted peer wrote, says whether the
// request arrived over TLS.
func TestForwardedProtoLines(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		for _, tc := range []struct {
			name  string
			lines []string
			tls   bool
		}{
			{"client's https, proxy's http", []string{"https", "http"}, false},
			{"client's http, proxy's https", []string{"http", "https"}, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				a := handlerstest.NewOn(t, open, handlerstest.WithProxies(t, "0.0.0.0"))
				req := httptest.NewRequest("GET", "/api/openapi.json", nil)
				for _, l := range tc.lines {
					req.Header.Add("X-Forwarded-Proto", l)
				}
				res, err := a.App.Test(req, -1)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				wantTransport(t, tc.name, res.Header, tc.tls)
			})
		}
	})
}
