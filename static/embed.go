// Package static holds the browser assets served under /static/: the vendored
// front-end packages (vendor/, fetched by vendor.sh and committed), the store's
// stylesheet (css/), its scripts (js/) and images (img/: the favicon).
package static

import "embed"

// FS holds vendor/, css/, js/ and img/, with paths as in this directory
// ("vendor/htmx.min.js", "js/docs.js"); serve it under /static/. Pages link
// to its files by URL, which names each file's version.
//
//go:embed vendor css js img
var FS embed.FS
