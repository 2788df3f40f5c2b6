package api_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"petstore/db/dbtest"
	"petstore/handlers"
	"petstore/handlers/handlerstest"
	"petstore/web/ratelimit"
)

// TestPhotoTimeoutIsBusy: a photo the server could not process in time
// (Limits.Timeout) is 503 with Retry-After, the image perhaps fine and the
// server busy: load, logged as a warning, never at ERROR.
func TestPhotoTimeoutIsBusy(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		logs := &syncBuffer{}
		a := handlerstest.NewOn(t, open, func(h *handlers.Handler, _ *ratelimit.Config) {
			h.Logger = slog.New(slog.NewJSONHandler(logs, nil))
			h.Config.PhotoLimits.Timeout = time.Nanosecond
		})
		rex := a.SeedPet("Rex", 1)
		r := a.Do(handlerstest.Req{Method: "POST", Path: "/api/pets/" + handlerstest.Itoa(rex.ID) + "/photos", Key: a.Staff,
			ContentType: "image/jpeg", Body: handlerstest.JPEGOf(t, 320, 240)})
		r.Want(t, http.StatusServiceUnavailable, "unavailable")
		if r.Header.Get("Retry-After") == "" {
			t.Error("no Retry-After on the 503")
		}
		warned := false
		for line := range strings.Lines(logs.String()) {
			var l struct {
				Level  string `json:"level"`
				Status int    `json:"status"`
			}
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			if l.Level == "ERROR" {
				t.Errorf("logged at ERROR: %s", line)
			}
			warned = warned || l.Status == http.StatusServiceUnavailable && l.Level == "WARN"
		}
		if !warned {
			t.Errorf("the 503 was not logged as a warning:\n%s", logs.String())
		}
	})
}
