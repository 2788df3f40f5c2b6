package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strings"

	api "petstore/web/client/petstoreapi"
)

// pages walks a list's cursor pages: fetch gets the page at cursor (nil:
// the first), and the Link rel="next" of each answer names the next. The
// iteration stops at the first error, which it yields.
func pages[T any](ctx context.Context, fetch func(ctx context.Context, cursor *string) (*[]T, *http.Response, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var cursor *string
		for {
			items, resp, err := fetch(ctx, cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			if items != nil {
				for _, it := range *items {
					if !yield(it, nil) {
						return
					}
				}
			}
			next := NextCursor(resp.Header)
			if next == "" {
				return
			}
			cursor = &next
		}
	}
}

// NextCursor is the cursor of an answer's Link rel="next", "" on the last page.
func NextCursor(h http.Header) string {
	next := NextLink(h)
	if next == "" {
		return ""
	}
	u, err := url.Parse(next)
	if err != nil {
		return ""
	}
	return u.Query().Get("cursor")
}

// NextLink is the target of an answer's Link rel="next", "" when none.
func NextLink(h http.Header) string {
	for _, v := range h.Values("Link") {
		for _, link := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(link, ";")
			if !ok || !strings.Contains(strings.ReplaceAll(params, " ", ""), `rel="next"`) {
				continue
			}
			return strings.Trim(strings.TrimSpace(target), "<>")
		}
	}
	return ""
}

// Pets lists the pets matching params, every page (params.Cursor is ignored).
func (c *Client) Pets(ctx context.Context, params api.ListPetsParams) iter.Seq2[api.Pet, error] {
	return pages(ctx, func(ctx context.Context, cursor *string) (*[]api.Pet, *http.Response, error) {
		params.Cursor = cursor
		r, err := c.ListPetsWithResponse(ctx, &params)
		if err != nil {
			return nil, nil, err
		}
		return r.JSON200, r.HTTPResponse, nil
	})
}

// Categories lists the categories, every page.
func (c *Client) Categories(ctx context.Context, params api.ListCategoriesParams) iter.Seq2[api.Category, error] {
	return pages(ctx, func(ctx context.Context, cursor *string) (*[]api.Category, *http.Response, error) {
		params.Cursor = cursor
		r, err := c.ListCategoriesWithResponse(ctx, &params)
		if err != nil {
			return nil, nil, err
		}
		return r.JSON200, r.HTTPResponse, nil
	})
}

// Orders lists the caller's orders (every order for staff), every page.
func (c *Client) Orders(ctx context.Context, params api.ListOrdersParams) iter.Seq2[api.Order, error] {
	return pages(ctx, func(ctx context.Context, cursor *string) (*[]api.Order, *http.Response, error) {
		params.Cursor = cursor
		r, err := c.ListOrdersWithResponse(ctx, &params)
		if err != nil {
			return nil, nil, err
		}
		return r.JSON200, r.HTTPResponse, nil
	})
}

// Inventory lists the stock of every pet, every page.
func (c *Client) Inventory(ctx context.Context, params api.ListInventoryParams) iter.Seq2[api.InventoryItem, error] {
	return pages(ctx, func(ctx context.Context, cursor *string) (*[]api.InventoryItem, *http.Response, error) {
		params.Cursor = cursor
		r, err := c.ListInventoryWithResponse(ctx, &params)
		if err != nil {
			return nil, nil, err
		}
		return r.JSON200, r.HTTPResponse, nil
	})
}

// APIKeys lists the API keys (staff), every page.
func (c *Client) APIKeys(ctx context.Context, params api.ListApiKeysParams) iter.Seq2[api.ApiKey, error] {
	return pages(ctx, func(ctx context.Context, cursor *string) (*[]api.ApiKey, *http.Response, error) {
		params.Cursor = cursor
		r, err := c.ListApiKeysWithResponse(ctx, &params)
		if err != nil {
			return nil, nil, err
		}
		return r.JSON200, r.HTTPResponse, nil
	})
}

// Audit lists the audit log (staff), every page.
func (c *Client) Audit(ctx context.Context, params api.ListAuditParams) iter.Seq2[api.AuditEntry, error] {
	return pages(ctx, func(ctx context.Context, cursor *string) (*[]api.AuditEntry, *http.Response, error) {
		params.Cursor = cursor
		r, err := c.ListAuditWithResponse(ctx, &params)
		if err != nil {
			return nil, nil, err
		}
		return r.JSON200, r.HTTPResponse, nil
	})
}

// Webhooks lists the webhooks (staff); the list has one page.
func (c *Client) Webhooks(ctx context.Context) iter.Seq2[api.Webhook, error] {
	return pages(ctx, func(ctx context.Context, _ *string) (*[]api.Webhook, *http.Response, error) {
		r, err := c.ListWebhooksWithResponse(ctx)
		if err != nil {
			return nil, nil, err
		}
		return r.JSON200, r.HTTPResponse, nil
	})
}

// WebhookDeliveries lists a webhook's deliveries (staff), every page.
func (c *Client) WebhookDeliveries(ctx context.Context, webhookID api.WebhookId, params api.ListWebhookDeliveriesParams) iter.Seq2[api.Delivery, error] {
	return pages(ctx, func(ctx context.Context, cursor *string) (*[]api.Delivery, *http.Response, error) {
		params.Cursor = cursor
		r, err := c.ListWebhookDeliveriesWithResponse(ctx, webhookID, &params)
		if err != nil {
			return nil, nil, err
		}
		return r.JSON200, r.HTTPResponse, nil
	})
}
