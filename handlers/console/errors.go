package console

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// renderError is the console's error renderer (web.ErrorRenderer) once
// RequireStaff has found the user: the error in the console's layout,
// its navigation kept, and for a clerk refused an admin page the admins
// to ask by name. Before sign-in, for htmx, for JSON and on an outage
// (the navigation's pages would fail too) it is RenderError's plain page.
func (h *Handler) renderError(c *fiber.Ctx, p web.Problem) error {
	u := currentStaff(c)
	if u == nil || web.IsHTMX(c) || web.WantsJSON(c) || p.Outage {
		return RenderError(c, p)
	}
	v := view.ErrorView{ErrorView: views.ErrorView{Status: p.Status, Message: p.Message, RequestID: p.RequestID, Console: true}}
	if p.Status == fiber.StatusServiceUnavailable && c.Method() == fiber.MethodGet && strings.HasPrefix(c.OriginalURL(), Prefix) {
		v.RetryURL = c.OriginalURL()
	}
	if p.Status == fiber.StatusForbidden && !u.IsAdmin() {
		v.Ask = h.whoToAsk(c)
	}
	ch := view.Chrome{Title: views.ErrorTitle(p.Status), User: u.Username, Admin: u.IsAdmin(), CSRF: browser.CSRFToken(c)}
	return web.Render(c, view.ErrorPage(ch, v))
}

// maxAdminsNamed is how many admins a 403 page names.
const maxAdminsNamed = 3

// whoToAsk names the enabled admins a clerk can ask for what an admin page
// does; "" when they cannot be read (the page still says what is wrong).
func (h *Handler) whoToAsk(c *fiber.Ctx) string {
	users, err := h.Store.FindStaffUsers(c.UserContext())
	if err != nil {
		return ""
	}
	var names []string
	for _, u := range users {
		if u.Role == db.RoleAdmin && !u.Disabled() && len(names) < maxAdminsNamed {
			names = append(names, u.Username)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "An admin can do this for you, or make you an admin: ask " + strings.Join(names, ", ") + "."
}
