package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// idempotencyStore keeps Idempotency-Key claims and answers (db.Store does).
type idempotencyStore interface {
	BeginIdempotent(ctx context.Context, owner, key, requestHash string) (*db.StoredResponse, error)
	FinishIdempotent(ctx context.Context, owner, key string, r db.StoredResponse) error
	AbandonIdempotent(ctx context.Context, owner, key string) error
}

// maxIdempotencyKey bounds the header's length.
const maxIdempotencyKey = 255

// idempotency honours `Idempotency-Key` on a POST (SPEC §5): the same key
// and body replay the stored answer with `Idempotent-Replayed: true`; a
// different body is 422; a request still running is 409. Answers below 500
// are kept for 24 hours; after a 5xx the key is released for a retry, and
// so it is after an answer marked neverReplayed (one holding a secret:
// POST /keys, a webhook's create and rotate-secret).
func idempotency(store idempotencyStore, logger *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) error {
		key := c.Get("Idempotency-Key")
		k := currentKey(c)
		if key == "" || k == nil {
			return c.Next()
		}
		if len(key) > maxIdempotencyKey {
			return web.BadRequest("Idempotency-Key must be at most %d characters.", maxIdempotencyKey)
		}
		if !printableASCII(key) {
			return web.BadRequest("Idempotency-Key must be printable ASCII (a UUID, for example).")
		}
		sum := sha256.New()
		sum.Write([]byte(c.Method() + " " + c.Path() + "\n"))
		sum.Write(c.Body())
		hash := hex.EncodeToString(sum.Sum(nil))
		owner := k.Subject()
		ctx := c.UserContext()
		stored, err := store.BeginIdempotent(ctx, owner, key, hash)
		if err != nil {
			return err
		}
		if stored != nil {
			c.Set("Idempotent-Replayed", "true")
			c.Set(fiber.HeaderContentType, stored.ContentType)
			if stored.Location != "" {
				c.Set(fiber.HeaderLocation, stored.Location)
			}
			return c.Status(stored.Status).Send(replayBody(c, stored))
		}
		r, err := answered(c, c.Next())
		// An answer marked neverReplayed (an issued API key's plain form, a
		// webhook's secret: never to be kept) is not kept: the key is
		// released.
		if r.Status >= 500 || c.Locals(neverReplayedLocal{}) != nil {
			if aerr := store.AbandonIdempotent(context.WithoutCancel(ctx), owner, key); aerr != nil {
				logger.Error("abandon idempotency key", "requestId", web.RequestID(c), "err", aerr)
			}
			return err
		}
		if ferr := store.FinishIdempotent(context.WithoutCancel(ctx), owner, key, r); ferr != nil {
			logger.Error("store idempotent answer", "requestId", web.RequestID(c), "err", ferr)
		}
		return err
	}
}

// answered is the answer to keep for a request the rest of the chain
// handled: the response written, or for an error the Error object the
// error handler will send (web.ProblemFor, web.ProblemJSON), since the API answers
// errors with it. err is passed back for the error handler.
func answered(c *fiber.Ctx, err error) (db.StoredResponse, error) {
	if err == nil {
		return db.StoredResponse{
			Status:      c.Response().StatusCode(),
			ContentType: string(c.Response().Header.ContentType()),
			Location:    string(c.Response().Header.Peek(fiber.HeaderLocation)),
			Body:        append([]byte(nil), c.Response().Body()...),
		}, nil
	}
	p := web.ProblemFor(c, err)
	return db.StoredResponse{Status: p.Status, ContentType: fiber.MIMEApplicationJSON, Body: web.ProblemJSON(p)}, err
}

// replayBody is the stored body to send again. A stored Error is sent with
// this request's requestId, which must match its X-Request-Id (and its log
// lines); everything else is sent as stored.
func replayBody(c *fiber.Ctx, stored *db.StoredResponse) []byte {
	if stored.Status < 400 {
		return stored.Body
	}
	var p web.Problem
	if err := json.Unmarshal(stored.Body, &p); err != nil || p.Code == "" {
		return stored.Body
	}
	p.RequestID = web.RequestID(c)
	b, err := json.Marshal(p)
	if err != nil {
		return stored.Body
	}
	return b
}

// printableASCII reports whether s holds only the characters of a
// structured-field string (draft-ietf-httpapi-idempotency-key-header):
// the key is stored as text, which in PostgreSQL cannot hold NUL or bytes
// that are not UTF-8, and a header may carry both.
func printableASCII(s string) bool {
	for i := range len(s) {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

type neverReplayedLocal struct{}

// neverReplayed keeps the request's answer out of the idempotency records:
// it holds a secret shown once (an issued key's plain form, a webhook's
// signing secret), so a retry
// with the same Idempotency-Key runs again instead.
func neverReplayed(c *fiber.Ctx) { c.Locals(neverReplayedLocal{}, true) }
