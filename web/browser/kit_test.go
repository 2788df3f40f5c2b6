package browser_test

import (
	"errors"
	"html"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"petstore/views/components"
	"petstore/web"
	"petstore/web/browser"
	"petstore/web/browser/browsertest"
)

// secret is the test apps' SESSION_KEYS secret.
var secret = []byte("0123456789abcdef0123456789abcdef")

// sessionName is the session the test apps keep, as the shop keeps
// petstore_shop.
const sessionName = "kit"

// uploadLimit is the body limit of the test apps' upload route.
const uploadLimit = 1 << 20

// testFlashes is the test apps' flash queue: the newest 3 wait.
var testFlashes = browser.Flashes{Keep: 3}

// newKit builds an app as handlers builds the shop's: web.NewApp (body
// limits, the error handler) and a group behind browser.CSRF, with routes
// that show and change the session. routes adds more.
func newKit(t *testing.T, s *browser.Sessions, routes ...func(fiber.Router)) *fiber.App {
	t.Helper()
	return newKitWith(t, s, web.AppOptions{}, routes...)
}

// newKitWith is newKit with o's options for web.NewApp (its proxies).
func newKitWith(t *testing.T, s *browser.Sessions, o web.AppOptions, routes ...func(fiber.Router)) *fiber.App {
	t.Helper()
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	app, table := web.NewApp(o)
	csrf := browser.CSRF(s, sessionName)
	upload := func(c *fiber.Ctx) error {
		parts, err := browser.UploadParts(c)
		if errors.Is(err, browser.ErrNotMultipart) {
			return c.SendString("not multipart")
		} else if err != nil {
			return err
		}
		var names []string
		for {
			p, err := parts.NextPart()
			if err == io.EOF {
				break
			} else if err != nil {
				return err
			}
			names = append(names, p.FormName()+"="+p.FileName())
		}
		return c.SendString(strings.Join(names, ","))
	}
	// As the console's upload routes: CSRF reads the token part, then the
	// body's limit is checked. Added before the group, whose middleware
	// (the default body, then CSRF) would otherwise run first.
	table.Add(web.Route{Method: fiber.MethodPost, Path: "/upload", Body: web.Body{Max: uploadLimit, Stream: true},
		Handlers: []fiber.Handler{csrf, web.ReadBody, upload}})
	g := app.Group("", web.ReadBody, csrf)
	g.Get("/page", withSession(s, func(c *fiber.Ctx, sess *browser.Session) error {
		flashes, err := testFlashes.Take(sess)
		if err != nil {
			return err
		}
		return page(c, sess.Value("note"), flashes)
	}))
	g.Post("/note", withSession(s, func(c *fiber.Ctx, sess *browser.Session) error {
		sess.Set("note", c.FormValue("note"))
		if err := sess.Save(); err != nil {
			return err
		}
		return c.SendString("noted")
	}))
	for _, r := range routes {
		r(g)
	}
	return app
}

// page is an HTML page with the request's CSRF token in a form and in
// <body hx-headers>, the session's note and the flash messages.
func page(c *fiber.Ctx, note string, flashes []components.Flash) error {
	token := html.EscapeString(browser.CSRFToken(c))
	var b strings.Builder
	b.WriteString(`<!doctype html><html><body hx-headers='{"X-CSRF-Token":"` + token + `"}'>`)
	b.WriteString(`<p data-testid="note">` + html.EscapeString(note) + `</p>`)
	for _, f := range flashes {
		b.WriteString(`<p data-testid="flash" class="` + html.EscapeString(f.Kind) + `">` + html.EscapeString(f.Text) + `</p>`)
	}
	b.WriteString(`<form method="post"><input type="hidden" name="_csrf" value="` + token + `"></form></body></html>`)
	c.Type("html")
	return c.SendString(b.String())
}

// visitor is a browser that has loaded a page of app, for its cookie and
// token.
func visitor(t *testing.T, app *fiber.App) *browsertest.Browser {
	t.Helper()
	b := browsertest.New(t, app)
	b.Get("/page").WantStatus(http.StatusOK)
	if b.CSRF == "" {
		t.Fatal("the page carries no CSRF token")
	}
	return b
}

// withSession is a handler given the request's session of the test apps.
func withSession(s *browser.Sessions, h func(c *fiber.Ctx, sess *browser.Session) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sess, err := s.Get(c, sessionName)
		if err != nil {
			return err
		}
		return h(c, sess)
	}
}
