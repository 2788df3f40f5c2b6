package openapi

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// Lint: what external linters and contract tools ask of the document
// (SPEC §17), so that a generated client can check every value before it
// sends it, not only read the rules in prose.

// methodNotAllowed is the one 405 answer every operation refers to.
const methodNotAllowed = "#/components/responses/MethodNotAllowed"

// lint lists what the document lacks: info.contact and info.license, the
// 405 answer on each operation, and a bound on every value a client sends
// (request bodies and parameters): maxLength on each string, a minimum
// and a maximum (or an int32/int64 format) on each integer. Enums get
// maxLength too, so the rule has no exception to remember.
func lint(doc *openapi3.T) []string {
	var problems []string
	report := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if c := doc.Info.Contact; c == nil || c.Name == "" || (c.URL == "" && c.Email == "") {
		report("info.contact: want a name and a url or an email")
	}
	if l := doc.Info.License; l == nil || l.Name == "" {
		report("info.license: want a name")
	}
	paths := doc.Paths.Map()
	for _, path := range sortedKeys(paths) {
		item := paths[path]
		ops := item.Operations()
		for _, method := range sortedKeys(ops) {
			op := ops[method]
			where := method + " " + path
			if r := op.Responses.Status(405); r == nil || r.Ref != methodNotAllowed {
				report("%s: no 405 response referring to %s", where, methodNotAllowed)
			}
			for _, p := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
				bound(report, fmt.Sprintf("%s: %s parameter %s", where, p.Value.In, p.Value.Name), p.Value.Schema, map[*openapi3.Schema]bool{})
			}
			if op.RequestBody == nil {
				continue
			}
			content := op.RequestBody.Value.Content
			for _, mt := range sortedKeys(content) {
				bound(report, fmt.Sprintf("%s: body (%s)", where, mt), content[mt].Schema, map[*openapi3.Schema]bool{})
			}
		}
	}
	return problems
}

// bound reports each string without maxLength and each integer without
// both ends of its range in the schema ref, following properties, items,
// additionalProperties and allOf, oneOf, anyOf. seen stops at a schema
// already walked on this path.
func bound(report func(string, ...any), where string, ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	defer delete(seen, s)
	switch {
	case s.Type.Is("string"):
		if s.MaxLength == nil {
			report("%s: a string without maxLength", where)
		}
	case s.Type.Is("integer"), s.Type.Is("number"):
		if s.Min == nil {
			report("%s: a number without minimum", where)
		}
		if s.Max == nil && s.Format != "int32" && s.Format != "int64" {
			report("%s: a number without maximum (or an int32/int64 format)", where)
		}
	}
	for _, name := range sortedKeys(s.Properties) {
		bound(report, where+"."+name, s.Properties[name], seen)
	}
	bound(report, where+"[]", s.Items, seen)
	bound(report, where+".*", s.AdditionalProperties.Schema, seen)
	for kind, refs := range map[string]openapi3.SchemaRefs{"allOf": s.AllOf, "oneOf": s.OneOf, "anyOf": s.AnyOf} {
		for i, r := range refs {
			bound(report, fmt.Sprintf("%s(%s %d)", where, kind, i), r, seen)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestLint loads the document as Load does, has kin-openapi validate it
// (examples against their schemas included), and lints it.
func TestLint(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(source)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("kin-openapi: %v", err)
	}
	for _, p := range lint(doc) {
		t.Error(p)
	}
	// The resume point of the event stream, which a client sends back as
	// it was given: its format is stated, not only described.
	p := mustOperation(t, doc, "GET", "/events").Parameters.GetByInAndName("header", "Last-Event-ID")
	if p == nil || p.Schema == nil || p.Schema.Value.Pattern == "" {
		t.Error("GET /events: header Last-Event-ID without a pattern")
	}
}

// TestLintCatches shows lint is not blind: a document that lost a bound,
// a 405 or its contact is reported, each where it happened.
func TestLintCatches(t *testing.T) {
	doc := mustLoad(t)
	if got := lint(doc); len(got) != 0 {
		t.Fatalf("the document itself has problems: %v", got)
	}
	doc.Info.Contact = nil
	mustOperation(t, doc, "GET", "/pets").Responses.Delete("405")
	quantity := doc.Components.Schemas["NewOrder"].Value.Properties["quantity"].Value
	quantity.Max = nil
	description := doc.Components.Schemas["NewCategory"].Value.Properties["description"].Value
	description.MaxLength = nil
	got := strings.Join(lint(doc), "\n")
	for _, want := range []string{
		"info.contact",
		"GET /pets: no 405",
		"POST /store/orders: body (application/json).quantity: a number without maximum",
		"POST /categories: body (application/json).description: a string without maxLength",
		"PUT /categories/{categoryId}: body (application/json).description: a string without maxLength",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lint did not report %q; it said:\n%s", want, got)
		}
	}
}
