package main

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestJobsBrowser: on a server as `make run` starts it, a webhook whose
// endpoint cannot be reached (a loopback address, refused) leaves a
// failed delivery job; the console's Jobs page shows it with its error
// and attempts, its Retry button runs it again (one more attempt, shown
// by the page's live refresh) and its Cancel button stops it. The page
// passes axe at both widths and schemes, with a failure listed and after
// the cancel, and /metrics counts the job cancelled. It waits for the
// queue's own second attempt (5 s) and the page's live refresh (every
// 10 s at most), so it takes 20–50 s (the more, the busier the machine).
func TestJobsBrowser(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	cb.watchConsole()
	staff := customerOrStaff(cb)
	var hook struct {
		ID int64 `json:"id"`
	}
	cb.apiJSON(http.MethodPost, "/api/webhooks", staff, `{"url": "https://127.0.0.1:9/hook", "events": ["*"]}`, http.StatusCreated, &hook)
	cb.api(http.MethodPost, "/api/webhooks/"+fmtID(hook.ID)+"/test", staff, "", http.StatusAccepted)
	// The delivery is retried 5 s after its first attempt, then a minute
	// after its second (webhooks.DefaultSchedule). The test clicks Retry
	// only once the second attempt is over, so that no attempt of the
	// queue's own is due or running when it does: the flash it waits for
	// is then the only one the server can say.
	deadline := time.Now().Add(30 * time.Second)
	for {
		fs, err := ts.Server.Queue.Failures(context.Background(), 50)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) == 1 && fs[0].Attempts >= 2 && fs[0].State != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed job with two attempts within 30 s: %+v", fs)
		}
		time.Sleep(50 * time.Millisecond)
	}

	cb.signIn()
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="nav-jobs"]`)))
	cb.waitText(`[data-testid="job-error"]`, "refused_address")
	cb.waitLive()
	attempts, err := strconv.Atoi(cb.text(`[data-testid="job-attempts"]`))
	if err != nil || attempts < 2 {
		t.Fatalf("attempts shown: %q", cb.text(`[data-testid="job-attempts"]`))
	}
	wantAxeClean(t, ctx, "jobs, a failed job")
	screenshot(t, ctx, "console-jobs")

	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="retry-job"]`)))
	cb.waitText(`[data-testid="flash"]`, "will run again now")
	cb.waitLive()
	// The retry's attempt fails too; the page shows it once it refreshes.
	// The count grows when the attempt starts, so the test also waits for
	// a state other than running. The page may still be a moment behind
	// the queue: a job running when cancelled is asked to stop (the
	// flash says so too) and shows cancelled once its attempt returns.
	deadline = time.Now().Add(30 * time.Second)
	for {
		shown, _ := strconv.Atoi(cb.text(`[data-testid="job-attempts"]`))
		if shown > attempts && !strings.Contains(strings.ToLower(cb.text(`[data-testid="job-state"]`)), "running") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("attempts still %d, %d before the retry", shown, attempts)
		}
		time.Sleep(100 * time.Millisecond)
	}

	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="cancel-job"]`)))
	cb.waitText(`[data-testid="flash"]`, "will not be tried again")
	cb.waitText(`[data-testid="job-state"]`, "cancelled")
	if n := read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="cancel-job"]').length`)); n != 0 {
		t.Errorf("a cancelled job still offers Cancel")
	}
	wantAxeClean(t, ctx, "jobs, a job cancelled")
	cb.wantQuietConsole()

	// The metrics say the same, read when scraped.
	res, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{`petstore_jobs{queue="webhooks",state="cancelled"} 1`, `petstore_jobs{queue="email",state="available"} 0`,
		`petstore_queue_lag_seconds{queue="webhooks"} 0`, `petstore_jobs_read_ok 1`} {
		if !strings.Contains(string(body), "\n"+line+"\n") {
			t.Errorf("/metrics has no line %s", line)
		}
	}
}
