// Package queue names what the process's one River client needs from each
// kind of job it works (webhook deliveries, catalog imports): its queue and
// its workers. One client per process matters beyond thrift: River's
// rescuer, on whichever client is the leader, discards a stuck job whose
// kind that client has no worker for, so every client must know every kind.
package queue

import "github.com/riverqueue/river"

// Jobs is a kind of job the process's River client works.
type Jobs interface {
	// Queue is the River queue the jobs are inserted into and worked from.
	Queue() string
	// QueueConfig is how that queue is worked (MaxWorkers).
	QueueConfig() river.QueueConfig
	// AddWorkers registers the kind's worker.
	AddWorkers(w *river.Workers) error
}
