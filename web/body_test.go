package web

import (
	"log/slog"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// TestBodyLimitsRoutes: a route given a larger body matches its paths as
// Fiber routes them (any case, an optional trailing slash), for its
// method only; every other request keeps MaxBody.
func TestBodyLimitsRoutes(t *testing.T) {
	app, routes := NewApp(AppOptions{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = app.Shutdown() }()
	routes.Add(Route{Method: "POST", Path: "/api/pets/:petId/photos", Body: 8 << 20, Handlers: []fiber.Handler{ReadBody}})
	routes.Add(Route{Method: "POST", Path: "/api/pets", Handlers: []fiber.Handler{ReadBody}})
	for _, tc := range []struct {
		method, path string
		want         int64
	}{
		{"POST", "/api/pets/7/photos", 8 << 20},
		{"POST", "/api/pets/7/photos/", 8 << 20},
		{"POST", "/API/Pets/7/PHOTOS", 8 << 20},
		{"POST", "/api/pets/abc/photos", 8 << 20}, // the handler answers 400
		{"PUT", "/api/pets/7/photos", MaxBody},
		{"POST", "/api/pets/7/photos/3", MaxBody},
		{"POST", "/api/pets/photos", MaxBody},
		{"POST", "/api/pets/7/photosx", MaxBody},
		{"POST", "/x/api/pets/7/photos", MaxBody},
		{"POST", "/api/pets", MaxBody},
	} {
		if got, _ := routes.bodyLimit([]byte(tc.method), []byte(tc.path)); got != tc.want {
			t.Errorf("%s %s: raw limit %d, want %d", tc.method, tc.path, got, tc.want)
		}
	}
}

// TestRequestPath reads the path of a request target as it arrives, before
// Fiber has parsed it.
func TestRequestPath(t *testing.T) {
	for in, want := range map[string]string{
		"/api/pets/1/photos":                    "/api/pets/1/photos",
		"/api/pets/1/photos?x=1":                "/api/pets/1/photos",
		"http://shop.example/api/pets/1/photos": "/api/pets/1/photos",
		"https://shop.example:8443/a?b=/c":      "/a",
		"http://shop.example":                   "/",
		"*":                                     "*",
	} {
		if got := string(requestPath([]byte(in))); got != want {
			t.Errorf("requestPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{64 << 10: "64 KiB", 8 << 20: "8 MiB", 1000: "1000 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
