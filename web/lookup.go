package web

import (
	"context"

	"github.com/gofiber/fiber/v2"
)

// FindByPath loads what the path parameter name identifies, with find (a
// Store's FindXByID). Errors: bad_request when the parameter is not an
// id (PathID), and find's own (not_found).
func FindByPath[T any](c *fiber.Ctx, name string, find func(context.Context, int64) (T, error)) (T, error) {
	id, err := PathID(c, name)
	if err != nil {
		var zero T
		return zero, err
	}
	return find(c.UserContext(), id)
}
