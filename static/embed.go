// Package static holds the browser assets served under /static/: the vendored
// front-end packages (vendor/, fetched by vendor.sh and committed), the store's
// stylesheet (css/) and its scripts (js/).
package static

import "embed"

// FS holds vendor/, css/ and js/, with paths as in this directory
// ("vendor/htmx.min.js", "js/docs.js"); serve it under /static/.
//
//go:embed vendor css js
var FS embed.FS
