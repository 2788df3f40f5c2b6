package main

import "time"

// CPU per request. A row's rate moves with everything else on the machine
// (two runs of the same code here differ by 20% and more); the CPU time
// the server, and its database's PostgreSQL backends, spend per answered
// request moves far less, and is what a change to the code changes.

// peakCPU wraps next (an OnPeak hook, or nil) so that it also measures,
// with the cpuMeter of the import rows, the server's (pid) and backends'
// CPU time over the peak phase, stored in *used when the phase ends.
func peakCPU(pid int, backends string, used *cpuUse, next func() func()) func() func() {
	return func() func() {
		done := func() {}
		if next != nil {
			done = next()
		}
		began, m := time.Now(), startCPU(pid, backends)
		return func() {
			m.sample()
			*used = m.used(time.Since(began))
			done()
		}
	}
}

// perRequest is seconds of CPU spread over n requests, 0 when none.
func perRequest(seconds float64, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return time.Duration(seconds / float64(n) * float64(time.Second))
}
