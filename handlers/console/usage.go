package console

import (
	"cmp"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// usageSorts are the orders of the usage page; the first is the default.
var usageSorts = []string{"minute", "day", "limited", "name"}

// Usage shows every live key's use against its limits, its 429s
// today, its ban and a chart of the last hour. htmx polls the panel.
func (h *Handler) Usage(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sort := c.Query("sort", usageSorts[0])
	if !slices.Contains(usageSorts, sort) {
		return web.BadParam("sort", "must be one of %s", strings.Join(usageSorts, ", "))
	}
	v := view.UsageView{CSRF: browser.CSRFToken(c), Now: h.Now(), Sort: sort, Admin: currentStaff(c).IsAdmin()}
	for page := (db.Page{Limit: db.MaxLimit}); ; {
		keys, more, err := h.Store.FindAPIKeys(ctx, page)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k.RevokedAt != nil {
				continue
			}
			u, err := h.Limiter.Usage(ctx, k.Subject(), web.KeyLimits(k))
			if err != nil {
				return err
			}
			r := view.UsageRow{
				Key: k, MinuteUsed: u.Minute.Used, MinuteLimit: u.Minute.Limit, DayUsed: u.Day.Used, DayLimit: u.Day.Limit,
				Limited429: u.Limited429Today, BansLast24h: u.BansLast24h,
			}
			if u.Banned {
				until := u.BannedUntil
				r.BannedUntil = &until
			}
			for _, m := range u.PerMinute {
				r.PerMinute = append(r.PerMinute, view.MinutePoint{Minute: m.Minute, Count: m.Count})
			}
			v.Rows = append(v.Rows, r)
		}
		if !more || len(keys) == 0 {
			break
		}
		page.AfterID = keys[len(keys)-1].ID
	}
	sortUsage(v.Rows, sort)
	bans, err := h.Store.ActiveBans(ctx)
	if err != nil {
		return err
	}
	for subject, until := range bans {
		if strings.HasPrefix(subject, "ip:") {
			v.IPBans = append(v.IPBans, view.IPBan{Subject: subject, Until: until})
		}
	}
	slices.SortFunc(v.IPBans, func(a, b view.IPBan) int { return strings.Compare(a.Subject, b.Subject) })
	if web.IsHTMX(c) {
		return web.Render(c, view.UsagePanel(v))
	}
	ch, err := h.chrome(c, "Rate limits", "usage")
	if err != nil {
		return err
	}
	return web.RenderPage(c, view.UsagePage(ch, v), view.UsagePanel(v))
}

// sortUsage orders rows by use, the busiest first (by name: A to Z);
// ties keep the key order.
func sortUsage(rows []view.UsageRow, by string) {
	share := func(used, limit int64) float64 {
		if limit <= 0 {
			return 0
		}
		return float64(used) / float64(limit)
	}
	slices.SortStableFunc(rows, func(a, b view.UsageRow) int {
		switch by {
		case "name":
			return strings.Compare(strings.ToLower(a.Key.Name), strings.ToLower(b.Key.Name))
		case "day":
			return cmp.Or(cmp.Compare(b.DayUsed, a.DayUsed), cmp.Compare(share(b.DayUsed, b.DayLimit), share(a.DayUsed, a.DayLimit)))
		case "limited":
			return cmp.Compare(b.Limited429, a.Limited429)
		default:
			return cmp.Or(cmp.Compare(b.MinuteUsed, a.MinuteUsed), cmp.Compare(share(b.MinuteUsed, b.MinuteLimit), share(a.MinuteUsed, a.MinuteLimit)))
		}
	})
}
