package handlers_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"petstore/db"
	"petstore/handlers/handlerstest"
	"petstore/web/ratelimit"
)

// TestForwardedWiring: the anonymous API limit counts a request against
// its client's bucket as TRUSTED_PROXIES has web.ClientBucket read it:
// behind a trusted proxy, the right-most address it did not add, whatever
// line the client wrote before the proxy's; from any other peer, the
// peer. (The rules of reading X-Forwarded-For: web/forwarded_test.go.)
// app.Test's peer is 0.0.0.0, so "0.0.0.0" makes the peer a trusted proxy.
func TestForwardedWiring(t *testing.T) {
	free := db.PlanLimits[db.PlanFree]
	limits := ratelimit.Limits{Plan: db.PlanFree, PerMinute: free.PerMinute, PerDay: free.PerDay}
	for _, tc := range []struct {
		name, proxies string
		lines         []string // X-Forwarded-For lines, in order
		want          string   // the bucket counted
	}{
		{"a forged line before the trusted proxy's", "0.0.0.0", []string{"198.51.100.1", "203.0.113.7"}, "203.0.113.7"},
		{"untrusted peer", "10.0.0.0/8", []string{"203.0.113.7"}, "0.0.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := handlerstest.New(t, handlerstest.WithProxies(t, tc.proxies))
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
			if got, want := d.Minute.Remaining, free.PerMinute-1; got != want {
				t.Errorf("bucket %s: %d left this minute, want %d: the request counted there", tc.want, got, want)
			}
		})
	}
}
