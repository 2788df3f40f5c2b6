package db

import (
	"context"
	"fmt"
)

// UpdateOrder completes an order and/or sets its ship date. Completing
// sells the pet when its stock is 0 and no other order is open.
// Errors: validation_failed, not_found, order_complete.
func (s *Store) UpdateOrder(ctx context.Context, id int64, u OrderUpdate) (*Order, error) {
	var p Problems
	if u.Complete == nil && u.ShipDate == nil {
		p.Add("complete", "give complete and/or shipDate")
	}
	ship, err := parseShipDate(u.ShipDate)
	if err != nil {
		p.Add("shipDate", "must be an RFC 3339 date-time")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	return inTx(ctx, s, func(tx *Tx) (*Order, error) {
		o, err := tx.lockOrder(ctx, id, nil)
		if err != nil {
			return nil, err
		}
		if u.Complete != nil && !*u.Complete && o.Complete {
			return nil, Errorf(EOrderComplete, "Order %d is complete and cannot be reopened.", id)
		}
		completing := u.Complete != nil && *u.Complete && !o.Complete
		before := o.auditFields()
		if ship != nil {
			o.ShipDate = ship
		}
		if completing {
			o.Complete, o.State = true, OrderComplete
		}
		if _, err := tx.exec(ctx, `UPDATE orders SET ship_date = $1, state = $2, updated_at = $3 WHERE id = $4`,
			o.ShipDate, o.State, tx.now, id); err != nil {
			return nil, fmt.Errorf("update order: %w", err)
		}
		event := EventOrderUpdated
		if completing {
			event = EventOrderCompleted
			if err := tx.settleAfterComplete(ctx, o.PetID); err != nil {
				return nil, err
			}
		}
		if err := tx.addEvent(ctx, event, o); err != nil {
			return nil, err
		}
		action := AuditOrderUpdate
		if completing {
			action = AuditOrderComplete
		}
		if err := tx.audit(action, TargetID(auditTargetOrder, id), diff(before, o.auditFields())); err != nil {
			return nil, err
		}
		return o, nil
	})
}

// settleAfterComplete re-derives the pet's status once one of its orders
// is complete: stock 0 and no other open order makes it sold. A deleted pet
// has nothing to settle.
func (tx *Tx) settleAfterComplete(ctx context.Context, petID int64) error {
	pet, err := tx.lockPet(ctx, petID)
	if ErrorCode(err) == ENotFound {
		return nil
	}
	if err != nil {
		return err
	}
	open, err := tx.openOrders(ctx, petID)
	if err != nil {
		return err
	}
	if status := deriveStatus(pet.Stock, open); status != pet.Status {
		pet.Status = status
		return tx.writeStock(ctx, pet)
	}
	return nil
}

// CancelOrder cancels an open order the owner may see (nil: any) and puts
// its quantity back in stock. Errors: not_found, order_complete.
func (s *Store) CancelOrder(ctx context.Context, id int64, owner *Owner) error {
	return inTxDo(ctx, s, func(tx *Tx) error {
		o, err := tx.lockOrder(ctx, id, owner)
		if err != nil {
			return err
		}
		if o.Complete {
			return Errorf(EOrderComplete, "Order %d is complete and cannot be cancelled.", id)
		}
		if _, err := tx.exec(ctx, `UPDATE orders SET state = 'cancelled', updated_at = $1 WHERE id = $2`, tx.now, id); err != nil {
			return fmt.Errorf("cancel order: %w", err)
		}
		pet, err := tx.lockPet(ctx, o.PetID)
		switch {
		case err == nil:
			pet.Stock += o.Quantity
			pet.Status = StatusAvailable
			if err := tx.writeStock(ctx, pet); err != nil {
				return err
			}
		case ErrorCode(err) != ENotFound:
			return err
		}
		before := o.auditFields()
		o.State = OrderCancelled
		if err := tx.addEvent(ctx, EventOrderCancelled, o); err != nil {
			return err
		}
		// A customer's own cancel carries no origin and is not audited.
		if err := tx.audit(AuditOrderCancel, TargetID(auditTargetOrder, id), diff(before, o.auditFields())); err != nil {
			return err
		}
		return nil
	})
}

// lockOrder reads an order for update. The pet is locked after the order;
// every path that locks both takes them in this order or only the pet.
func (tx *Tx) lockOrder(ctx context.Context, id int64, owner *Owner) (*Order, error) {
	lock := ""
	if tx.dialect() == DialectPostgres {
		lock = " FOR UPDATE OF o"
	}
	return findOrder(ctx, tx.get, id, owner, lock)
}
