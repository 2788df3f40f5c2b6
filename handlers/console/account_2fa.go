package console

import (
	"bytes"
	"encoding/base64"
	"image/png"

	"github.com/gofiber/fiber/v2"
	"github.com/pquerna/otp"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// Turning two-factor sign-in on (SPEC §16): the page shows a new secret as
// a QR code drawn here (a PNG in a data: URI: no script or image from
// elsewhere) and as text; the secret waits in the session's encrypted
// cookie until a first code from the app confirms it, and only then is it
// stored, with ten recovery codes shown once.

// keyEnrolment is the session key of the secret being enrolled (its
// otpauth:// URL).
const keyEnrolment = "totp_enrol"

// qrSize is the QR code's width and height in pixels.
const qrSize = 220

// enrolment is the secret the session is enrolling, a new one when there
// is none yet (or it was made for another user).
func (h *Handler) enrolment(c *fiber.Ctx, u *db.StaffUser) (*otp.Key, *browser.Session, error) {
	sess, err := h.session(c)
	if err != nil {
		return nil, nil, err
	}
	if raw := sess.Value(keyEnrolment); raw != "" {
		if k, err := otp.NewKeyFromURL(raw); err == nil && k.AccountName() == u.Username {
			return k, sess, nil
		}
	}
	k, err := db.NewTOTPKey(u.Username)
	if err != nil {
		return nil, nil, err
	}
	sess.Set(keyEnrolment, k.URL())
	return k, sess, sess.Save()
}

// TwoFactorSetup shows the secret to enrol: GET /staff/account/2fa.
func (h *Handler) TwoFactorSetup(c *fiber.Ctx) error {
	if currentStaff(c).TwoFactor() {
		return h.flashRedirect(c, "Two-factor sign-in is already on.", "/staff/account")
	}
	return h.renderTwoFactor(c, fiber.StatusOK, "")
}

func (h *Handler) renderTwoFactor(c *fiber.Ctx, status int, msg string) error {
	u := currentStaff(c)
	k, _, err := h.enrolment(c, u)
	if err != nil {
		return err
	}
	qr, err := qrDataURI(k)
	if err != nil {
		return err
	}
	ch, err := h.chrome(c, "Turn on two-factor sign-in", "account")
	if err != nil {
		return err
	}
	ch.Setup = h.stepOf(u) != StepNone
	v := view.TwoFactorView{CSRF: browser.CSRFToken(c), QR: qr, Secret: k.Secret(), Required: ch.Setup, Error: msg}
	c.Status(status)
	return web.Render(c, view.TwoFactorPage(ch, v))
}

// qrDataURI draws k's otpauth:// URL as a QR code, a PNG data: URI.
func qrDataURI(k *otp.Key) (string, error) {
	img, err := k.Image(qrSize, qrSize)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return "", err
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

// TurnOnTwoFactor confirms the enrolment with the app's first code:
// POST /staff/account/2fa. It answers with the recovery codes, this once.
func (h *Handler) TurnOnTwoFactor(c *fiber.Ctx) error {
	u := currentStaff(c)
	if u.TwoFactor() {
		return h.flashRedirect(c, "Two-factor sign-in is already on.", "/staff/account")
	}
	k, sess, err := h.enrolment(c, u)
	if err != nil {
		return err
	}
	code := c.FormValue("code")
	if len(code) > 64 {
		code = ""
	}
	sid, err := h.sessionID(c)
	if err != nil {
		return err
	}
	codes, err := h.Store.EnableStaffTwoFactor(c.UserContext(), u.ID, k.Secret(), code, sid)
	if err != nil {
		if coded, status := refusalOf(err, fiber.StatusUnprocessableEntity); coded != nil {
			return h.renderTwoFactor(c, status, "That is not the code your app shows now. Check the app's clock, and type the newest code.")
		}
		return err
	}
	sess.Delete(keyEnrolment)
	if err := sess.Save(); err != nil {
		return err
	}
	h.Logger.Info("staff two-factor sign-in turned on", "user", u.Username)
	ch, err := h.chrome(c, "Two-factor sign-in", "account")
	if err != nil {
		return err
	}
	return web.Render(c, view.RecoveryCodesPage(ch, view.RecoveryCodesView{Codes: codes}))
}
