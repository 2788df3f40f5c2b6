package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"petstore/db"
	"petstore/db/secrets"
	"petstore/handlers"
	"petstore/web/email"
	"petstore/web/ratelimit"
)

// Defaults of SPEC §7 and §11.
var (
	defaultDeprecated = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	defaultSunset     = time.Date(2027, 6, 30, 0, 0, 0, 0, time.UTC)
)

// maxShopOpenUnits bounds PETSTORE_SHOP_MAX_OPEN_UNITS: a cap past the
// largest stock an inventory holds caps nothing.
const maxShopOpenUnits = db.MaxInventoryQuantity

// sessionKeysFile keeps generated session secrets across restarts.
const sessionKeysFile = "var/session_keys"

// secretKeysFile keeps the generated key that seals stored secrets across
// restarts: losing it loses every webhook and TOTP secret.
const secretKeysFile = "var/secret_keys"

// Config is everything the environment configures. It is built once in
// main and passed down; nothing reads the environment after that.
type Config struct {
	Addr        string
	DatabaseURL string
	RedisURL    string
	Redis       *redis.Options
	// RedisPrefix prefixes the rate-limit counter keys in Redis; empty means
	// the limiter's default "petstore:rl:". No variable sets it: tests use it
	// so that runs sharing one Redis never share counters.
	RedisPrefix string
	SessionKeys [][]byte
	// SecretKeys seal the secrets the database keeps: webhook signing
	// secrets and TOTP secrets (PETSTORE_SECRET_KEYS; the first seals, all
	// open). Unset, EnsureSecretKeys loads or makes var/secret_keys.
	SecretKeys  *secrets.Keyring
	Deprecated  time.Time
	Sunset      time.Time
	BanStrikes  int
	BanDuration time.Duration
	Proxies     ratelimit.TrustedProxies
	LogLevel    slog.Level
	// ShopMaxOpenUnits is the most units one storefront shopper may hold
	// in open orders (PETSTORE_SHOP_MAX_OPEN_UNITS).
	ShopMaxOpenUnits int64
	// Currency is the store's one currency, ISO 4217 (PETSTORE_CURRENCY).
	Currency string
	// MetricsAddr, when set, is the operations listener: /metrics (and
	// pprof when PprofAddr enables it) are served there only, and the main
	// port answers 404 for them (PETSTORE_METRICS_ADDR). Unset, /metrics is
	// on the main port.
	MetricsAddr string
	// PprofAddr, when set, serves net/http/pprof there (keep it on
	// loopback); with MetricsAddr set it must be the same address, as
	// pprof is then served on the operations listener.
	PprofAddr string
	// WebhookAllowPrivate lets webhook deliveries reach loopback, private
	// and link-local addresses (PETSTORE_WEBHOOK_ALLOW_PRIVATE=true), which
	// are refused otherwise: for development and tests.
	WebhookAllowPrivate bool
	// StaffTwoFactorRequired makes every staff user sign in with a TOTP
	// code, enrolling at their next sign-in (PETSTORE_STAFF_2FA=required;
	// "optional", the default, leaves it to each user).
	StaffTwoFactorRequired bool
	// SMTP is where emails go (PETSTORE_SMTP_URL); nil keeps them in the
	// database for the console's Emails page (SPEC §19).
	SMTP *email.Transport
	// MailFrom is the emails' sender address (PETSTORE_MAIL_FROM).
	MailFrom string
	// PublicURL is the shop's address as buyers reach it, for the links
	// in emails (PETSTORE_PUBLIC_URL; default http://localhost and the
	// port of PETSTORE_ADDR).
	PublicURL string
	// Tracing is where traces go (the OTEL_ variables); nil is off.
	Tracing *TracingConfig
}

// configError names the variable at fault, so a bad start is one clear line.
type configError struct {
	name string
	err  error
}

func (e *configError) Error() string { return e.name + ": " + e.err.Error() }

// LoadConfig reads the configuration from getenv.
func LoadConfig(getenv func(string) string) (*Config, error) {
	c := &Config{
		Addr:        ":8080",
		DatabaseURL: getenv("DATABASE_URL"),
		RedisURL:    getenv("REDIS_URL"),
		Deprecated:  defaultDeprecated,
		Sunset:      defaultSunset,
		BanStrikes:  ratelimit.DefaultStrikes,
		BanDuration: ratelimit.DefaultBanBase,
		LogLevel:    slog.LevelInfo,

		ShopMaxOpenUnits: handlers.DefaultShopMaxOpenUnits,
		Currency:         db.DefaultCurrency,
	}
	bad := func(name string, err error) error { return &configError{name, err} }
	if v := getenv("PETSTORE_ADDR"); v != "" {
		if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
			return nil, bad("PETSTORE_ADDR", errors.New("must be host:port or :port, e.g. :8080"))
		}
		c.Addr = v
	}
	if _, _, err := db.ParseURL(c.DatabaseURL); err != nil {
		return nil, bad("DATABASE_URL", err)
	}
	if c.RedisURL != "" {
		opt, err := redis.ParseURL(c.RedisURL)
		if err != nil {
			return nil, bad("REDIS_URL", errors.New("must be redis://[user:password@]host:port[/db]"))
		}
		c.Redis = opt
	}
	if v := getenv("SESSION_KEYS"); v != "" {
		keys, err := parseSessionKeys(v)
		if err != nil {
			return nil, bad("SESSION_KEYS", err)
		}
		c.SessionKeys = keys
	}
	if v := getenv("PETSTORE_SECRET_KEYS"); v != "" {
		keys, err := secrets.Parse(v)
		if err != nil {
			return nil, bad("PETSTORE_SECRET_KEYS", err)
		}
		c.SecretKeys = keys
	}
	if v := getenv("PETSTORE_SUNSET"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, bad("PETSTORE_SUNSET", errors.New("must be an RFC 3339 time, e.g. 2027-06-30T00:00:00Z"))
		}
		c.Sunset = t.UTC()
	}
	if v := getenv("PETSTORE_BAN_STRIKES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, bad("PETSTORE_BAN_STRIKES", errors.New("must be a positive integer"))
		}
		c.BanStrikes = n
	}
	if v := getenv("PETSTORE_BAN_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, bad("PETSTORE_BAN_DURATION", errors.New("must be a positive Go duration, e.g. 15m"))
		}
		c.BanDuration = d
	}
	if v := getenv("TRUSTED_PROXIES"); v != "" {
		p, err := ratelimit.ParseTrustedProxies(v)
		if err != nil {
			return nil, bad("TRUSTED_PROXIES", errors.New("must be comma-separated IPs or CIDRs"))
		}
		c.Proxies = p
	}
	if v := getenv("PETSTORE_SHOP_MAX_OPEN_UNITS"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > maxShopOpenUnits {
			return nil, bad("PETSTORE_SHOP_MAX_OPEN_UNITS", fmt.Errorf("must be a whole number from 1 to %d, e.g. 10", maxShopOpenUnits))
		}
		c.ShopMaxOpenUnits = n
	}
	if v := getenv("PETSTORE_CURRENCY"); v != "" {
		cur, err := db.ParseCurrency(v)
		if err != nil {
			return nil, bad("PETSTORE_CURRENCY", err)
		}
		c.Currency = cur
	}
	if v := getenv("PETSTORE_METRICS_ADDR"); v != "" {
		if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
			return nil, bad("PETSTORE_METRICS_ADDR", errors.New("must be host:port, e.g. 127.0.0.1:9090"))
		}
		c.MetricsAddr = v
	}
	if v := getenv("PETSTORE_PPROF_ADDR"); v != "" {
		if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
			return nil, bad("PETSTORE_PPROF_ADDR", errors.New("must be host:port, e.g. 127.0.0.1:6060"))
		}
		if c.MetricsAddr != "" && v != c.MetricsAddr {
			return nil, bad("PETSTORE_PPROF_ADDR", errors.New("must equal PETSTORE_METRICS_ADDR when that is set: pprof is then served on the operations listener only"))
		}
		c.PprofAddr = v
	}
	if v := getenv("PETSTORE_WEBHOOK_ALLOW_PRIVATE"); v != "" {
		allow, err := strconv.ParseBool(v)
		if err != nil {
			return nil, bad("PETSTORE_WEBHOOK_ALLOW_PRIVATE", errors.New("must be true or false"))
		}
		c.WebhookAllowPrivate = allow
	}
	if v := getenv("PETSTORE_SMTP_URL"); v != "" {
		t, err := email.ParseURL(v)
		if err != nil {
			return nil, bad("PETSTORE_SMTP_URL", err)
		}
		c.SMTP = t
	}
	c.MailFrom = email.DefaultFrom
	if v := getenv("PETSTORE_MAIL_FROM"); v != "" {
		if a, err := mail.ParseAddress(v); err != nil || a.Name != "" || a.Address != v {
			return nil, bad("PETSTORE_MAIL_FROM", errors.New("must be a plain address, e.g. shop@example.com"))
		}
		c.MailFrom = v
	}
	_, port, _ := net.SplitHostPort(c.Addr)
	c.PublicURL = "http://localhost:" + port
	if v := getenv("PETSTORE_PUBLIC_URL"); v != "" {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return nil, bad("PETSTORE_PUBLIC_URL", errors.New("must be an absolute http or https URL, e.g. https://shop.example.com"))
		}
		c.PublicURL = strings.TrimRight(v, "/")
	}
	switch v := getenv("PETSTORE_STAFF_2FA"); v {
	case "", "optional":
	case "required":
		c.StaffTwoFactorRequired = true
	default:
		return nil, bad("PETSTORE_STAFF_2FA", errors.New("must be optional or required"))
	}
	if v := getenv("LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return nil, bad("LOG_LEVEL", errors.New("must be debug, info, warn or error"))
		}
	}
	t, err := loadTracing(getenv)
	if err != nil {
		return nil, err
	}
	c.Tracing = t
	return c, nil
}

// parseSessionKeys reads comma-separated 32-byte hex secrets.
func parseSessionKeys(v string) ([][]byte, error) {
	var keys [][]byte
	for _, part := range strings.Split(v, ",") {
		b, err := hex.DecodeString(strings.TrimSpace(part))
		if err != nil || len(b) != 32 {
			return nil, errors.New("must be comma-separated secrets of 32 bytes in hex (64 hex digits each)")
		}
		keys = append(keys, b)
	}
	return keys, nil
}

// EnsureSessionKeys loads the generated session secret from var/, making
// it on first use, when SESSION_KEYS is unset.
func (c *Config) EnsureSessionKeys() error {
	if len(c.SessionKeys) > 0 {
		return nil
	}
	if b, err := os.ReadFile(sessionKeysFile); err == nil {
		keys, err := parseSessionKeys(strings.TrimSpace(string(b)))
		if err != nil {
			return fmt.Errorf("%s: %w", sessionKeysFile, err)
		}
		c.SessionKeys = keys
		return nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(sessionKeysFile), 0o750); err != nil {
		return err
	}
	if err := os.WriteFile(sessionKeysFile, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return fmt.Errorf("keep session key: %w", err)
	}
	c.SessionKeys = [][]byte{key}
	return nil
}

// EnsureSecretKeys loads the generated key that seals stored secrets from
// var/, making it on first use, when PETSTORE_SECRET_KEYS is unset.
func (c *Config) EnsureSecretKeys() error {
	if c.SecretKeys != nil {
		return nil
	}
	if b, err := os.ReadFile(secretKeysFile); err == nil {
		keys, err := secrets.Parse(strings.TrimSpace(string(b)))
		if err != nil {
			return fmt.Errorf("%s: %w", secretKeysFile, err)
		}
		c.SecretKeys = keys
		return nil
	}
	key, err := secrets.GenerateKey()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(secretKeysFile), 0o750); err != nil {
		return err
	}
	// O_EXCL: of two processes making it at once, one writes it and the
	// other reads what it wrote.
	f, err := os.OpenFile(secretKeysFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return c.EnsureSecretKeys()
	}
	if err != nil {
		return fmt.Errorf("keep secret key: %w", err)
	}
	if _, err := f.WriteString(key + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("keep secret key: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("keep secret key: %w", err)
	}
	c.SecretKeys, err = secrets.Parse(key)
	return err
}
