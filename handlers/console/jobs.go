package console

import (
	"context"
	"strconv"

	"github.com/gofiber/fiber/v2"

	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
	"petstore/web/queue"
)

// failuresShown is how many failed jobs the Jobs page lists.
const failuresShown = 50

// Jobs is the Jobs page (SPEC §21, admins): every queue's jobs by state
// and its oldest waiting job's age, and the newest failed jobs with their
// errors and attempts; htmx refetches the panels live, as the dashboard's.
func (h *Handler) Jobs(c *fiber.Ctx) error {
	ctx := c.UserContext()
	qs, err := h.Queue.Jobs(ctx)
	if err != nil {
		return err
	}
	fs, err := h.Queue.Failures(ctx, failuresShown)
	if err != nil {
		return err
	}
	v := view.JobsView{CSRF: browser.CSRFToken(c), States: queue.States, FailuresShown: failuresShown}
	for _, q := range qs {
		v.Queues = append(v.Queues, view.JobQueue{Name: q.Queue, Counts: q.Counts, Waiting: q.Counts["available"], Lag: q.Lag})
	}
	for _, f := range fs {
		v.Failures = append(v.Failures, view.JobFailure{
			ID: f.ID, Kind: f.Kind, Queue: f.Queue, State: f.State, Attempts: f.Attempts, Error: f.Error,
			AttemptedAt: f.AttemptedAt, CanRetry: f.CanRetry, CanCancel: f.CanCancel,
		})
	}
	if web.IsHTMX(c) {
		return web.Render(c, view.JobsPanels(v))
	}
	ch, err := h.chrome(c, "Jobs", "jobs")
	if err != nil {
		return err
	}
	ch.Live = true
	v.CSRF = ch.CSRF
	return web.RenderPage(c, view.JobsPage(ch, v), view.JobsPanels(v))
}

// RetryJob makes a job run again now (audited as job.retry).
func (h *Handler) RetryJob(c *fiber.Ctx) error {
	return h.changeJob(c, h.Queue.Retry, func(job, before, after string) string {
		if after == "running" {
			return "Job " + job + " is running: nothing to retry."
		}
		return "Job " + job + " will run again now."
	})
}

// CancelJob stops a job: it is not tried again (audited as job.cancel).
func (h *Handler) CancelJob(c *fiber.Ctx) error {
	return h.changeJob(c, h.Queue.Cancel, cancelSaid)
}

// cancelSaid is what the console says of a cancel, by the job's state
// before and after it. A running job stays running until its attempt
// returns (River asks it to stop, then marks it cancelled, not retried),
// so it is asked to stop even when its state did not change; a job
// already ended has nothing to cancel.
func cancelSaid(job, before, after string) string {
	switch {
	case after == "running":
		return "Job " + job + " is running: it is asked to stop and will not be tried again."
	case after == before:
		return "Job " + job + " is " + after + ": nothing to cancel."
	}
	return "Job " + job + " is cancelled: it will not be tried again."
}

// changeJob makes change to the job of the path and goes back to the Jobs
// page with what said of the job's state before and after.
func (h *Handler) changeJob(c *fiber.Ctx, change func(context.Context, int64) (string, string, error), said func(job, before, after string) string) error {
	id, err := web.PathID(c, "jobId")
	if err != nil {
		return err
	}
	before, after, err := change(c.UserContext(), id)
	if err != nil {
		return h.refused(c, err, "/staff/jobs", nil)
	}
	return h.flashRedirect(c, said(strconv.FormatInt(id, 10), before, after), "/staff/jobs")
}
