// Package openapi holds the API's contract: the hand-written OpenAPI 3.0.3
// document (openapi.yaml, embedded), its JSON form as served at
// GET /api/openapi.json, and a Validator that tests use to check every request
// and response they see against it, so code and document cannot drift.
package openapi

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

//go:embed openapi.yaml
var source []byte

// DefaultSunset is the x-sunset of the deprecated GET /pets/{petId} as written
// in openapi.yaml (SPEC §7); DocumentWithSunset replaces it.
var DefaultSunset = time.Date(2027, time.June, 30, 0, 0, 0, 0, time.UTC)

// deprecatedPath and deprecatedMethod name the operation carrying x-sunset.
const (
	deprecatedPath   = "/pets/{petId}"
	deprecatedMethod = "GET"
)

var (
	docOnce sync.Once
	docJSON []byte
	docErr  error
)

// YAML returns the embedded document as written.
func YAML() []byte { return source }

// Load parses and validates the embedded document. Each call returns a fresh
// *openapi3.T, so callers may change it.
func Load() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(source)
	if err != nil {
		return nil, fmt.Errorf("openapi: load: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi: validate: %w", err)
	}
	return doc, nil
}

// Document returns the document as JSON, converted from the embedded YAML once
// and cached; callers must not modify the slice. Its x-sunset is DefaultSunset;
// see DocumentWithSunset.
func Document() ([]byte, error) {
	docOnce.Do(func() {
		var doc *openapi3.T
		if doc, docErr = Load(); docErr == nil {
			docJSON, docErr = marshal(doc)
		}
	})
	return docJSON, docErr
}

// DocumentWithSunset returns the document as JSON with the x-sunset of the
// deprecated GET /pets/{petId} set to sunset (RFC 3339, UTC), so the served
// document stays true when PETSTORE_SUNSET is set. Call it once at start-up and
// keep the bytes. The last answer is kept: a process builds its app once, a
// test process hundreds of times with the same sunset, and parsing the
// document is most of building an app.
func DocumentWithSunset(sunset time.Time) ([]byte, error) {
	if sunset.IsZero() || sunset.Equal(DefaultSunset) {
		return Document()
	}
	lastSunset.Lock()
	defer lastSunset.Unlock()
	if lastSunset.doc != nil && lastSunset.at.Equal(sunset) {
		return lastSunset.doc, nil
	}
	doc, err := documentWithSunset(sunset)
	if err != nil {
		return nil, err
	}
	lastSunset.at, lastSunset.doc = sunset, doc
	return doc, nil
}

// lastSunset is DocumentWithSunset's last answer; callers must not modify
// the slice.
var lastSunset struct {
	sync.Mutex
	at  time.Time
	doc []byte
}

func documentWithSunset(sunset time.Time) ([]byte, error) {
	doc, err := Load()
	if err != nil {
		return nil, err
	}
	op, err := deprecatedOperation(doc)
	if err != nil {
		return nil, err
	}
	if op.Extensions == nil {
		op.Extensions = map[string]any{}
	}
	op.Extensions["x-sunset"] = sunset.UTC().Format(time.RFC3339)
	return marshal(doc)
}

// marshal encodes doc as compact JSON. kin-openapi's own encoding escapes <, >
// and & as \u003c and so on; the descriptions are Markdown full of <…> links, so
// the result is decoded once more and re-encoded without that escaping.
func marshal(doc *openapi3.T) ([]byte, error) {
	escaped, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: encode: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(escaped))
	dec.UseNumber() // keep 1000000 from becoming 1e+06
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("openapi: re-decode: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tree); err != nil {
		return nil, fmt.Errorf("openapi: encode: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// deprecatedOperation finds GET /pets/{petId} in doc.
func deprecatedOperation(doc *openapi3.T) (*openapi3.Operation, error) {
	item := doc.Paths.Value(deprecatedPath)
	if item == nil {
		return nil, fmt.Errorf("openapi: path %s missing", deprecatedPath)
	}
	op := item.GetOperation(deprecatedMethod)
	if op == nil {
		return nil, fmt.Errorf("openapi: operation %s %s missing", deprecatedMethod, deprecatedPath)
	}
	return op, nil
}
