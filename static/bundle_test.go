package static

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

// TestMinifyCSS: comments, indentation and line breaks go; strings,
// licence comments and the spaces that mean something stay.
func TestMinifyCSS(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/* a note */\n.a {\n  color: red;\n}\n", ".a{color: red;}"},
		{".a .b > .c {margin: 0 auto}", ".a .b > .c{margin: 0 auto}"},
		{".a/**/.b{}", ".a.b{}"},
		{`.x::before { content: "/* not a comment */  two  spaces"; }`, `.x::before{content: "/* not a comment */  two  spaces";}`},
		{`.q::after{content:'it\'s { }'}`, `.q::after{content:'it\'s { }'}`},
		{"/*! licence */\n.a{}", "/*! licence */\n.a{}"},
		{"\xef\xbb\xbf.a{}", ".a{}"},
		{"@media (max-width: 600px) {\n  .a { top: 0 }\n}", "@media (max-width: 600px){.a{top: 0}}"},
		{"/* unterminated", ""},
	} {
		if got := string(MinifyCSS([]byte(c.in))); got != c.want {
			t.Errorf("MinifyCSS(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestBundles: each bundle is its parts, minified, in order; every
// stylesheet of css/ belongs to a bundle (pages link bundles only, so a
// file outside every bundle would never reach a page); a bundle is served
// by Assets and has a versioned URL of its own.
func TestBundles(t *testing.T) {
	inBundle := map[string]bool{}
	for _, name := range []string{ShopCSS, ConsoleCSS} {
		parts := BundleParts(name)
		if len(parts) == 0 || parts[0] != "vendor/pico.min.css" {
			t.Fatalf("%s starts with %v, want Pico first", name, parts)
		}
		var want bytes.Buffer
		for _, p := range parts {
			inBundle[p] = true
			b, err := fs.ReadFile(FS, p)
			if err != nil {
				t.Fatal(err)
			}
			want.Write(MinifyCSS(b))
			want.WriteByte('\n')
		}
		f, err := Assets().Open(name)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		got, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat()
		if err != nil || st.Size() != int64(len(got)) || st.IsDir() {
			t.Errorf("%s: stat %v, %v", name, st, err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: %d bytes served, want its %d parts' %d", name, len(got), len(parts), want.Len())
		}
		if s, ok := f.(io.Seeker); !ok {
			t.Errorf("%s cannot seek", name)
		} else if _, err := s.Seek(0, io.SeekStart); err != nil {
			t.Errorf("%s: seek: %v", name, err)
		}
		if u := URL(name); u != "/static/"+Version(name)+"/"+name || Version(name) == "" || Version(name) != version(got) {
			t.Errorf("URL(%s) = %q, version %q", name, u, Version(name))
		}
	}
	err := fs.WalkDir(FS, "css", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".css") && !inBundle[p] {
			t.Errorf("%s is in no bundle, so no page loads it", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Assets().Open("js/shop.js"); err != nil {
		t.Errorf("Assets lost FS's files: %v", err)
	}
}

// TestEncoded: a text asset compressed in either coding decodes to the
// asset, and is smaller; other files and codings have none.
func TestEncoded(t *testing.T) {
	for _, name := range []string{ShopCSS, "js/shop.js"} {
		raw, err := fs.ReadFile(Assets(), name)
		if err != nil {
			t.Fatal(err)
		}
		for coding, reader := range map[string]func([]byte) (io.Reader, error){
			"br":   func(b []byte) (io.Reader, error) { return brotli.NewReader(bytes.NewReader(b)), nil },
			"gzip": func(b []byte) (io.Reader, error) { return gzip.NewReader(bytes.NewReader(b)) },
		} {
			b, ok := Encoded(name, coding)
			if !ok || len(b) >= len(raw) {
				t.Fatalf("%s in %s: %d bytes, %v", name, coding, len(b), ok)
			}
			r, err := reader(b)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(got, raw) {
				t.Errorf("%s in %s decodes to %d bytes (%v), want %d", name, coding, len(got), err, len(raw))
			}
			if again, _ := Encoded(name, coding); &again[0] != &b[0] {
				t.Errorf("%s in %s was compressed twice", name, coding)
			}
		}
	}
	for _, c := range [][2]string{{"img/favicon.svg", "zstd"}, {"vendor/htmx.LICENSE", "br"}, {"css/missing.css", "gzip"},
		{"vendor/swagger-ui-bundle.js", "br"}} {
		if _, ok := Encoded(c[0], c[1]); ok {
			t.Errorf("Encoded(%s, %s) is ok", c[0], c[1])
		}
	}
}
