package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/db/secrets"
)

// openWithKeys opens and migrates the database at rawURL with a ring of
// keys (hex, the first sealing), closed when the test ends.
func openWithKeys(t *testing.T, rawURL string, keys ...string) *db.Store {
	t.Helper()
	ctx := context.Background()
	s, err := db.Open(ctx, rawURL, dbtest.NewClock(t).Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ring, err := secrets.Parse(strings.Join(keys, ","))
	if err != nil {
		t.Fatal(err)
	}
	s.Secrets = ring
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func newSecretKey(t *testing.T) string {
	t.Helper()
	k, err := secrets.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSecretsRotateCommand: `petstore secrets rotate` with a new key put
// first re-seals every secret sealed under the old one and says how many;
// a second run has nothing to do; afterwards the new key alone opens them,
// and the old key alone is refused with one line naming the variable.
func TestSecretsRotateCommand(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	dbtest.EachURL(t, func(t *testing.T, dbURL string) {
		ctx := context.Background()
		oldKey, newKey := newSecretKey(t), newSecretKey(t)
		s := openWithKeys(t, dbURL, oldKey)
		url, events := "https://example.com/hook", []string{"*"}
		w, err := s.CreateWebhook(ctx, db.NewWebhook{URL: &url, Events: &events})
		if err != nil {
			t.Fatal(err)
		}
		if w, err = s.RotateWebhookSecret(ctx, w.ID); err != nil {
			t.Fatal(err)
		}

		vars := map[string]string{"DATABASE_URL": dbURL, "PETSTORE_SECRET_KEYS": newKey + "," + oldKey}
		out, err := runCLI(t, vars, "", "secrets", "rotate")
		if err != nil || !strings.Contains(out, "re-sealed 2 secrets") {
			t.Fatalf("secrets rotate = %q, %v; want 2 re-sealed (the secret and the old secret)", out, err)
		}
		out, err = runCLI(t, vars, "", "secrets", "rotate")
		if err != nil || !strings.Contains(out, "re-sealed 0 secrets") {
			t.Fatalf("secrets rotate again = %q, %v; want 0", out, err)
		}
		vars["PETSTORE_SECRET_KEYS"] = newKey
		if out, err := runCLI(t, vars, "", "secrets", "rotate"); err != nil || !strings.Contains(out, "re-sealed 0 secrets") {
			t.Fatalf("secrets rotate with the new key alone = %q, %v", out, err)
		}
		s2 := openWithKeys(t, dbURL, newKey)
		got, err := s2.FindWebhookByID(ctx, w.ID)
		if err != nil || got.Secret != w.Secret || got.OldSecret == nil || *got.OldSecret != *w.OldSecret {
			t.Fatalf("after rotation the new key reads %+v, %v; want the secrets as made", got, err)
		}

		vars["PETSTORE_SECRET_KEYS"] = oldKey
		_, err = runCLI(t, vars, "", "secrets", "rotate")
		wantSecretKeysLine(t, err)
	})
}

// TestStartWithWrongSecretKeyRefused: a server started with keys that
// open none of the stored secrets stops with one line naming
// PETSTORE_SECRET_KEYS; with the right keys it starts and seals secrets
// left in plain text (a database from before sealing).
func TestStartWithWrongSecretKeyRefused(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	dbtest.EachURL(t, func(t *testing.T, dbURL string) {
		ctx := context.Background()
		key := newSecretKey(t)
		s := openWithKeys(t, dbURL, key)
		url, events := "https://example.com/hook", []string{"*"}
		w, err := s.CreateWebhook(ctx, db.NewWebhook{URL: &url, Events: &events})
		if err != nil {
			t.Fatal(err)
		}

		_, err = runCLI(t, map[string]string{"DATABASE_URL": dbURL, "PETSTORE_SECRET_KEYS": newSecretKey(t)}, "", "serve")
		wantSecretKeysLine(t, err)

		// A row from before sealing: plain text, sealed by the next start.
		if _, err := s.DB().Exec(`UPDATE webhooks SET secret = $1 WHERE id = $2`, w.Secret, w.ID); err != nil {
			t.Fatal(err)
		}
		cfg := testConfig(t, map[string]string{"DATABASE_URL": dbURL, "PETSTORE_SECRET_KEYS": key, "SESSION_KEYS": testSessionKey})
		srv, err := NewServer(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), dbtest.NewClock(t).Now)
		if err != nil {
			t.Fatalf("start with the right key: %v", err)
		}
		srv.Close()
		var raw string
		if err := s.DB().Get(&raw, `SELECT secret FROM webhooks WHERE id = $1`, w.ID); err != nil {
			t.Fatal(err)
		}
		if !secrets.IsSealed(raw) || strings.Contains(raw, w.Secret) {
			t.Fatalf("after a start the row holds %q; want it sealed", raw)
		}
		if got, err := s.FindWebhookByID(ctx, w.ID); err != nil || got.Secret != w.Secret {
			t.Fatalf("read after sealing = %+v, %v", got, err)
		}
	})
}

func wantSecretKeysLine(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("accepted keys that open none of the stored secrets")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "PETSTORE_SECRET_KEYS: ") || strings.Contains(msg, "\n") {
		t.Fatalf("error = %q, want one line starting with PETSTORE_SECRET_KEYS", msg)
	}
}
