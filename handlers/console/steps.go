package console

import "petstore/db"

// Step is what a signed-in user must do before the console opens
// (SPEC §16): choose their own password after signing in with a one-time
// one, then, when PETSTORE_STAFF_2FA=required, turn on two-factor
// sign-in. Until then every console page leads to the step's page; the
// routes of that page carry the Setup option.
type Step int

// The steps, in the order they are taken.
const (
	StepNone Step = iota
	StepPassword
	StepTwoFactor
)

// page is where the step is taken.
func (s Step) page() string {
	if s == StepTwoFactor {
		return "/staff/account/2fa"
	}
	return "/staff/account"
}

// stepOf is the step u must take first, StepNone when there is none.
func (h *Handler) stepOf(u *db.StaffUser) Step {
	switch {
	case u.MustChangePassword:
		return StepPassword
	case h.TwoFactorRequired && !u.TwoFactor():
		return StepTwoFactor
	}
	return StepNone
}
