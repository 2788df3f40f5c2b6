package shop

import (
	"slices"
	"strconv"
	"strings"

	"petstore/db"
)

// Session keys of what the shop remembers about orders: the buyer's
// details of the last checkout, to fill in the next one, and the
// checkouts this session proved it may see (order number and email,
// GET /orders/lookup).
const (
	keyBuyerName  = "buyer_name"
	keyBuyerEmail = "buyer_email"
	keyBuyerPhone = "buyer_phone"
	keyProven     = "proven"
)

// maxProven bounds the proven checkouts a session remembers: the newest
// this many. Older ones need their number and email again.
const maxProven = 5

// rememberBuyer keeps the details of a placed checkout for the next one.
// They passed validation, so they are short (name 100, email 254, phone 30)
// and the cookie stays small.
func rememberBuyer(st *shopState, c *db.Checkout) {
	st.sess.Set(keyBuyerName, c.Name)
	st.sess.Set(keyBuyerEmail, c.Email)
	if c.Phone != "" {
		st.sess.Set(keyBuyerPhone, c.Phone)
	} else {
		st.sess.Delete(keyBuyerPhone)
	}
}

// rememberedBuyer is the details of this browser's last checkout, if any.
func rememberedBuyer(st *shopState) (name, email, phone string) {
	return st.sess.Value(keyBuyerName), st.sess.Value(keyBuyerEmail), st.sess.Value(keyBuyerPhone)
}

// proven lists the checkouts this session proved, oldest first. In the
// cookie they are "12,34": plain values need no gob registration.
func proven(st *shopState) []int64 {
	raw := st.sess.Value(keyProven)
	var ids []int64
	for _, part := range strings.Split(raw, ",") {
		if id, err := strconv.ParseInt(part, 10, 64); err == nil && id > 0 && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) > maxProven {
		ids = ids[len(ids)-maxProven:]
	}
	return ids
}

// prove records that this session gave checkout id's number and email,
// keeping the newest maxProven.
func prove(st *shopState, id int64) {
	ids := slices.DeleteFunc(proven(st), func(x int64) bool { return x == id })
	ids = append(ids, id)
	if len(ids) > maxProven {
		ids = ids[len(ids)-maxProven:]
	}
	parts := make([]string, len(ids))
	for i, x := range ids {
		parts[i] = strconv.FormatInt(x, 10)
	}
	st.sess.Set(keyProven, strings.Join(parts, ","))
}

// isProven reports whether this session proved checkout id.
func isProven(st *shopState, id int64) bool { return slices.Contains(proven(st), id) }
