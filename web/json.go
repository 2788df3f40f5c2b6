package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// DecodeJSON reads the request body strictly into v (SPEC §2): JSON media
// type (415), at most 64 KiB (413), UTF-8, no unknown fields, no trailing
// data and the right JSON types (400).
func DecodeJSON(c *fiber.Ctx, v any) error {
	mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || (mt != fiber.MIMEApplicationJSON && !strings.HasSuffix(mt, "+json")) {
		return db.Errorf(db.EUnsupportedMediaType, "The request body must be application/json.")
	}
	body := c.Body()
	if len(body) > MaxBody {
		return db.Errorf(db.EPayloadTooLarge, "The request body is larger than 64 KiB.")
	}
	if !utf8.Valid(body) {
		return BadRequest("The request body is not valid UTF-8.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return BadRequest("The request body has data after the JSON value.")
	}
	return nil
}

// jsonError explains a decoding failure without echoing Go types.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return BadRequest("The request body is empty.")
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF):
		return BadRequest("The request body is not well-formed JSON.")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			e := BadRequest("The request body must be a JSON object.")
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
		return BadRequest("The request body is not valid JSON for this operation.")
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
