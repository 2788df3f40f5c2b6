// Package handlerstest builds the real app for the tests of handlers and
// its three packages (api, shop, console): New gives an App on a fresh
// database with a pinned clock and three API keys; Do sends a request and
// checks every API exchange against the OpenAPI document; Browser (a
// shopper from Shopper, staff from SignedIn) is the browser kit's test
// browser (web/browser/browsertest) with the app's own steps.
package handlerstest
