package ratelimit

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// unreachable reports whether err says that the counter store cannot be
// reached at all: no connection could be made (refused, no route, a name
// that does not resolve, a dial that timed out) or the one in use broke
// (reset, broken pipe, closed by the server: EOF). Only such an error, or
// a failed probe, fails the limiter open to per-instance counting.
//
// Everything else is not an outage: a burst queueing for a pooled
// connection (redis.ErrPoolTimeout), an answer that is late on a busy
// machine (a read deadline), the caller's own deadline, or an error the
// server replied with. The error is classified by its type, never by its
// text, which drivers and operating systems word as they like.
func unreachable(err error) bool {
	if err == nil || errors.Is(err, redis.ErrPoolTimeout) {
		return false
	}
	// Before the context check: a dial that hit its deadline carries
	// an error that also matches context.DeadlineExceeded.
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.As(err, &dns):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	for _, errno := range connectionErrnos {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// connectionErrnos are the system errors of a connection that cannot be
// made or broke while in use.
var connectionErrnos = []error{
	syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
	syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN,
}
