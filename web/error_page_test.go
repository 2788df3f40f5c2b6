package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// TestErrorPageWords: a page's 503 for a database outage is in the
// surface's words, since the Error object's are written for programs; a
// 503 a handler raised with a message of its own (a full line of photo
// uploads) keeps that message. Both carry Retry-After.
func TestErrorPageWords(t *testing.T) {
	const words = "The console cannot reach the database just now."
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler(slog.New(slog.NewTextHandler(io.Discard, nil)), nil)})
	page := &Surface{Errors: func(c *fiber.Ctx, p Problem) error { return ErrorPage(c, p, true, words) }}
	app.Get("/outage", page.Mark, func(*fiber.Ctx) error {
		return fmt.Errorf("find pets: %w", context.DeadlineExceeded)
	})
	app.Get("/busy", page.Mark, func(*fiber.Ctx) error {
		return db.Errorf(db.EUnavailable, "Too many photos are waiting to be processed.")
	})
	for path, want := range map[string]string{"/outage": words, "/busy": "Too many photos are waiting to be processed."} {
		res, err := app.Test(httptest.NewRequest(http.MethodGet, path, nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
			t.Errorf("%s: status %d, Retry-After %q; want 503 with Retry-After", path, res.StatusCode, res.Header.Get("Retry-After"))
		}
		if !strings.Contains(string(body), want) {
			t.Errorf("%s: the page does not say %q:\n%s", path, want, body)
		}
	}
}
