package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"

	"petstore/db"
)

// TestErrorPageWords: a page's 503 for a database outage is in the
// surface's words, since the Error object's are written for programs; a
// 503 a handler raised with a message of its own (a full line of photo
// uploads) keeps that message. Both carry Retry-After.
func TestErrorPageWords(t *testing.T) {
	const words = "The console cannot reach the database just now."
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler(slog.New(slog.NewTextHandler(io.Discard, nil)))})
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

// errorPage is what a test of a browser surface's error answer checks.
type errorPage struct {
	Status   int
	JSON     string // the Error object's code, when the answer is one
	Page     bool   // a whole page, not the fragment for htmx
	Message  string
	RetryURL string
}

// TestErrorPageAnswers: a browser surface's error is its page (the bare
// fragment for htmx) with the message; a 503 offers to try again the page
// that failed, only when it was a GET of a path of this site; a client
// asking for JSON gets the Error object.
func TestErrorPageAnswers(t *testing.T) {
	app := newTestApp(t, AppOptions{}, func(r *Routes) {
		page := &Surface{Errors: func(c *fiber.Ctx, p Problem) error {
			return ErrorPage(c, p, false, "The shop cannot reach the database.")
		}}
		busy := func(*fiber.Ctx) error { return db.Errorf(db.EUnavailable, "Too busy.") }
		r.Add(route("GET", "/busy", page.Mark, busy))
		r.Add(route("POST", "/busy", page.Mark, busy))
		r.Add(route("GET", "/gone", page.Mark, func(*fiber.Ctx) error { return db.Errorf(db.ENotFound, "No such pet.") }))
		r.Fallback("/", []fiber.Handler{page.Default, busy})
	})
	for _, tc := range []struct {
		name, method, path string
		header             []string
		want               errorPage
	}{
		{"a page", "GET", "/gone", nil, errorPage{Status: 404, Page: true, Message: "No such pet."}},
		{"htmx", "GET", "/gone", []string{"HX-Request", "true"}, errorPage{Status: 404, Message: "No such pet."}},
		{"JSON asked for", "GET", "/gone", []string{"Accept", "application/json"}, errorPage{Status: 404, JSON: db.ENotFound}},
		{"503 of a GET", "GET", "/busy?page=2", nil, errorPage{Status: 503, Page: true, Message: "Too busy.", RetryURL: "/busy?page=2"}},
		{"503 of a POST", "POST", "/busy", nil, errorPage{Status: 503, Page: true, Message: "Too busy."}},
		{"503 of another site's path", "GET", "//evil.example/x", nil, errorPage{Status: 503, Page: true, Message: "Too busy."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			for i := 0; i+1 < len(tc.header); i += 2 {
				req.Header.Set(tc.header[i], tc.header[i+1])
			}
			a := send(t, app, req)
			got := errorPage{Status: a.Status}
			if a.Header.Get(fiber.HeaderContentType) == fiber.MIMEApplicationJSON {
				got.JSON = a.problem(t).Code
			} else {
				doc, err := goquery.NewDocumentFromReader(bytes.NewReader(a.Body))
				if err != nil {
					t.Fatal(err)
				}
				got.Page = bytes.Contains(bytes.ToLower(a.Body), []byte("<html"))
				got.Message = doc.Find(`[data-testid="error"] > p`).First().Text()
				got.RetryURL = doc.Find(`[data-testid="retry"]`).AttrOr("href", "")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tc.method, tc.path, diff)
			}
		})
	}
}
