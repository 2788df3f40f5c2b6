package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/client"
)

// apiClocks maps a server's URL to its pinned clock, for apiTransport.
var apiClocks sync.Map

// The transports of `petstore api` wait on the clock of the server they
// call (a minute window passes at once); set once, before any test runs.
func init() {
	apiTransport = func(url string) *client.Transport {
		c, ok := apiClocks.Load(url)
		if !ok {
			return &client.Transport{MaxElapsed: time.Second, BaseDelay: 50 * time.Millisecond}
		}
		clock := c.(*dbtest.Clock)
		return &client.Transport{Now: clock.Now, Sleep: func(ctx context.Context, d time.Duration) error {
			clock.Add(d)
			return ctx.Err()
		}}
	}
}

// runAPI runs `petstore api args…` and returns stdout, stderr and the exit status.
func runAPI(t *testing.T, vars map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"api"}, args...), env(vars), dbtest.NewClock(t).Now, strings.NewReader(""), &out, &errOut)
	code := exitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

// `petstore api` on a key of 20 requests a minute lists more than 50
// pages with --all: every pet once, paced (no 429), no ban; a refusal is
// the Error object on stderr with exit 1; a server that cannot be reached
// is exit 2.
func TestAPICommand(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, dbURL string) {
		n := startNode(t, "A", testConfig(t, map[string]string{"DATABASE_URL": dbURL, "SESSION_KEYS": testSessionKey}), nil, nil)
		apiClocks.Store(n.base, n.clock)
		store := n.srv.Store
		ctx := context.Background()
		staff, _ := issueKey(t, store, "staff", db.RoleStaff, 100000, 1000000)
		slow, slowKey := issueKey(t, store, "slow", db.RoleCustomer, 20, 100000)

		cat, err := store.CreateCategory(ctx, db.NewCategory{Name: new("Ferrets")})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			if _, err := store.CreatePet(ctx, db.NewPet{Name: new("ferret " + string(rune('A'+i%26)) + string(rune('a'+i/26))), CategoryID: &cat.ID}); err != nil {
				t.Fatal(err)
			}
		}
		vars := map[string]string{"PETSTORE_URL": n.base, "PETSTORE_API_KEY": staff}
		out, errOut, code := runAPI(t, vars, "GET", "/pets?limit=100", "--all")
		var every []db.Pet
		if code != 0 || json.Unmarshal([]byte(out), &every) != nil || len(every) < 50 {
			t.Fatalf("staff --all: exit %d, %d pets, stderr %s", code, len(every), errOut)
		}

		out, errOut, code = runAPI(t, vars, "--key", slow, "GET", "/pets?limit=1", "--all")
		var paged []db.Pet
		if code != 0 || json.Unmarshal([]byte(out), &paged) != nil {
			t.Fatalf("slow --all: exit %d, stderr %s", code, errOut)
		}
		seen := map[int64]bool{}
		for _, p := range paged {
			if seen[p.ID] {
				t.Fatalf("pet %d twice", p.ID)
			}
			seen[p.ID] = true
		}
		if len(paged) != len(every) {
			t.Fatalf("slow --all: %d pets, want %d", len(paged), len(every))
		}
		out, errOut, code = runAPI(t, vars, "GET", "/keys/"+strconv.FormatInt(slowKey.ID, 10)+"/usage")
		var usage struct {
			Limited429Today int64 `json:"limited429Today"`
			Banned          bool  `json:"banned"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &usage) != nil || usage.Limited429Today != 0 || usage.Banned {
			t.Fatalf("usage: exit %d, %s %s: want no 429 and no ban", code, out, errOut)
		}

		// A POST from a file, then a refusal: the Error object, exit 1.
		body := filepath.Join(t.TempDir(), "order.json")
		if err := os.WriteFile(body, []byte(`{"petId": 999999, "quantity": 0}`), 0o600); err != nil {
			t.Fatal(err)
		}
		out, errOut, code = runAPI(t, vars, "POST", "/store/orders", "--data", "@"+body)
		var e client.Error
		if code != 1 || out != "" || json.Unmarshal([]byte(errOut), &e) != nil || e.Status != 422 || len(e.Details) == 0 || e.RequestID == "" {
			t.Fatalf("refused order: exit %d, stdout %q, stderr %s", code, out, errOut)
		}
		out, errOut, code = runAPI(t, vars, "POST", "/categories", "--data", `{"name": "Owls"}`)
		if code != 0 || !strings.Contains(out, `"name": "Owls"`) {
			t.Fatalf("create category: exit %d, stdout %s, stderr %s", code, out, errOut)
		}
	})
}

// A server that cannot be reached: retries exhausted, exit 2.
func TestAPICommandUnreachable(t *testing.T) {
	_, errOut, code := runAPI(t, nil, "--url", "http://127.0.0.1:1", "GET", "/pets")
	if code != 2 || !strings.Contains(errOut, "attempts") {
		t.Fatalf("exit %d, stderr %q: want 2 naming the attempts", code, errOut)
	}
}
