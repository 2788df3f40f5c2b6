package web

import (
	"context"
	"io"
	"testing"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"
)

// text is a templ component that writes s.
func text(s string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	})
}

// TestRender: a page is HTML in UTF-8, the whole layout normally and the
// bare partial when htmx asks (HX-Request: true); a page without a
// partial is whole either way.
func TestRender(t *testing.T) {
	app := newTestApp(t, AppOptions{}, func(r *Routes) {
		r.Add(route("GET", "/page", func(c *fiber.Ctx) error { return RenderPage(c, text("<html>full</html>"), text("<p>partial</p>")) }))
		r.Add(route("GET", "/whole", func(c *fiber.Ctx) error { return Render(c, text("<html>full</html>")) }))
	})
	for _, tc := range []struct {
		path, hx, want string
	}{
		{"/page", "", "<html>full</html>"},
		{"/page", "true", "<p>partial</p>"},
		{"/page", "false", "<html>full</html>"},
		{"/whole", "true", "<html>full</html>"},
	} {
		t.Run(tc.path+" HX-Request "+tc.hx, func(t *testing.T) {
			a := get(t, app, tc.path, "HX-Request", tc.hx)
			if got := [2]string{a.Header.Get(fiber.HeaderContentType), string(a.Body)}; got != [2]string{fiber.MIMETextHTMLCharsetUTF8, tc.want} {
				t.Errorf("answer %q, want %q", got, [2]string{fiber.MIMETextHTMLCharsetUTF8, tc.want})
			}
		})
	}
}
