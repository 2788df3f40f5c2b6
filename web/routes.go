package web

import (
	"reflect"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// Route is one line of the route table: the method, the Fiber path
// template, the chain that serves it, and what the app core must know of
// the route beside its chain: the body it takes and whether it answers
// with a stream. Each audience (the API, the shop, the console) turns its
// own options into a Route; no other file describes a route by its path.
type Route struct {
	Method string
	// Path is the whole template, prefix included ("/api/pets/:petId").
	Path     string
	Handlers []fiber.Handler
	// Body is the request body the route takes (its zero value: at most
	// MaxBody, read into memory). ReadBody, where the audience's chain
	// places it, applies it.
	Body Body
	// Streaming routes answer with a stream that stays open (an event
	// stream): never compressed, never buffered.
	Streaming bool
}

// Routes is the app's route table as registered. It registers each line
// with Fiber (a GET also answers HEAD, as fiber.Router.Get does), binds
// the line's Body to its chain's ReadBody, and keeps what the parts
// outside the chains need: the largest body any route takes (the header
// hook's ceiling) and the methods each path template has (405).
type Routes struct {
	app *fiber.App
	// ceiling is the largest body any route takes.
	ceiling int64
	// methods lists, per path template, the methods registered for it,
	// in the order the templates were added (templates).
	methods   map[string][]string
	templates []string
}

// Add registers r. Call it while the app is built, before it serves.
func (t *Routes) Add(r Route) {
	hs := r.Body.bind(r.Handlers)
	if r.Streaming {
		hs = append([]fiber.Handler{markStreaming}, hs...)
	}
	t.app.Add(r.Method, r.Path, hs...)
	t.ceiling = max(t.ceiling, r.Body.limit())
	if t.methods == nil {
		t.methods = map[string][]string{}
	}
	if _, ok := t.methods[r.Path]; !ok {
		t.templates = append(t.templates, r.Path)
	}
	t.methods[r.Path] = append(t.methods[r.Path], r.Method)
	if r.Method == fiber.MethodGet {
		t.app.Add(fiber.MethodHead, r.Path, hs...)
		t.methods[r.Path] = append(t.methods[r.Path], fiber.MethodHead)
	}
}

// isReadBody reports whether h is ReadBody, the step a chain places.
func isReadBody(h fiber.Handler) bool {
	return reflect.ValueOf(h).Pointer() == reflect.ValueOf(ReadBody).Pointer()
}

type streamingLocal struct{}

// markStreaming tells the app's middleware (Compress) that the route
// answers with a stream, and takes the request out of the Load.
func markStreaming(c *fiber.Ctx) error {
	c.Locals(streamingLocal{}, true)
	leaveLoad(c)
	return c.Next()
}

// IsStreaming reports whether the request's route answers with a stream
// (Route.Streaming).
func IsStreaming(c *fiber.Ctx) bool {
	s, _ := c.Locals(streamingLocal{}).(bool)
	return s
}

// MethodFallback ends the chain of an audience's Fallback: a path some
// route has under other methods is 405 with those as Allow (HEAD beside
// GET), any other 404 with notFound (SPEC §2).
func (t *Routes) MethodFallback(notFound string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		allow := slices.Clone(t.methods[c.Route().Path])
		if len(allow) == 0 {
			return db.Errorf(db.ENotFound, "%s", notFound)
		}
		slices.Sort(allow)
		list := strings.Join(slices.Compact(allow), ", ")
		c.Set(fiber.HeaderAllow, list)
		return db.Errorf(EMethodNotAllowed, "%s is not allowed here; allowed: %s.", c.Method(), list)
	}
}

// FallbackName names the routes Fallback adds for the methods a path
// template lacks: whoever lists the app's routes (app.GetRoutes) tells
// them from the table's by it.
const FallbackName = "fallback"

// Fallback answers the requests under prefix that no route took, with
// handlers: an audience's chain ending in its 404, or MethodFallback. Add
// it after the audience's routes. Fiber routes a method by its own tree,
// so a path a route has under other methods would otherwise fall through
// to the prefix like any unknown path: each template under prefix gets
// the chain for every method it lacks, which Fiber tries after the
// template's own routes (MethodFallback then knows the template it
// matched).
func (t *Routes) Fallback(prefix string, handlers []fiber.Handler) {
	for _, template := range t.templates {
		if !strings.HasPrefix(template, prefix) {
			continue
		}
		for _, m := range fiber.DefaultMethods {
			if !slices.Contains(t.methods[template], m) {
				t.app.Add(m, template, handlers...).Name(FallbackName)
			}
		}
	}
	args := []any{prefix}
	for _, h := range handlers {
		args = append(args, h)
	}
	t.app.Use(args...)
}
