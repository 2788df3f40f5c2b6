package shop

import (
	"petstore/db"
	"petstore/views/components"
)

// Price is an amount as shoppers (and staff: one money format, issue 42)
// read it: components.Price.
func Price(m db.Money, cur string) string { return components.Price(m, cur) }

// UnitPrice is what one pet costs: its Price, or "No fee" when it costs
// nothing (SPEC §14: price "0.00" means no fee). Totals are always
// amounts (Price), so a sum never reads "No fee".
func UnitPrice(m db.Money, cur string) string {
	if m == 0 {
		return "No fee"
	}
	return Price(m, cur)
}
