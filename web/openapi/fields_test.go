package openapi

import (
	"strings"
	"testing"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"

	"petstore/db"
	"petstore/db/dbtest"
)

// The limits the document gives the texts a client sends, held to the
// store's own checks, as TestMoneySchemas does for amounts.

// textField is one text of a request body and the store's verdict on it.
type textField struct {
	name   string
	schema *openapi3.Schema
	takes  func(s string) bool // whether the store takes s in this field
	// exact: the document refuses s exactly when the store does. Else it
	// is only sound: it never refuses what the store takes (the store
	// checks more than a schema can say, such as a date in the future).
	exact bool
	// limit is the most characters the store keeps in the field, 0 when
	// its format decides its length.
	limit int
}

// refuses reports whether err, a Validate result, names field.
func refuses(err error, field string) bool {
	e, ok := err.(*db.Error)
	if err != nil && !ok {
		panic(err)
	}
	for _, d := range detailsOf(e) {
		if d.Field == field {
			return true
		}
	}
	return false
}

func detailsOf(e *db.Error) []db.FieldError {
	if e == nil {
		return nil
	}
	return e.Details
}

// textFields are the texts of the request bodies, each with the check of
// db that rules on it.
func textFields(t *testing.T, doc *openapi3.T) []textField {
	today := dbtest.Present(t)
	name, catID := "Rex", int64(1)
	prop := func(schema, field string) *openapi3.Schema {
		return doc.Components.Schemas[schema].Value.Properties[field].Value
	}
	pet := func(field string, in db.NewPet) bool {
		in.Name, in.CategoryID = &name, &catID
		return !refuses(in.Validate(today), field)
	}
	return []textField{
		{"Name (a category's)", doc.Components.Schemas["Name"].Value, func(s string) bool {
			return !refuses((&db.NewCategory{Name: &s}).Validate(), "name")
		}, true, db.MaxNameLen},
		{"Name (a pet's)", doc.Components.Schemas["Name"].Value, func(s string) bool {
			in := db.NewPet{Name: &s, CategoryID: &catID}
			return !refuses(in.Validate(today), "name")
		}, true, db.MaxNameLen},
		{"NewPet.breed", prop("NewPet", "breed"), func(s string) bool { return pet("breed", db.NewPet{Breed: db.Set(s)}) }, true, db.MaxNameLen},
		{"NewPet.description", prop("NewPet", "description"), func(s string) bool {
			return pet("description", db.NewPet{Description: db.Set(s)})
		}, true, db.MaxPetDescriptionLen},
		{"NewPet.birthDate", prop("NewPet", "birthDate"), func(s string) bool { return pet("birthDate", db.NewPet{BirthDate: db.Set(s)}) }, false, 0},
		{"NewPet.price", prop("NewPet", "price"), func(s string) bool { return pet("price", db.NewPet{Price: &s}) }, true, 0},
		{"NewCategory.description", prop("NewCategory", "description"), func(s string) bool {
			return !refuses((&db.NewCategory{Name: &name, Description: &s}).Validate(), "description")
		}, true, db.MaxDescriptionLen},
		{"NewOrder.shipDate", prop("NewOrder", "shipDate"), func(s string) bool {
			one := int64(1)
			_, err := (&db.NewOrder{PetID: &one, Quantity: &one, ShipDate: &s}).Validate()
			return !refuses(err, "shipDate")
		}, false, 0},
	}
}

// textSamples are the texts every field is tried with: each white space
// and control character alone, at either end and inside; dates and
// amounts, right and nearly right.
func textSamples() []string {
	var specials []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			specials = append(specials, r)
		}
	}
	// Neighbours that are neither, some of them looking like white space.
	specials = append(specials, '!', '~', 0xA1, 0x180E, 0x200B, 0x2027, 0x202A, 0x2060, 0xFEFF, 0x3001, 0x1F600, 0xE0001, unicode.MaxRune)
	samples := []string{"", "a", "Rex", " Rex ", "Golden Retriever", "Calm.\r\nLoves walks.\n"}
	for _, r := range specials {
		c := string(r)
		samples = append(samples, c, "a"+c, c+"a", "a"+c+"b", c+c+"ab"+c+c)
	}
	return append(samples, "2024-03-15", "2024-3-15", "2024-02-30", "1899-12-31", "0000-01-01", "+2024-03-15", "2024-03-15 ",
		"2026-12-01T10:00:00Z", "2026-12-01T10:00:00.123456789012345678901234567890Z", "2026-12-01T10:00:00+01:00",
		"2026-12-01T10:00:00,5Z", "2026-12-01t10:00:00z", "2026-12-01T10:00:00", "2026-12-01T24:00:00Z", "2026-12-01T10:00:00.Z", "2026-12-01 10:00:00Z",
		"129", "129.5", "129.50", "9999999.99", "12345678", "1.234", "-1")
}

// lengthSamples are texts around a field's limit, bare and padded with
// white space the store trims, in scripts of one, two and three bytes a
// character, and beyond the BMP where the field's maxLength leaves room:
// kin-openapi counts UTF-16 units, two per such character, where JSON
// Schema and the store count one (see TestTextSchemasFollowTheStore).
func lengthSamples(f textField) []string {
	if f.limit == 0 {
		return nil
	}
	var samples []string
	for _, n := range []int{f.limit - 1, f.limit, f.limit + 1} {
		for _, unit := range []string{"x", "é", "中"} {
			s := strings.Repeat(unit, n)
			samples = append(samples, s, " "+s+" ", "\u3000"+s+"\r\n", "a"+strings.Repeat(" ", n-2)+"b")
		}
		if astral := min(n, int(*f.schema.MaxLength)/2-1); astral > 0 {
			s := strings.Repeat("😀", astral)
			samples = append(samples, s, " "+s+"\u00A0")
		}
	}
	return append(samples, "x"+strings.Repeat(" ", f.limit+1), strings.Repeat("\u2003", f.limit+1)+"x")
}

// TestTextSchemasFollowTheStore: for every text a client sends, the
// document never refuses what the store takes (else the document would be
// false, and a client checking it would refuse good values), and for the
// names, descriptions and amounts it refuses exactly what the store does.
// Lengths count Unicode code points, as JSON Schema and the store do;
// kin-openapi counts UTF-16 units, two per character outside the BMP, so
// the samples keep such characters to half a field's maxLength (which
// only a category's description, of at most 500, reaches).
func TestTextSchemasFollowTheStore(t *testing.T) {
	doc := mustLoad(t)
	for _, schema := range []string{"NewPet", "NewCategory", "NewApiKey", "ApiKeyUpdate"} {
		if got := doc.Components.Schemas[schema].Value.Properties["name"].Ref; got != "#/components/schemas/Name" {
			t.Errorf("%s.name is %q, want a $ref to Name, the one name rule", schema, got)
		}
	}
	samples := textSamples()
	for _, f := range textFields(t, doc) {
		for _, s := range append(lengthSamples(f), samples...) {
			// The comma before a fraction of a second is Go's leniency
			// (time.Parse takes it), not RFC 3339's, whose date-time
			// format the document names.
			if f.name == "NewOrder.shipDate" && strings.Contains(s, ",") {
				continue
			}
			docTakes := f.schema.VisitJSON(s) == nil
			storeTakes := f.takes(s)
			switch {
			case storeTakes && !docTakes:
				t.Errorf("%s: the store takes %+q, the document refuses it", f.name, s)
			case f.exact && docTakes && !storeTakes:
				t.Errorf("%s: the document takes %+q, the store refuses it", f.name, s)
			}
		}
	}
}
