package email

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode"

	"petstore/db"
)

// message is one email's content, the one model both parts render: the
// text part by textTemplate, the HTML part by htmlMessage. Every field is
// already clean (oneLine): no control character of any input reaches a
// header or a line of the text part, and templ escapes the HTML part.
type message struct {
	Subject    string
	Shop       string
	Heading    string
	Greeting   string
	Paragraphs []string
	Number     string
	Buyer      string
	Lines      []messageLine
	Total      string
	ShipDate   string
	Pickup     []string
	LinkText   string
	Link       string
}

type messageLine struct{ Pet, Quantity, UnitPrice, Total string }

// textTemplate is an email's plain-text part. text/template escapes
// nothing, which is right for text/plain: the fields are cleaned before
// (oneLine) and the part is sent quoted-printable, so no value can end a
// line or the part early.
var textTemplate = template.Must(template.New("text").Parse(`{{.Greeting}}

{{range .Paragraphs}}{{.}}

{{end}}{{if .Number}}Order number: {{.Number}}
{{end}}{{if .Buyer}}Buyer: {{.Buyer}}
{{end}}{{if .Lines}}
{{range .Lines}}- {{.Pet}}: {{.Quantity}} x {{.UnitPrice}} = {{.Total}}
{{end}}{{if .Total}}Total: {{.Total}}
{{end}}{{end}}{{if .ShipDate}}Preferred date: {{.ShipDate}}
{{end}}{{if .Pickup}}
Pick your pets up at:
{{range .Pickup}}  {{.}}
{{end}}{{end}}{{if .Link}}
{{.LinkText}}
{{.Link}}
{{end}}
-- 
{{.Shop}}
`))

// oneLine makes s safe for a header or one line of text: every control
// character (CR and LF among them) and every Unicode line or paragraph
// separator becomes a space, runs of spaces one, and the ends are trimmed.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// render makes both parts of m.
func render(ctx context.Context, m message) (text, html string, err error) {
	var t bytes.Buffer
	if err := textTemplate.Execute(&t, m); err != nil {
		return "", "", fmt.Errorf("email: text part: %w", err)
	}
	var h bytes.Buffer
	if err := htmlMessage(m).Render(ctx, &h); err != nil {
		return "", "", fmt.Errorf("email: html part: %w", err)
	}
	return t.String(), h.String(), nil
}

// Renderer turns what a relay batch asks (db.EmailCauses) into emails.
type Renderer struct {
	// BaseURL is the shop's address as buyers reach it (the lookup link).
	BaseURL string
	// Domain is the Message-ID's domain (PETSTORE_MAIL_FROM's).
	Domain string
	// Keep: no SMTP server; the emails are kept in the database.
	Keep bool
	// render makes both parts of a message; nil is render. A test sets
	// it to make one email fail.
	render func(ctx context.Context, m message) (text, html string, err error)
}

func amount(m db.Money, currency string) string { return oneLine(m.String() + " " + currency) }

func longDate(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("Monday 2 January 2006")
}

func pickupLines(s string) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = oneLine(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

func linesOf(ls []db.EmailLine) []messageLine {
	out := make([]messageLine, len(ls))
	for i, l := range ls {
		pet := oneLine(l.PetName)
		if pet == "" {
			pet = "Pet (no longer listed)"
		}
		out[i] = messageLine{Pet: pet, Quantity: strconv.FormatInt(l.Quantity, 10), UnitPrice: amount(l.UnitPrice, l.Currency), Total: amount(l.Total, l.Currency)}
	}
	return out
}

// Emails renders the emails of c: a confirmation per checkout to its
// buyer and a word of it to each staff user who opted in, and a message
// per order cancelled or completed. An email that cannot be rendered
// comes back without its parts and with Failure set, for the relay to
// write as failed: one bad email never holds up the others, nor the
// events after it.
func (r *Renderer) Emails(ctx context.Context, c *db.EmailCauses) ([]db.NewEmail, error) {
	parts := r.render
	if parts == nil {
		parts = render
	}
	shop := oneLine(c.Settings.Name)
	if shop == "" {
		shop = "Pet store"
	}
	lookup := strings.TrimRight(r.BaseURL, "/") + "/orders/lookup"
	var out []db.NewEmail
	add := func(kind, key, toName, toAddr string, m message, trace *string) error {
		m.Shop = shop
		m.Subject = oneLine(m.Subject)
		e := db.NewEmail{
			Kind: kind, DedupeKey: key, FromName: shop, ReplyTo: oneLine(c.Settings.ReplyTo),
			ToName: oneLine(toName), ToAddr: oneLine(toAddr), Subject: m.Subject,
			MessageIDDomain: r.Domain, Keep: r.Keep, Traceparent: trace,
		}
		var err error
		if e.Text, e.HTML, err = parts(ctx, m); err != nil {
			if ctx.Err() != nil {
				return err // the relay was stopped: the batch runs again
			}
			e.Text, e.HTML, e.Failure = "", "", err.Error()
		}
		out = append(out, e)
		return nil
	}
	pickup := pickupLines(c.Settings.PickupAddress)
	for _, co := range c.Checkouts {
		n := strconv.FormatInt(co.ID, 10)
		name := oneLine(co.Name)
		m := message{
			Subject: fmt.Sprintf("Order %s placed - %s", n, shop), Heading: "Thank you for your order",
			Greeting:   "Hello " + name + ",",
			Paragraphs: []string{"Your order is placed: the shop keeps your pets for you until it hands them over."},
			Number:     n, Lines: linesOf(co.Lines), Total: amount(co.Total(), co.Currency()),
			ShipDate: longDate(co.ShipDate), Pickup: pickup,
			LinkText: "Find your order again with its number and your email address, and cancel what is still open:", Link: lookup,
		}
		if m.ShipDate == "" {
			m.ShipDate = "not chosen"
		}
		if err := add(db.EmailOrderPlaced, "placed:"+n, co.Name, co.Email, m, co.Traceparent); err != nil {
			return nil, err
		}
		for _, s := range c.Staff {
			sm := m
			sm.Subject = fmt.Sprintf("New order %s: %s - %s", n, m.Total, shop)
			sm.Heading, sm.Greeting = "A new storefront order", "Hello "+oneLine(s.Username)+","
			sm.Paragraphs = []string{"A shopper has just placed an order on the storefront."}
			sm.Buyer = name + " <" + oneLine(co.Email) + ">"
			sm.Pickup = nil
			sm.LinkText, sm.Link = "See it in the console:", strings.TrimRight(r.BaseURL, "/")+"/staff/orders?q="+n
			if err := add(db.EmailStaffNewOrder, "staff:"+n+":"+strconv.FormatInt(s.ID, 10), s.Username, s.Email, sm, co.Traceparent); err != nil {
				return nil, err
			}
		}
	}
	for _, ch := range c.Changes {
		l := ch.Line
		if l.CheckoutID == nil {
			continue
		}
		n := strconv.FormatInt(*l.CheckoutID, 10)
		m := message{
			Greeting: "Hello " + oneLine(l.BuyerName) + ",", Number: n, Lines: linesOf([]db.EmailLine{l}),
			LinkText: "Your order, with its number and your email address:", Link: lookup,
		}
		var key string
		switch ch.Kind {
		case db.EmailLineCancelled:
			m.Subject, m.Heading = fmt.Sprintf("Order %s: a line was cancelled - %s", n, shop), "A line of your order was cancelled"
			m.Paragraphs = []string{"This line of your order is cancelled; nothing of it is kept for you any more. The rest of your order stays as it was."}
			key = "cancelled:" + strconv.FormatInt(l.OrderID, 10)
		case db.EmailOrderReady:
			m.Subject, m.Heading = fmt.Sprintf("Order %s is ready - %s", n, shop), "Your pets are ready"
			m.Paragraphs = []string{"Good news: this part of your order is ready for you."}
			m.Pickup = pickup
			key = "ready:" + strconv.FormatInt(l.OrderID, 10)
		default:
			continue
		}
		if err := add(ch.Kind, key, l.BuyerName, l.BuyerEmail, m, ch.Traceparent); err != nil {
			return nil, err
		}
	}
	return out, nil
}
