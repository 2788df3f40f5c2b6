package handlerstest

import (
	"testing"

	"petstore/web/browser/browsertest"
)

// Browser is a visitor of the test app, in the shop or the console: the
// kit's test browser (browsertest) with the app's own steps (sign-in,
// checkout, photo upload).
type Browser struct {
	*browsertest.Browser
	A *App
}

// Browser is a new visitor with no cookies.
func (a *App) Browser(t *testing.T) *Browser {
	return &Browser{Browser: browsertest.New(t, a.App), A: a}
}
