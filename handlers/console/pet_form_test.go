package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

// The pet form's shop fields of SPEC §14 (price, description, breed,
// birth date), on both databases: stored, refused with a message beside
// the field (the typed values kept), cleared when blank, kept when the
// form does not send them.
func TestConsolePetSellingFields(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		a.Store.Currency = "CHF" // the form shows the store's currency, whichever it is
		b := a.SignedIn(t)
		ctx := context.Background()
		cat := a.SeedPet("Seed", 1).CategoryID
		today := a.Clock.Now().UTC().Format(time.DateOnly)
		tomorrow := a.Clock.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
		born := a.Clock.Now().UTC().AddDate(-2, 0, -10).Format(time.DateOnly)
		// long is 2,000 characters typed in lines, which the browser sends
		// with CRLF breaks: 2,400 bytes.
		long := strings.Repeat("abcd\r\n", 400)
		longStored := strings.TrimSpace(strings.ReplaceAll(long, "\r\n", "\n"))
		form := func(kv ...string) url.Values {
			f := url.Values{"name": {"Rex"}, "categoryId": {handlerstest.Itoa(cat)}, "status": {"available"},
				"price": {"129.5"}, "description": {"Calm.\r\nLoves walks."}, "breed": {"Beagle"}, "birthDate": {born}}
			for i := 0; i+1 < len(kv); i += 2 {
				f.Set(kv[i], kv[i+1])
			}
			return f
		}
		value := func(p *browsertest.Page, id string) string {
			if id == "description" {
				return p.Find("#description").Text()
			}
			return p.Find("#"+id).AttrOr("value", "")
		}

		t.Run("the new form", func(t *testing.T) {
			p := b.Get("/staff/pets/new").WantStatus(http.StatusOK)
			price := p.Find("#price")
			if price.AttrOr("inputmode", "") != "decimal" || price.AttrOr("type", "") != "text" || price.AttrOr("pattern", "") != `\d{1,7}(\.\d{1,2})?` {
				t.Errorf("price input = %v", price.Nodes[0].Attr)
			}
			p.WantText("price-currency", "CHF")
			if got := p.Find("#birthDate").AttrOr("max", ""); got != today {
				t.Errorf("birth date max = %q, want the store clock's today %q", got, today)
			}
			if got := p.Find("#description").AttrOr("maxlength", ""); got != "2000" {
				t.Errorf("description maxlength = %q", got)
			}
		})

		var id int64
		t.Run("create stores every field", func(t *testing.T) {
			p := b.Post("/staff/pets", form()).WantRedirect("/staff/catalog")
			p = b.Follow(p)
			row := p.Find(`[data-testid="pet-row"]`).Last()
			id = mustAtoi(t, row.AttrOr("data-pet-id", ""))
			if got := browsertest.Text(row.Find(`[data-testid="pet-price"]`)); got != "CHF 129.50" {
				t.Errorf("catalog price = %q", got)
			}
			if got := browsertest.Text(row.Find(`[data-testid="pet-breed"]`)); got != "Beagle" {
				t.Errorf("catalog breed = %q", got)
			}
			wantPet(t, a, id, 12950, ptr("Calm.\nLoves walks."), ptr("Beagle"), &born)
		})
		t.Run("edit shows and saves them", func(t *testing.T) {
			p := b.Get("/staff/pets/" + handlerstest.Itoa(id) + "/edit").WantStatus(http.StatusOK)
			for field, want := range map[string]string{"price": "129.50", "breed": "Beagle", "birthDate": born, "description": "Calm.\nLoves walks."} {
				if got := value(p, field); got != want {
					t.Errorf("%s shows %q, want %q", field, got, want)
				}
			}
			// Born today is not in the future; 2,000 characters typed in
			// lines fit, though the browser sends each break as CRLF.
			b.Post("/staff/pets/"+handlerstest.Itoa(id), form("price", " 1250 ", "birthDate", today, "breed", "Mixed", "description", long)).
				WantRedirect("/staff/catalog")
			wantPet(t, a, id, 125000, &longStored, ptr("Mixed"), &today)
			if got := browsertest.Text(b.Get("/staff/catalog").Find(`[data-pet-id="` + handlerstest.Itoa(id) + `"] [data-testid="pet-price"]`)); got != "CHF 1,250.00" {
				t.Errorf("catalog price = %q", got)
			}
		})
		t.Run("invalid values come back beside their field", func(t *testing.T) {
			money := `must be an amount like "129.00": up to 7 digits, then at most 2 decimals`
			for _, tc := range []struct {
				field, value, msg string
			}{
				{"price", "12.345", money},
				{"price", "abc", money},
				{"price", "-1", money},
				{"price", "12345678", money},
				{"price", "", "is required: 0.00 for no fee"},
				{"description", "Calm.\x01", "must not contain control characters other than line breaks"},
				{"description", "Calm.\x1b[2J", "must not contain control characters other than line breaks"},
				{"description", strings.Repeat("é", 2001), "must be at most 2000 characters"},
				{"breed", strings.Repeat("b", 101), "must be at most 100 characters"},
				{"breed", "Bea\tgle", "must not contain control characters"},
				{"birthDate", tomorrow, "must not be in the future"},
				{"birthDate", "1899-12-31", "must be 1900-01-01 or later"},
				{"birthDate", "2020-02-30", "must be a date as YYYY-MM-DD"},
			} {
				for _, path := range []string{"/staff/pets", "/staff/pets/" + handlerstest.Itoa(id)} {
					p := b.Post(path, form(tc.field, tc.value, "name", "Rexy")).WantStatus(http.StatusUnprocessableEntity)
					if got := browsertest.Text(p.ID("error-" + tc.field + "-error")); got != tc.msg {
						t.Errorf("POST %s %s=%q: message %q, want %q", path, tc.field, short(tc.value), got, tc.msg)
					}
					if inv := p.Find("#"+tc.field).AttrOr("aria-invalid", ""); inv != "true" {
						t.Errorf("POST %s %s=%q: the field is not marked invalid", path, tc.field, short(tc.value))
					}
					if !strings.Contains(p.Find("#"+tc.field).AttrOr("aria-describedby", ""), tc.field+"-error") {
						t.Errorf("POST %s %s=%q: the field does not point at its message", path, tc.field, short(tc.value))
					}
					// What was typed stays on the form (the description's
					// break as the textarea shows it), a control character
					// shown as U+FFFD.
					if got, want := value(p, tc.field), strings.ReplaceAll(strings.TrimSpace(tc.value), "\t", "\uFFFD"); tc.field != "description" && got != want {
						t.Errorf("POST %s %s=%q: the field shows %q", path, tc.field, short(tc.value), short(got))
					}
					if got := value(p, "name"); got != "Rexy" {
						t.Errorf("POST %s %s=%q: the name shows %q", path, tc.field, short(tc.value), got)
					}
				}
			}
			// Nothing was saved.
			wantPet(t, a, id, 125000, &longStored, ptr("Mixed"), &today)
			if n := b.Get("/staff/catalog").Find(`[data-testid="pet-row"]`).Length(); n != 2 {
				t.Errorf("catalog has %d pets; a refused form created one", n)
			}
			// Every mistake at once: the form's own and the store's.
			p := b.Post("/staff/pets", form("price", "", "breed", strings.Repeat("b", 101), "birthDate", tomorrow)).WantStatus(http.StatusUnprocessableEntity)
			for field, want := range map[string]string{"price": "is required: 0.00 for no fee", "breed": "must be at most 100 characters", "birthDate": "must not be in the future"} {
				if got := browsertest.Text(p.ID("error-" + field + "-error")); got != want {
					t.Errorf("together: %s message %q, want %q", field, got, want)
				}
			}
		})
		t.Run("blank fields clear", func(t *testing.T) {
			b.Post("/staff/pets/"+handlerstest.Itoa(id), form("price", "0", "description", "  \r\n ", "breed", " ", "birthDate", "")).
				WantRedirect("/staff/catalog")
			wantPet(t, a, id, 0, nil, nil, nil)
			p := b.Get("/staff/pets/" + handlerstest.Itoa(id) + "/edit").WantStatus(http.StatusOK)
			if got := value(p, "price"); got != "0.00" {
				t.Errorf("price shows %q", got)
			}
			for _, field := range []string{"description", "breed", "birthDate"} {
				if got := value(p, field); got != "" {
					t.Errorf("%s shows %q after clearing", field, got)
				}
			}
		})
		t.Run("fields the form does not send are kept", func(t *testing.T) {
			b.Post("/staff/pets/"+handlerstest.Itoa(id), form("price", "75", "breed", "Collie", "birthDate", born, "description", "Fluffy.")).
				WantRedirect("/staff/catalog")
			b.Post("/staff/pets/"+handlerstest.Itoa(id), url.Values{"name": {"Rex II"}, "categoryId": {handlerstest.Itoa(cat)}, "status": {"available"}}).
				WantRedirect("/staff/catalog")
			wantPet(t, a, id, 7500, ptr("Fluffy."), ptr("Collie"), &born)
			if p, _ := a.Store.FindPetByID(ctx, id); p.Name != "Rex II" {
				t.Errorf("name = %q", p.Name)
			}
		})
	})
}

// wantPet fails unless the stored pet has these shop fields.
func wantPet(t *testing.T, a *handlerstest.App, id int64, price db.Money, desc, breed, born *string) {
	t.Helper()
	p, err := a.Store.FindPetByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	type fields struct {
		Price                    db.Money
		Description, Breed, Born *string
	}
	got, want := fields{p.Price, p.Description, p.Breed, p.BirthDate}, fields{price, desc, breed, born}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pet %d (-want +got):\n%s", id, diff)
	}
}

func ptr(s string) *string { return &s }

// short keeps a long value readable in a failure message.
func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
