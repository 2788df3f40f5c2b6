package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// decodeJSON reads the request body strictly into v (SPEC §2): JSON media
// type (415), at most 64 KiB (413), UTF-8, no unknown fields, no trailing
// data and the right JSON types (400).
func decodeJSON(c *fiber.Ctx, v any) error {
	mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || (mt != fiber.MIMEApplicationJSON && !strings.HasSuffix(mt, "+json")) {
		return db.Errorf(web.EUnsupportedMediaType, "The request body must be application/json.")
	}
	body := c.Body()
	if len(body) > web.MaxBody {
		return db.Errorf(web.EPayloadTooLarge, "The request body is larger than 64 KiB.")
	}
	if !utf8.Valid(body) {
		return web.BadRequest("The request body is not valid UTF-8.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return web.BadRequest("The request body has data after the JSON value.")
	}
	return checkMembers(body, v)
}

// checkMembers refuses what decoding lets through. encoding/json matches
// member names case-insensitively, so {"NAME": …} would pass for "name"
// (the document knows only the exact names: an unknown field is a 400);
// and it leaves a pointer field nil for null just as for an absent field,
// so `null` would pass as "no change" (PATCH) or "missing" (422), while the
// document allows null nowhere and SPEC §13 makes a wrong type a 400.
func checkMembers(body []byte, v any) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil || members == nil {
		return web.BadRequest("The request body must be a JSON object.")
	}
	known, nullable := jsonNames(v)
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	sort.Strings(names)
	var nulls []db.FieldError
	for _, name := range names {
		if known != nil && !known[name] {
			e := db.Errorf(db.EBadRequest, "Field %s is not part of this request.", name)
			e.Details = []db.FieldError{{Field: name, Message: "unknown field (names are case-sensitive)"}}
			return e
		}
		if string(members[name]) == "null" && !nullable[name] {
			nulls = append(nulls, db.FieldError{Field: name, Message: "must not be null"})
		}
	}
	if len(nulls) > 0 {
		e := db.Errorf(db.EBadRequest, "Field %s must not be null; leave it out instead.", nulls[0].Field)
		e.Details = nulls
		return e
	}
	return nil
}

// jsonNames is the set of member names v's struct type decodes, and those
// of them that take null (to clear a value); nil when v is not a struct.
func jsonNames(v any) (known, nullable map[string]bool) {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, nil
	}
	known, nullable = map[string]bool{}, map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
			continue
		case name == "":
			name = f.Name
		}
		known[name] = true
		if reflect.PointerTo(f.Type).Implements(nullClearer) {
			nullable[name] = true
		}
	}
	return known, nullable
}

// nullClearer is implemented by fields where null means "clear the value"
// (db.Nullable); every other field refuses null.
var nullClearer = reflect.TypeFor[interface{ NullClears() }]()

// jsonError explains a decoding failure without echoing Go types.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return web.BadRequest("The request body is empty.")
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF):
		return web.BadRequest("The request body is not well-formed JSON.")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			e := web.BadRequest("The request body must be a JSON object.")
			return e
		}
		e := db.Errorf(db.EBadRequest, "Field %s has the wrong type.", field)
		e.Details = []db.FieldError{{Field: field, Message: "must be " + jsonKind(typ.Type.Kind().String())}}
		return e
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		e := db.Errorf(db.EBadRequest, "Field %s is not part of this request.", field)
		e.Details = []db.FieldError{{Field: field, Message: "unknown field"}}
		return e
	default:
		return web.BadRequest("The request body is not valid JSON for this operation.")
	}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int64", "int", "int32":
		return "an integer"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "struct", "map":
		return "an object"
	case "slice":
		return "an array"
	}
	return fmt.Sprintf("of another type (%s)", goKind)
}
