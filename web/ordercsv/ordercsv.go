// Package ordercsv is the orders export of SPEC §16: CSV (RFC 4180,
// UTF-8, a header row) streamed to the client batch by batch, so a
// million orders take the memory of one batch. The API and the console
// both answer with Send.
package ordercsv

import (
	"bufio"
	"context"
	"encoding/csv"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// Header is the export's header row.
var Header = []string{"id", "placedAt", "petId", "petName", "quantity", "unitPrice", "total", "currency",
	"status", "shipDate", "customerName", "customerEmail", "customerPhone"}

// ContentType is the export's media type.
const ContentType = "text/csv; charset=utf-8"

// Filename is the name the download is saved under: orders-FROM-TO.csv.
func Filename(r db.DateRange) string {
	return "orders-" + r.From.Format(time.DateOnly) + "-" + r.To.Format(time.DateOnly) + ".csv"
}

// dangerous are the characters that make a spreadsheet read a cell as a
// formula when they start it (OWASP, CSV injection).
const dangerous = "=+-@\t\r"

// separators are the cell separators spreadsheets use, by locale: the
// comma, and the semicolon where the comma is the decimal mark.
const separators = ",;"

// Neutralise keeps a spreadsheet from reading a cell, or a part of it, as
// a formula (the OWASP rule for CSV injection). A cell starting with =, +,
// -, @, a tab or a carriage return gets a ' in front. A separator of any
// locale followed by one of them (after any quotes) gets a ' after it:
// Excel in a semicolon locale splits the comma-separated line `…,;=1+1;,…`
// at the semicolons, quoted or not (a quote counts only at the start of
// a cell), and would read =1+1 as a cell of its own; `;'=1+1;` it reads as
// text. The cell's text is otherwise kept.
func Neutralise(s string) string {
	if s == "" {
		return s
	}
	var b strings.Builder
	if strings.IndexByte(dangerous, s[0]) >= 0 {
		b.WriteByte('\'')
	}
	start := 0
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(separators, s[i]) < 0 {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] == '"' {
			j++
		}
		if j < len(s) && strings.IndexByte(dangerous, s[j]) >= 0 {
			b.WriteString(s[start : i+1])
			b.WriteByte('\'')
			start = i + 1
		}
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(s[start:])
	return b.String()
}

// Record is o as a row of the export, in Header's order: times in RFC 3339
// UTC as the API writes them, amounts as the API's decimal strings, the
// status open, complete or cancelled, absent values empty.
func Record(o *db.ExportedOrder) []string {
	ship := ""
	if o.ShipDate != nil {
		ship = o.ShipDate.UTC().Format(time.RFC3339Nano)
	}
	return []string{
		strconv.FormatInt(o.ID, 10),
		o.PlacedAt.UTC().Format(time.RFC3339Nano),
		strconv.FormatInt(o.PetID, 10),
		Neutralise(o.PetName),
		strconv.FormatInt(o.Quantity, 10),
		o.UnitPrice.String(),
		o.Total.String(),
		Neutralise(o.Currency),
		o.Status,
		ship,
		Neutralise(o.BuyerName.String),
		Neutralise(o.BuyerEmail.String),
		Neutralise(o.BuyerPhone.String),
	}
}

// Send records the export in the audit log (order.export, its range as
// the target's id), then answers with the CSV of the orders placed within
// r, streamed: each batch is written and flushed before the next is read.
// The route must be a streaming one (web.Route.Streaming), so that no
// middleware buffers or compresses the body. A failure after the first
// byte can only end the body early; it is logged.
func Send(c *fiber.Ctx, store *db.Store, logger *slog.Logger, r db.DateRange) error {
	if err := store.Audit(c.UserContext(), db.AuditOrderExport, db.Target{Type: "orders", ID: r.String()}, nil); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, ContentType)
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+Filename(r)+`"`)
	c.Set("X-Content-Type-Options", "nosniff")
	c.Status(fiber.StatusOK)
	serverDone := c.Context().Done() // closed when the server shuts down
	conn := c.Context().Conn()
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-serverDone:
				cancel()
			case <-ctx.Done():
			}
		}()
		// The server's write deadline was set once, for the whole answer:
		// each batch gets BatchWriteTimeout of its own instead, so a long
		// export goes on while the client reads, and one that stopped
		// reading is cut off.
		extend := func() {
			if conn != nil {
				_ = conn.SetWriteDeadline(time.Now().Add(BatchWriteTimeout))
			}
		}
		if err := write(ctx, w, store, r, extend); err != nil && logger != nil {
			logger.Warn("orders export ended early", "range", r.String(), "err", err)
		}
	})
	return nil
}

// BatchWriteTimeout is how long the client may take to receive one batch
// of an export.
const BatchWriteTimeout = 30 * time.Second

// write writes the header and every order of r to w, flushing after each
// batch so the client receives it while the next is read; extend is called
// before each batch is written.
func write(ctx context.Context, w *bufio.Writer, store *db.Store, r db.DateRange, extend func()) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true // RFC 4180 ends records with CRLF
	if err := cw.Write(Header); err != nil {
		return err
	}
	err := store.ExportOrders(ctx, r, func(batch []*db.ExportedOrder) error {
		extend()
		for _, o := range batch {
			if err := cw.Write(Record(o)); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return w.Flush()
}

// ParseRange reads an export's from and to (YYYY-MM-DD, UTC, both
// included; both required; to ≥ from; at most db.MaxExportDays days).
// Errors: validation_failed naming from and to.
func ParseRange(from, to string) (db.DateRange, error) {
	return db.ParseDateRange(from, to, true, db.MaxExportDays)
}
