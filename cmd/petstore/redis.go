package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"petstore/web/ratelimit"
)

// How the rate-limit counters use Redis (see ratelimit.FailoverStore).
// Redis counts as down only when it cannot be reached: a call or the probe
// (a PING every redisProbeInterval on a connection of its own) is refused
// or cut, or a PING gets no answer within redisProbeTimeout after Redis
// has answered nothing at all for redisDownAfter while this process ran on
// time. A call that is only slow (queueing for a pooled connection on a
// busy machine, where answers come seconds late) waits and stays exact, up
// to redisMaxWait, two thirds of the app's 30s WriteTimeout (past it the
// answer could hardly be written); at that bound it alone is counted in
// process. A hung Redis (connections accepted, never answered) holds a
// request about redisDownAfter+redisProbeInterval+redisProbeTimeout (4.5s)
// on a machine that keeps up: then the probe declares the outage and
// releases every waiting request to in-process counting.
const (
	redisMaxWait       = 20 * time.Second
	redisProbeInterval = 500 * time.Millisecond
	redisProbeTimeout  = time.Second
	redisDownAfter     = 3 * time.Second
	// redisPoolPerCPU sizes the calls' pool when REDIS_URL does not
	// (pool_size). A decision holds its connection for one round trip;
	// Redis runs them one at a time anyway, so more connections would not
	// answer a burst sooner, they only make it queue in Redis rather than
	// in the pool. go-redis's own default, spelt out: 200 connections
	// did not shorten the waits of a 1,000-request burst on a busy
	// 2-core machine (max 4.2s against 3.9s with 20).
	redisPoolPerCPU = 10
)

// sharedCounters are the rate-limit counters kept in Redis, behind the
// in-process fallback, and the two clients they hold.
type sharedCounters struct {
	store        *ratelimit.FailoverStore
	calls, probe *redis.Client
}

// openSharedCounters connects to Redis as cfg says and returns the counter
// store, which counts in process while Redis is unreachable. It probes Redis
// once before returning, so that an unreachable Redis is logged at start
// (naming REDIS_URL), then every redisProbeInterval until bg ends.
func openSharedCounters(ctx, bg context.Context, cfg *Config, local ratelimit.Store, logger *slog.Logger) *sharedCounters {
	redis.SetLogger(redisLog{logger})
	opt := *cfg.Redis
	// A refused connection fails at once instead of after five dials;
	// no command is retried, since a Take retried after a lost answer
	// could count one request twice.
	opt.DialerRetries, opt.MaxRetries = 1, -1
	opt.DialTimeout = redisMaxWait
	opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = redisMaxWait, redisMaxWait, redisMaxWait
	if opt.PoolSize == 0 {
		opt.PoolSize = redisPoolPerCPU * runtime.GOMAXPROCS(0)
	}
	calls := redis.NewClient(&opt)

	// The probe's own single connection: request traffic cannot starve it.
	popt := *cfg.Redis
	popt.PoolSize, popt.MinIdleConns, popt.MaxIdleConns, popt.MaxActiveConns = 1, 0, 1, 1
	popt.DialerRetries, popt.MaxRetries = 1, -1
	popt.DialTimeout, popt.ReadTimeout, popt.WriteTimeout, popt.PoolTimeout = redisProbeTimeout, redisProbeTimeout, redisProbeTimeout, redisProbeTimeout
	popt.ContextTimeoutEnabled = true
	probe := redis.NewClient(&popt)

	var ropts []ratelimit.RedisOption
	if cfg.RedisPrefix != "" {
		ropts = append(ropts, ratelimit.WithKeyPrefix(cfg.RedisPrefix))
	}
	store := ratelimit.NewFailoverStore(ratelimit.NewRedisStore(calls, ropts...), local, logger)
	store.Ping = func(ctx context.Context) error { return probe.Ping(ctx).Err() }
	store.ProbeInterval, store.ProbeTimeout, store.DownAfter, store.MaxWait = redisProbeInterval, redisProbeTimeout, redisDownAfter, redisMaxWait
	store.Probe(ctx)
	go store.Run(bg)
	return &sharedCounters{store: store, calls: calls, probe: probe}
}

// Close closes both clients.
func (c *sharedCounters) Close() {
	c.calls.Close()
	c.probe.Close()
}

// redisLog writes go-redis's own log lines (a dial that failed, a bad
// connection dropped from its pool, a recovered panic) into the JSON log,
// where they would otherwise be plain text on stderr. go-redis gives them
// no level; each is a problem it worked around, so a warning. go-redis
// keeps one logger per process: the last server made sets it.
type redisLog struct{ logger *slog.Logger }

// Printf implements go-redis's internal.Logging.
func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.logger.WarnContext(ctx, "redis client", "detail", strings.TrimSpace(fmt.Sprintf(format, v...)))
}
