package static

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestVersionsFollowContent: a file's version changes when its content
// does and only then, whatever its name.
func TestVersionsFollowContent(t *testing.T) {
	before, err := Versions(fstest.MapFS{
		"css/app.css": {Data: []byte("body { color: black }")},
		"js/app.js":   {Data: []byte("console.log(1)")},
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := Versions(fstest.MapFS{
		"css/app.css": {Data: []byte("body { color: navy }")},
		"js/app.js":   {Data: []byte("console.log(1)")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if before["css/app.css"] == after["css/app.css"] {
		t.Errorf("changed css/app.css kept version %q", before["css/app.css"])
	}
	if got, want := after["js/app.js"], before["js/app.js"]; got != want {
		t.Errorf("unchanged js/app.js: version %q, want %q", got, want)
	}
	if len(before["js/app.js"]) != 12 {
		t.Errorf("version %q, want 12 hex digits", before["js/app.js"])
	}
}

// TestURL: the embedded files get versioned URLs; an unknown name keeps its
// plain one.
func TestURL(t *testing.T) {
	got := URL("css/app.css")
	if want := "/static/" + Version("css/app.css") + "/css/app.css"; got != want || Version("css/app.css") == "" {
		t.Errorf("URL(css/app.css) = %q, want %q", got, want)
	}
	if got := URL("img/favicon.svg"); !strings.HasSuffix(got, "/img/favicon.svg") || got == "/static/img/favicon.svg" {
		t.Errorf("URL(img/favicon.svg) = %q, want a versioned URL", got)
	}
	if got := URL("css/missing.css"); got != "/static/css/missing.css" {
		t.Errorf("URL(css/missing.css) = %q", got)
	}
}
