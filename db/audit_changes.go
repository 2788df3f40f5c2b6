package db

import (
	"context"
	"slices"
)

// Audit actions (SPEC §16) of the changes the store makes. Staff and
// sign-in actions are written where the team is kept.
const (
	AuditPetCreate       = "pet.create"
	AuditPetUpdate       = "pet.update"
	AuditPetPrice        = "pet.price"
	AuditPetDelete       = "pet.delete"
	AuditPhotoAdd        = "photo.add"
	AuditPhotoDelete     = "photo.delete"
	AuditPhotoReorder    = "photo.reorder"
	AuditCategoryCreate  = "category.create"
	AuditCategoryUpdate  = "category.update"
	AuditCategoryDelete  = "category.delete"
	AuditInventorySet    = "inventory.set"
	AuditOrderCreate     = "order.create"
	AuditOrderUpdate     = "order.update"
	AuditOrderComplete   = "order.complete"
	AuditOrderCancel     = "order.cancel"
	AuditOrderExport     = "order.export"
	AuditKeyCreate       = "key.create"
	AuditKeyUpdate       = "key.update"
	AuditKeyRevoke       = "key.revoke"
	AuditBanLift         = "ban.lift"
	AuditWebhookCreate   = "webhook.create"
	AuditWebhookUpdate   = "webhook.update"
	AuditWebhookDelete   = "webhook.delete"
	AuditWebhookRotate   = "webhook.rotate_secret"
	AuditWebhookTest     = "webhook.test"
	AuditWebhookRetry    = "webhook.retry"
	AuditCatalogSeed     = "catalog.seed"
	auditTargetPet       = "pet"
	auditTargetCategory  = "category"
	auditTargetOrder     = "order"
	auditTargetKey       = "key"
	auditTargetWebhook   = "webhook"
	auditTargetDelivery  = "delivery"
	auditTargetOrderList = "orders"
)

// audited reports whether changes made under ctx are audited: it carries
// an origin (a staff user, a staff key, the command line).
func audited(ctx context.Context) bool {
	_, ok := OriginFrom(ctx)
	return ok
}

// fields is a resource's audited fields by their API names.
type fields map[string]any

// diff is the changes from before to after: every field whose value
// differs (nil before for a creation, nil after for a deletion).
func diff(before, after fields) Changes {
	names := make([]string, 0, len(before)+len(after))
	for k := range before {
		names = append(names, k)
	}
	for k := range after {
		names = append(names, k)
	}
	ch := Changes{}
	for _, k := range slices.Compact(slices.Sorted(slices.Values(names))) {
		ch.Set(k, before[k], after[k])
	}
	return ch
}

// auditFields are a pet's audited fields (its stock is inventory.set's).
func (p *Pet) auditFields() fields {
	return fields{"name": p.Name, "categoryId": p.CategoryID, "status": p.Status, "price": p.Price,
		"description": p.Description, "breed": p.Breed, "birthDate": p.BirthDate}
}

// photoIDs are the ids of a pet's photos in display order.
func (p *Pet) photoIDs() []int64 {
	ids := make([]int64, len(p.Photos))
	for i, ph := range p.Photos {
		ids[i] = ph.ID
	}
	return ids
}

// auditFields are a category's audited fields.
func (c *Category) auditFields() fields {
	return fields{"name": c.Name, "description": c.Description}
}

// auditFields are a key's audited fields: never its plain form or hash.
func (k *APIKey) auditFields() fields {
	return fields{"name": k.Name, "role": k.Role, "plan": k.Plan, "perMinute": k.PerMinute, "perDay": k.PerDay}
}

// auditFields are a webhook's audited fields: never its secrets.
func (w *Webhook) auditFields() fields {
	return fields{"url": w.URL, "events": w.Events, "description": w.Description, "enabled": w.Enabled}
}

// auditFields are an order's audited fields.
func (o *Order) auditFields() fields {
	return fields{"petId": o.PetID, "quantity": o.Quantity, "shipDate": o.ShipDate, "status": o.State}
}

// BanLifted is the change of lifting k's ban, k as read before the lift:
// bannedUntil from its end to none (no change when it was not banned).
func BanLifted(k *APIKey) Changes {
	ch := Changes{}
	ch.Set("bannedUntil", k.BannedUntil, nil)
	return ch
}
