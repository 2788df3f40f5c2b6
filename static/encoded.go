package static

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"path"
	"sync"

	"github.com/andybalholm/brotli"
)

// Encoded returns the file name of Assets compressed in coding ("br" or
// "gzip") at a high level (brotli 9, gzip 9), made once per file and
// coding and kept: the assets never change while the server runs, so the
// slow level is paid once, not per request (the server's own compression
// of answers runs at the fastest level: a page's stylesheet came 40%
// larger). ok is false for a coding or a file that is not worth it: only
// stylesheets, scripts and SVG are text, and a file over maxEncoded (the
// API docs' 1.7 MB script) would hold its first request for seconds; it is
// compressed as it is sent, as before.
func Encoded(name, coding string) (b []byte, ok bool) {
	if coding != "br" && coding != "gzip" {
		return nil, false
	}
	switch path.Ext(name) {
	case ".css", ".js", ".svg":
	default:
		return nil, false
	}
	if st, err := fs.Stat(Assets(), name); err != nil || st.Size() > maxEncoded {
		return nil, false
	}
	v, _ := encodedFiles.LoadOrStore(coding+" "+name, sync.OnceValues(func() ([]byte, error) {
		return encode(name, coding)
	}))
	b, err := v.(func() ([]byte, error))()
	return b, err == nil
}

// encodedFiles holds, by "coding name", the function that makes (once)
// and returns a file's compressed bytes.
var encodedFiles sync.Map

// maxEncoded is the largest file Encoded compresses ahead.
const maxEncoded = 512 << 10

// brotliLevel is the brotli quality of Encoded: 9 makes a bundle 2% larger
// than 11 (the best) in a tenth of the time.
const brotliLevel = 9

// encode compresses a file of Assets.
func encode(name, coding string) ([]byte, error) {
	raw, err := fs.ReadFile(Assets(), name)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if coding == "br" {
		w := brotli.NewWriterLevel(&buf, brotliLevel)
		if _, err := w.Write(raw); err != nil {
			return nil, err
		}
		err = w.Close()
		return buf.Bytes(), err
	}
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	err = w.Close()
	return buf.Bytes(), err
}

// Encoded is the method web.StaticAssets looks for on the assets it
// serves.
func (withBundles) Encoded(name, coding string) ([]byte, bool) { return Encoded(name, coding) }
