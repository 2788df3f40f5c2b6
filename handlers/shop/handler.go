// Package shop serves the storefront of SPEC §9 and §14 under /: the
// catalog, a pet's page, the cart with checkout, the confirmation, "My
// orders" and "Find an order", for shoppers known by a cookie. Handlers return errors; RenderError answers them in the shop's
// frame.
package shop

import (
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
	"petstore/web/browser"
)

// Handler serves the storefront's routes. Its fields are set once at start.
type Handler struct {
	Store *db.Store
	// Sessions keeps the shop's cookie (SessionName).
	Sessions *browser.Sessions
	// MaxOpenUnits is the most units one shopper may hold in open orders
	// (PETSTORE_SHOP_MAX_OPEN_UNITS); it must be positive.
	MaxOpenUnits int64
	// Metrics, when set, counts placed orders.
	Metrics *web.Metrics
	// FormLimit counts form posts per client address (browser.WebLimit), in
	// the bucket the console's sign-in shares.
	FormLimit fiber.Handler

	surface *web.Surface
	csrf    fiber.Handler
	// catalog and pets keep the catalog's and the pet pages' parts per
	// catalog version (catalogContent, petContent).
	catalog *rendered[renderedHTML]
	pets    *rendered[*petRendered]
	// pages keeps the catalog's whole pages as a browser without a
	// session gets them (newVisitorPage).
	pages *rendered[taggedPage]
}
