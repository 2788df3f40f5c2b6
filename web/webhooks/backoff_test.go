package webhooks

import (
	"net/http"
	"testing"
	"time"

	"petstore/db"
)

func TestScheduleIsAboutTwoDays(t *testing.T) {
	var total time.Duration
	for _, d := range DefaultSchedule {
		total += d
	}
	if len(DefaultSchedule) != 8 || total < 44*time.Hour || total > 45*time.Hour {
		t.Fatalf("%d retries over %v, want 8 over about two days", len(DefaultSchedule), total)
	}
	for _, d := range DefaultSchedule {
		for range 200 {
			if j := jitter(d); j < d-d/10 || j > d+d/10 {
				t.Fatalf("jitter(%v) = %v, more than a tenth away", d, j)
			}
		}
	}
}

func TestDecide(t *testing.T) {
	same := func(d time.Duration) time.Duration { return d }
	fail := answer{status: http.StatusInternalServerError, err: db.AttemptHTTPStatus}
	for _, c := range []struct {
		name   string
		a      answer
		before int
		want   decision
	}{
		{"OK", answer{status: 204}, 0, decision{status: db.DeliverySucceeded}},
		{"OKAfterFailures", answer{status: 200}, 5, decision{status: db.DeliverySucceeded}},
		{"FirstFailure", fail, 0, decision{status: db.DeliveryPending, retry: 5 * time.Second}},
		{"SecondFailure", fail, 1, decision{status: db.DeliveryPending, retry: time.Minute}},
		{"EighthFailure", fail, 7, decision{status: db.DeliveryPending, retry: 24 * time.Hour}},
		{"NinthFailure", fail, 8, decision{status: db.DeliveryFailed}},
		{"OneMoreAfterFailed", fail, 9, decision{status: db.DeliveryFailed}},
		{"Timeout", answer{err: db.AttemptTimeout}, 0, decision{status: db.DeliveryPending, retry: 5 * time.Second}},
		{"Redirect", answer{status: 302, err: db.AttemptRedirect}, 0, decision{status: db.DeliveryPending, retry: 5 * time.Second}},
		{"Gone", answer{status: http.StatusGone, err: db.AttemptHTTPStatus}, 0, decision{status: db.DeliveryFailed, gone: true}},
	} {
		if got := decide(c.a, c.before, DefaultSchedule, same); got != c.want {
			t.Errorf("%s: decide = %+v, want %+v", c.name, got, c.want)
		}
	}
}
