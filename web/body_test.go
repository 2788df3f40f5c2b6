package web

import (
	"strconv"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"

	"petstore/db"
)

// TestBodyRefusedInTheChain: a body longer than its route takes is refused
// by the route's ReadBody, where its audience's chain placed it: the 413
// carries what the chain did before it (the API's key and limit headers),
// and a request the chain refuses before its body (no key) gets that
// answer, not 413, with its body unread. A chain that places no ReadBody
// gets it first.
func TestBodyRefusedInTheChain(t *testing.T) {
	key := func(c *fiber.Ctx) error {
		c.Set("X-RateLimit-Limit", "60")
		if c.Get("Authorization") == "" {
			return db.Errorf(db.EUnauthorized, "No key.")
		}
		return c.Next()
	}
	length := func(c *fiber.Ctx) error { return c.SendString(strconv.Itoa(len(c.Body()))) }
	app := newTestApp(t, AppOptions{}, func(r *Routes) {
		r.Add(route("POST", "/api/pets", key, ReadBody, length))
		r.Add(route("POST", "/plain", length)) // no ReadBody placed
		r.Add(Route{Method: "POST", Path: "/api/photos", Body: Body{Max: 1 << 20}, Handlers: []fiber.Handler{key, ReadBody, length}})
	})
	addr := listen(t, app)
	type got struct {
		Status    int
		Code      string
		Body      string
		RateLimit string
		Close     bool
	}
	for _, tc := range []struct {
		name, head string
		body       int64
		want       got
	}{
		{"within, with a key", post("/api/pets", sized(100), "Authorization: k"), 100, got{Status: 200, Body: "100", RateLimit: "60"}},
		{"over its route, with a key", post("/api/pets", sized(MaxBody+1), "Authorization: k"), 16, got{Status: 413, Code: EPayloadTooLarge, RateLimit: "60", Close: true}},
		{"over its route, no key", post("/api/pets", sized(MaxBody+1)), 16, got{Status: 401, Code: db.EUnauthorized, RateLimit: "60", Close: true}},
		{"over every route, with a key", post("/api/pets", sized(2<<20), "Authorization: k"), 0, got{Status: 413, Code: EPayloadTooLarge, RateLimit: "60", Close: true}},
		{"a larger route's body", post("/api/photos", sized(MaxBody+1), "Authorization: k"), MaxBody + 1, got{Status: 200, Body: strconv.Itoa(MaxBody + 1), RateLimit: "60"}},
		{"no ReadBody placed: read first", post("/plain", sized(MaxBody+1)), 16, got{Status: 413, Code: EPayloadTooLarge, Close: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := exchange(t, addr, tc.head, zeroBytes(tc.body))
			g := got{Status: a.Status, RateLimit: a.Header.Get("X-RateLimit-Limit"), Close: a.Header.Get("Connection") == "close"}
			if a.Status >= 400 {
				g.Code = a.problem(t).Code
			} else {
				g.Body = string(a.Body)
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{64 << 10: "64 KiB", 8 << 20: "8 MiB", 1000: "1000 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
