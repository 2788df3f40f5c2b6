package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// ShopSettings are the shop's name, pickup address and reply-to address,
// used in every email (SPEC §19); admins change them on the console's
// Settings page.
type ShopSettings struct {
	Name          string `db:"name"`
	PickupAddress string `db:"pickup_address"`
	ReplyTo       string `db:"reply_to"`
}

// Limits of the settings.
const (
	MaxShopNameLen      = 100
	MaxPickupAddressLen = 500
)

// Validate trims the settings and checks them; its details name the
// form's fields (name, pickupAddress, replyTo).
func (s *ShopSettings) Validate() error {
	var p Problems
	s.Name = strings.TrimSpace(s.Name)
	checkName(&p, "name", &s.Name)
	s.PickupAddress = strings.TrimSpace(strings.ReplaceAll(s.PickupAddress, "\r\n", "\n"))
	switch {
	case len([]rune(s.PickupAddress)) > MaxPickupAddressLen:
		p.Add("pickupAddress", "must be at most %d characters", MaxPickupAddressLen)
	case strings.ContainsFunc(s.PickupAddress, func(r rune) bool { return r < ' ' && r != '\n' || r == 0x7f }):
		p.Add("pickupAddress", "must not contain control characters")
	}
	s.ReplyTo = strings.TrimSpace(s.ReplyTo)
	if s.ReplyTo != "" {
		if why := emailProblem(s.ReplyTo); why != "" {
			p.Add("replyTo", "%s", why)
		}
	}
	return p.Err()
}

// FindShopSettings returns the shop's settings.
func (s *Store) FindShopSettings(ctx context.Context) (ShopSettings, error) {
	var v ShopSettings
	if err := s.get(ctx, &v, `SELECT name, pickup_address, reply_to FROM shop_settings WHERE id = 1`); err != nil {
		return v, fmt.Errorf("find shop settings: %w", err)
	}
	return v, nil
}

func (tx *Tx) shopSettings(ctx context.Context) (ShopSettings, error) {
	var v ShopSettings
	if err := tx.get(ctx, &v, `SELECT name, pickup_address, reply_to FROM shop_settings WHERE id = 1`); err != nil {
		return v, fmt.Errorf("find shop settings: %w", err)
	}
	return v, nil
}

// UpdateShopSettings sets the shop's settings, audited as settings.update.
// Errors: validation_failed.
func (s *Store) UpdateShopSettings(ctx context.Context, in ShopSettings) (ShopSettings, error) {
	if err := in.Validate(); err != nil {
		return in, err
	}
	return inTx(ctx, s, func(tx *Tx) (ShopSettings, error) {
		before, err := tx.shopSettings(ctx)
		if err != nil {
			return in, err
		}
		if _, err := tx.exec(ctx, `UPDATE shop_settings SET name = $1, pickup_address = $2, reply_to = $3 WHERE id = 1`,
			in.Name, in.PickupAddress, in.ReplyTo); err != nil {
			return in, fmt.Errorf("update shop settings: %w", err)
		}
		ch := Changes{}
		ch.Set("name", before.Name, in.Name)
		ch.Set("pickupAddress", before.PickupAddress, in.PickupAddress)
		ch.Set("replyTo", before.ReplyTo, in.ReplyTo)
		return in, tx.audit(AuditSettingsUpdate, Target{Type: auditTargetSettings, ID: "shop"}, ch)
	})
}

// StaffEmailPrefs are a staff user's address and whether they want an
// email per new storefront checkout (their Account page).
type StaffEmailPrefs struct {
	Email        string `db:"email"`
	NotifyOrders bool   `db:"notify_orders"`
}

// FindStaffEmailPrefs returns a staff user's email preferences.
// Errors: not_found.
func (s *Store) FindStaffEmailPrefs(ctx context.Context, staffID int64) (StaffEmailPrefs, error) {
	p, err := findOne[StaffEmailPrefs](ctx, s.get, "staff email", notFound("Staff user", staffID),
		`SELECT email, notify_orders FROM staff_users WHERE id = $1`, staffID)
	if err != nil {
		return StaffEmailPrefs{}, err
	}
	return *p, nil
}

// SetStaffEmailPrefs sets a staff user's own email preferences: opting in
// needs an address. Errors: validation_failed (details name email),
// not_found.
func (s *Store) SetStaffEmailPrefs(ctx context.Context, staffID int64, in StaffEmailPrefs) (StaffEmailPrefs, error) {
	in.Email = strings.TrimSpace(in.Email)
	var p Problems
	if in.Email != "" {
		if why := emailProblem(in.Email); why != "" {
			p.Add("email", "%s", why)
		}
	} else if in.NotifyOrders {
		p.Add("email", "give an address to be emailed at")
	}
	if err := p.Err(); err != nil {
		return in, err
	}
	return inTx(ctx, s, func(tx *Tx) (StaffEmailPrefs, error) {
		var before StaffEmailPrefs
		if err := tx.get(ctx, &before, `SELECT email, notify_orders FROM staff_users WHERE id = $1`, staffID); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return in, notFound("Staff user", staffID)
			}
			return in, fmt.Errorf("set staff email: %w", err)
		}
		if _, err := tx.exec(ctx, `UPDATE staff_users SET email = $1, notify_orders = $2 WHERE id = $3`, in.Email, in.NotifyOrders, staffID); err != nil {
			return in, fmt.Errorf("set staff email: %w", err)
		}
		ch := Changes{}
		ch.Set("email", before.Email, in.Email)
		ch.Set("notifyOrders", before.NotifyOrders, in.NotifyOrders)
		return in, tx.audit(AuditStaffEmail, TargetID(auditTargetStaffPref, staffID), ch)
	})
}
