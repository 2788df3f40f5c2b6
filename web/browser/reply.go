package browser

import (
	"github.com/gofiber/fiber/v2"

	"petstore/views/components"
	"petstore/web"
)

// Partial reports whether to answer with a fragment: an htmx request that
// is not a history restore (which needs the whole page).
func Partial(c *fiber.Ctx) bool {
	return web.IsHTMX(c) && c.Get("HX-History-Restore-Request") != "true"
}

// Reply is how a form post ends, in the shop and the console alike, so
// that every form works with htmx and without JavaScript:
//
//   - htmx (Partial) with a Fragment: the fragment in place, with Status
//     (200 when 0). The fragment shows the message itself.
//   - htmx without a Fragment, with HXRedirect: HX-Redirect to To and 200,
//     so htmx loads To as a whole page (a 303 would be followed inside the
//     request and swapped into the page).
//   - anything else (a plain form): a 303 to To (Post/Redirect/Get).
//
// When the browser goes on to To, Flash waits there in Flashes. A session
// the post wrote to (Session.Set, Delete) is saved before the answer,
// whichever it is, and only such a session.
type Reply struct {
	// To is the page the browser goes to next.
	To string
	// Flash is the message for the page To; none when its Text is "".
	Flash components.Flash
	// Flashes is where Flash waits for the page To.
	Flashes Flashes
	// Fragment renders htmx's answer; Status is its status.
	Fragment func() error
	Status   int
	// HXRedirect sends htmx without a Fragment to To as a whole page;
	// otherwise it gets the 303 a plain form gets.
	HXRedirect bool
}

// Send answers the post as r says, with the request's session sess.
func (r Reply) Send(c *fiber.Ctx, sess *Session) error {
	partial := Partial(c)
	fragment := partial && r.Fragment != nil
	if !fragment && r.Flash.Text != "" {
		r.Flashes.Add(sess, r.Flash)
	}
	if err := sess.saveWritten(); err != nil {
		return err
	}
	switch {
	case fragment:
		if r.Status != 0 {
			c.Status(r.Status)
		}
		return r.Fragment()
	case partial && r.HXRedirect:
		c.Set("HX-Redirect", r.To)
		return c.SendStatus(fiber.StatusOK)
	}
	return c.Redirect(r.To, fiber.StatusSeeOther)
}

// saveWritten saves the session when a value was set or deleted since it
// was last saved.
func (s *Session) saveWritten() error {
	if !s.written {
		return nil
	}
	return s.Save()
}
