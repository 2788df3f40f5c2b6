package main

import (
	"strings"
	"testing"
)

func TestShopMaxOpenUnitsConfig(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	cfg, err := LoadConfig(env(nil))
	if err != nil || cfg.ShopMaxOpenUnits != 10 {
		t.Fatalf("default: %v; want 10", err)
	}
	cfg, err = LoadConfig(env(map[string]string{"PETSTORE_SHOP_MAX_OPEN_UNITS": "3"}))
	if err != nil || cfg.ShopMaxOpenUnits != 3 {
		t.Fatalf("3: %v; want 3", err)
	}
	for _, bad := range []string{"0", "-1", "ten", "2.5", " 4", "1000001", "99999999999999999999"} {
		_, err := LoadConfig(env(map[string]string{"PETSTORE_SHOP_MAX_OPEN_UNITS": bad}))
		if err == nil {
			t.Errorf("%q was accepted", bad)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "PETSTORE_SHOP_MAX_OPEN_UNITS: must be a whole number from 1 to 1000000") || strings.Contains(msg, "\n") {
			t.Errorf("%q: error = %q, want one line naming the variable and the range", bad, msg)
		}
	}
}

func TestCurrencyConfig(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	cfg, err := LoadConfig(env(nil))
	if err != nil || cfg.Currency != "EUR" {
		t.Fatalf("default: %v, %q; want EUR", err, cfg.Currency)
	}
	cfg, err = LoadConfig(env(map[string]string{"PETSTORE_CURRENCY": "USD"}))
	if err != nil || cfg.Currency != "USD" {
		t.Fatalf("USD: %v; want USD", err)
	}
	for _, bad := range []string{"usd", "US", "EURO", "XYZ", " EUR", "€"} {
		_, err := LoadConfig(env(map[string]string{"PETSTORE_CURRENCY": bad}))
		if err == nil {
			t.Errorf("%q was accepted", bad)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "PETSTORE_CURRENCY: ") || strings.Contains(msg, "\n") {
			t.Errorf("%q: error = %q, want one line naming the variable", bad, msg)
		}
	}
}

func TestStaffTwoFactorConfig(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	for v, want := range map[string]bool{"": false, "optional": false, "required": true} {
		cfg, err := LoadConfig(env(map[string]string{"PETSTORE_STAFF_2FA": v}))
		if err != nil || cfg.StaffTwoFactorRequired != want {
			t.Fatalf("PETSTORE_STAFF_2FA=%q: %v, %v; want %v", v, cfg, err, want)
		}
	}
}
