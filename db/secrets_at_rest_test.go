package db_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/db/secrets"
)

// newKeyring is a ring of freshly generated keys, the first sealing.
func newKeyring(t *testing.T, keys ...string) *secrets.Keyring {
	t.Helper()
	k, err := secrets.Parse(strings.Join(keys, ","))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func genKey(t *testing.T) string {
	t.Helper()
	k, err := secrets.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// secretsFixture is a store holding a webhook whose secret was rotated
// (so it has a current and an old secret) and a user with 2FA on.
type secretsFixture struct {
	s       *db.Store
	clock   *dbtest.Clock
	webhook *db.Webhook // as the rotation returned it: both secrets in plain text
	user    *db.StaffUser
	totp    string // the user's TOTP secret in plain text
}

func newSecretsFixture(t *testing.T, open dbtest.Open, ring *secrets.Keyring) *secretsFixture {
	t.Helper()
	bg := context.Background()
	s := open(t)
	s.Secrets = ring
	clock := dbtest.NewClock(t)
	s.Now = clock.Now
	w := mustCreateWebhook(t, bg, s, "https://example.com/hook", "*")
	w, err := s.RotateWebhookSecret(bg, w.ID)
	if err != nil || w.OldSecret == nil {
		t.Fatalf("rotate = %+v, %v", w, err)
	}
	u := mustAddStaff(t, bg, s, "fay", db.RoleClerk, false)
	key, err := db.NewTOTPKey(u.Username)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := totp.GenerateCode(key.Secret(), clock.Now())
	if _, err := s.EnableStaffTwoFactor(asAdmin(bg, u), u.ID, key.Secret(), code, ""); err != nil {
		t.Fatal(err)
	}
	return &secretsFixture{s: s, clock: clock, webhook: w, user: u, totp: key.Secret()}
}

// plainSecrets are the texts a dump must not hold: each secret whole and
// its key material without the prefix.
func (f *secretsFixture) plainSecrets() []string {
	return []string{
		f.webhook.Secret, strings.TrimPrefix(f.webhook.Secret, db.WebhookSecretPrefix),
		*f.webhook.OldSecret, strings.TrimPrefix(*f.webhook.OldSecret, db.WebhookSecretPrefix),
		f.totp,
	}
}

// dumpTables is every row of every table of the store's database, as text.
func dumpTables(t *testing.T, s *db.Store) string {
	t.Helper()
	var tables []string
	q := `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
	if s.Dialect() == db.DialectPostgres {
		q = `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`
	}
	if err := s.DB().Select(&tables, q); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("found only tables %v", tables)
	}
	var b strings.Builder
	for _, table := range tables {
		rows, err := s.DB().Queryx(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		for rows.Next() {
			row := map[string]any{}
			if err := rows.MapScan(row); err != nil {
				t.Fatal(err)
			}
			for col, v := range row {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%s.%s=%v\n", table, col, v)
			}
		}
		rows.Close()
	}
	return b.String()
}

// dumpFile is the SQLite database's file (and its WAL) after a checkpoint.
func dumpFile(t *testing.T, s *db.Store) []byte {
	t.Helper()
	var files []struct {
		Seq  int    `db:"seq"`
		Name string `db:"name"`
		File string `db:"file"`
	}
	if err := s.DB().Select(&files, `PRAGMA database_list`); err != nil || len(files) == 0 || files[0].File == "" {
		t.Fatalf("database_list = %v, %v", files, err)
	}
	if _, err := s.DB().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(files[0].File + suffix)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// TestSecretsAtRest: a dump of the database (every table; on SQLite the
// file's bytes) holds neither a webhook's secrets nor a TOTP secret, yet
// the store still signs with them and accepts the user's codes.
func TestSecretsAtRest(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		f := newSecretsFixture(t, open, dbtest.Keyring())
		dump := dumpTables(t, f.s)
		var file []byte
		if f.s.Dialect() == db.DialectSQLite {
			file = dumpFile(t, f.s)
		}
		for _, secret := range f.plainSecrets() {
			if strings.Contains(dump, secret) {
				t.Errorf("a table dump holds the secret %q", secret)
			}
			if bytes.Contains(file, []byte(secret)) {
				t.Errorf("the database file holds the secret %q", secret)
			}
		}
		wantSecretsWork(t, f)
	})
}

// wantSecretsWork checks the webhook signs with both its secrets and the
// user's next TOTP code is accepted.
func wantSecretsWork(t *testing.T, f *secretsFixture) {
	t.Helper()
	bg := context.Background()
	w, err := f.s.FindWebhookByID(bg, f.webhook.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, want := w.Secrets(f.clock.Now()), []string{f.webhook.Secret, *f.webhook.OldSecret}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("webhook signs with %v, want %v", got, want)
	}
	d, err := f.s.QueueWebhookTest(bg, w.ID, (&jobLog{}).enqueue)
	if err != nil {
		t.Fatal(err)
	}
	send, err := f.s.PrepareWebhookAttempt(bg, d.ID, d.Generation)
	if err != nil || send == nil || strings.Join(send.Secrets, " ") != strings.Join(want, " ") {
		t.Fatalf("attempt = %+v, %v; want it signed with %v", send, err, want)
	}
	f.clock.Add(db.TOTPPeriod * time.Second)
	code, _ := totp.GenerateCode(f.totp, f.clock.Now())
	if ok, err := f.s.UseStaffCode(bg, f.user.ID, code); err != nil || !ok {
		t.Fatalf("a current TOTP code: %v, %v; want it accepted", ok, err)
	}
}

// TestSecretKeyRotation: with a new key first and the old one second the
// store still reads what the old key sealed; RotateSecrets re-seals those
// rows under the new key (and a second run finds nothing to do), after
// which the new key alone opens them. A ring without the key is refused.
func TestSecretKeyRotation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		bg := context.Background()
		oldKey, newKey := genKey(t), genKey(t)
		f := newSecretsFixture(t, open, newKeyring(t, oldKey))

		f.s.Secrets = newKeyring(t, genKey(t))
		_, err := f.s.SealSecrets(bg)
		var ke *db.SecretKeyError
		if !errors.As(err, &ke) || !errors.Is(err, secrets.ErrNoKey) {
			t.Fatalf("SealSecrets under a wrong key = %v, want a SecretKeyError wrapping ErrNoKey", err)
		}
		f.s.Secrets = nil
		if _, err := f.s.SealSecrets(bg); !errors.Is(err, db.ErrNoKeyring) {
			t.Fatalf("SealSecrets without a keyring = %v, want ErrNoKeyring", err)
		}

		f.s.Secrets = newKeyring(t, newKey, oldKey)
		if n, err := f.s.SealSecrets(bg); err != nil || n != 0 {
			t.Fatalf("SealSecrets with the old key second = %d, %v; want 0, nil", n, err)
		}
		wantSecretsWork(t, f)
		if n, err := f.s.RotateSecrets(bg); err != nil || n != 3 {
			t.Fatalf("RotateSecrets = %d, %v; want 3 rows (secret, old secret, TOTP secret)", n, err)
		}
		if n, err := f.s.RotateSecrets(bg); err != nil || n != 0 {
			t.Fatalf("RotateSecrets again = %d, %v; want 0", n, err)
		}
		f.s.Secrets = newKeyring(t, newKey)
		if _, err := f.s.SealSecrets(bg); err != nil {
			t.Fatalf("the new key alone after the rotation: %v", err)
		}
		wantSecretsWork(t, f)
	})
}

// TestSealSecretsOfPlainRows: rows written in plain text before secrets
// were sealed are sealed by SealSecrets (run at start), once; and a store
// without a keyring refuses to write a secret.
func TestSealSecretsOfPlainRows(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		bg := context.Background()
		f := newSecretsFixture(t, open, dbtest.Keyring())
		for _, q := range []string{
			`UPDATE webhooks SET secret = $1, old_secret = $2`,
		} {
			if _, err := f.s.DB().Exec(q, f.webhook.Secret, *f.webhook.OldSecret); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.s.DB().Exec(`UPDATE staff_users SET totp_secret = $1 WHERE id = $2`, f.totp, f.user.ID); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(dumpTables(t, f.s), f.totp) {
			t.Fatal("the plain rows were not written")
		}
		if n, err := f.s.SealSecrets(bg); err != nil || n != 3 {
			t.Fatalf("SealSecrets = %d, %v; want 3", n, err)
		}
		if n, err := f.s.SealSecrets(bg); err != nil || n != 0 {
			t.Fatalf("SealSecrets again = %d, %v; want 0", n, err)
		}
		dump := dumpTables(t, f.s)
		for _, secret := range f.plainSecrets() {
			if strings.Contains(dump, secret) {
				t.Errorf("after sealing, a dump holds %q", secret)
			}
		}
		wantSecretsWork(t, f)

		f.s.Secrets = nil
		if _, err := f.s.CreateWebhook(bg, db.NewWebhook{URL: ptr("https://example.com/2"), Events: &[]string{"*"}}); !errors.Is(err, db.ErrNoKeyring) {
			t.Fatalf("create webhook without a keyring = %v, want ErrNoKeyring", err)
		}
		if _, err := f.s.RotateWebhookSecret(bg, f.webhook.ID); !errors.Is(err, db.ErrNoKeyring) {
			t.Fatalf("rotate without a keyring = %v, want ErrNoKeyring", err)
		}
	})
}
