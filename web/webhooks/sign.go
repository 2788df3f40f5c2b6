// Package webhooks pushes the store's events to the endpoints staff
// registered (SPEC §15): each delivery is a River job, queued by the
// database in the transaction of its event (db, migration 00008), and
// worked here — signed the Standard Webhooks way, sent through a client
// that refuses private addresses at dial time and follows no redirect,
// retried on the backoff schedule. The rules (signing, the schedule, what
// an answer decides) are tested without the queue; queue.go is the River
// client that runs them.
package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"

	"petstore/db"
)

// Sign is the webhook-signature header of one attempt: for each secret,
// "v1," and the base64 of HMAC-SHA256 over "{id}.{timestamp}.{body}"
// keyed with the secret's bytes (the base64 after "whsec_"), separated by
// spaces: during a rotation a receiver holding either secret can verify.
func Sign(secrets []string, msgID string, timestamp int64, body []byte) string {
	sigs := make([]string, 0, len(secrets))
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, secretKey(secret))
		mac.Write([]byte(msgID))
		mac.Write([]byte{'.'})
		mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
		mac.Write([]byte{'.'})
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " ")
}

// secretKey is the HMAC key of a whsec_ secret: its decoded bytes. The
// store makes every secret, so one that does not decode is a bug; its
// text then keys the HMAC rather than nothing.
func secretKey(secret string) []byte {
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, db.WebhookSecretPrefix))
	if err != nil {
		return []byte(secret)
	}
	return b
}
