package browser_test

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"petstore/views/components"
	"petstore/web/browser"
)

// flashRoutes add and take messages of the queues named in the path:
// POST /flash/{queue} adds the form's kind and text, GET /take/{queue}
// answers "kind:text" lines of what it took.
func flashRoutes(s *browser.Sessions, queues map[string]browser.Flashes) func(fiber.Router) {
	return func(r fiber.Router) {
		r.Post("/flash/:queue", withSession(s, func(c *fiber.Ctx, sess *browser.Session) error {
			queues[c.Params("queue")].Add(sess, components.Flash{Kind: c.FormValue("kind"), Text: c.FormValue("text")})
			return sess.Save()
		}))
		r.Get("/take/:queue", withSession(s, func(c *fiber.Ctx, sess *browser.Session) error {
			list, err := queues[c.Params("queue")].Take(sess)
			if err != nil {
				return err
			}
			var lines []string
			for _, f := range list {
				lines = append(lines, f.Kind+":"+f.Text)
			}
			return c.SendString(strings.Join(lines, "\n"))
		}))
	}
}

// TestFlashes: messages wait in the session until a page takes them, once;
// a queue keeps its newest Keep (one when Keep is 0), so a script posting
// without loading a page cannot grow the cookie; queues of different keys
// do not mix.
func TestFlashes(t *testing.T) {
	s := browser.NewSessions([][]byte{secret})
	queues := map[string]browser.Flashes{
		"page":   testFlashes,
		"one":    {Key: "one"},
		"photos": {Key: "photos", Keep: 1},
	}
	b := visitor(t, newKit(t, s, flashRoutes(s, queues)))
	add := func(queue, kind, text string) {
		t.Helper()
		b.Post("/flash/"+queue, url.Values{"kind": {kind}, "text": {text}}).WantStatus(http.StatusOK)
	}
	take := func(queue string) []string {
		t.Helper()
		body := b.Get("/take/" + queue).WantStatus(http.StatusOK).Body
		if body == "" {
			return nil
		}
		return strings.Split(body, "\n")
	}

	for i := range 50 {
		add("page", components.FlashSuccess, "message "+strconv.Itoa(i))
	}
	add("page", components.FlashError, "the last | with a bar")
	add("photos", components.FlashError, "a photo was refused")
	got := take("page")
	want := []string{"success:message 48", "success:message 49", "error:the last | with a bar"}
	if !slices.Equal(got, want) {
		t.Errorf("the page queue gave %q, want the newest 3: %q", got, want)
	}
	if got := take("page"); got != nil {
		t.Errorf("taken twice: %q", got)
	}
	if got := take("photos"); !slices.Equal(got, []string{"error:a photo was refused"}) {
		t.Errorf("the photos queue gave %q", got)
	}

	add("one", components.FlashSuccess, "first")
	add("one", components.FlashSuccess, "second")
	if got := take("one"); !slices.Equal(got, []string{"success:second"}) {
		t.Errorf("a queue that keeps one gave %q, want the newest", got)
	}
}
