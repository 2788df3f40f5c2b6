// Package handlerstest builds the real app for the tests of handlers and
// its three packages (api, shop, console): New gives an App on a fresh
// database with a pinned clock and three API keys; Do sends a request and
// checks every API exchange against the OpenAPI document; ShopClient and
// Browser are a shopper and a console visitor that keep their cookies.
package handlerstest
