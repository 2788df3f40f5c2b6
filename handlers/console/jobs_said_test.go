package console

import "testing"

// TestCancelSaid: a cancel of a running job leaves it running until its
// attempt returns, so before and after are both "running"; the console
// says it is asked to stop, not that there is nothing to cancel (what it
// said before: a CI run of TestJobsBrowser caught it, cancelling a retry
// that had just started).
func TestCancelSaid(t *testing.T) {
	for _, c := range []struct{ before, after, want string }{
		{"running", "running", "Job 7 is running: it is asked to stop and will not be tried again."},
		{"retryable", "cancelled", "Job 7 is cancelled: it will not be tried again."},
		{"available", "cancelled", "Job 7 is cancelled: it will not be tried again."},
		{"completed", "completed", "Job 7 is completed: nothing to cancel."},
		{"cancelled", "cancelled", "Job 7 is cancelled: nothing to cancel."},
	} {
		if got := cancelSaid("7", c.before, c.after); got != c.want {
			t.Errorf("cancel %s -> %s: %q, want %q", c.before, c.after, got, c.want)
		}
	}
}
