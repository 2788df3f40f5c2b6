package web

import (
	"sync/atomic"

	"github.com/gofiber/fiber/v2"
)

// Load counts the requests the app is answering, so that work done in the
// background (webhook deliveries) can give way to shoppers and programs
// while the shop is busy. Open streams (Route.Streaming) do not count:
// a staff dashboard left open is not load. The zero Load is ready; it is
// shared by the app (AppOptions.Load) and the work that reads it.
type Load struct {
	n atomic.Int64
}

// InFlight is how many requests are being answered now.
func (l *Load) InFlight() int64 {
	if l == nil {
		return 0
	}
	return l.n.Load()
}

type loadLocal struct{}

// Enter counts one more request in flight until leave is called (once).
func (l *Load) Enter() (leave func()) {
	l.n.Add(1)
	return func() { l.n.Add(-1) }
}

// track counts the request while it is answered.
func (l *Load) track(c *fiber.Ctx) error {
	leave := l.Enter()
	c.Locals(loadLocal{}, leave)
	err := c.Next()
	if c.Locals(loadLocal{}) != nil {
		leave()
	}
	return err
}

// leaveLoad takes a request that turned out to be a stream out of the
// count (markStreaming).
func leaveLoad(c *fiber.Ctx) {
	if leave, ok := c.Locals(loadLocal{}).(func()); ok {
		leave()
		c.Locals(loadLocal{}, nil)
	}
}
