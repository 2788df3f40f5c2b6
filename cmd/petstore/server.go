package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"petstore/db"
	"petstore/handlers"
	"petstore/web"
	"petstore/web/events"
	"petstore/web/ratelimit"
)

// Limits of the calls to the shared counters. When Redis has answered no
// call for redisTimeout it counts as down and the limiter fails open to
// in-process counting, which is no longer exact across instances. A call
// that is only slow while Redis answers others (a burst queueing for
// pooled connections) waits up to redisMaxWait instead: the client's own
// timeouts must not end it sooner.
const (
	redisTimeout = time.Second
	redisMaxWait = 5 * time.Second
)

// Server is one running instance: the app and what it holds open.
type Server struct {
	App   *fiber.App
	Store *db.Store
	Hub   *events.Hub
	redis *redis.Client
	stop  context.CancelFunc
}

// NewServer opens and migrates the database and builds the app. It does
// not listen.
func NewServer(ctx context.Context, cfg *Config, logger *slog.Logger) (*Server, error) {
	store, err := db.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if err := store.Migrate(ctx); err != nil {
		store.Close()
		return nil, err
	}
	bg, stop := context.WithCancel(context.Background())
	s := &Server{Store: store, stop: stop}

	metrics := web.NewMetrics(store.DB().DB)
	counters := ratelimit.Store(ratelimit.NewMemoryStore())
	var shared *ratelimit.FailoverStore
	if cfg.Redis != nil {
		opt := *cfg.Redis
		opt.DialTimeout = redisTimeout
		opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = redisMaxWait, redisMaxWait, redisMaxWait
		opt.MaxRetries = 0
		s.redis = redis.NewClient(&opt)
		if err := s.redis.Ping(ctx).Err(); err != nil {
			logger.Warn("REDIS_URL unreachable: counting rate limits in process until it answers", "err", err)
		}
		var ropts []ratelimit.RedisOption
		if cfg.RedisPrefix != "" {
			ropts = append(ropts, ratelimit.WithKeyPrefix(cfg.RedisPrefix))
		}
		shared = ratelimit.NewFailoverStore(ratelimit.NewRedisStore(s.redis, ropts...), counters, logger)
		shared.Timeout, shared.MaxWait = redisTimeout, redisMaxWait
		shared.OnFallback = metrics.RedisFallback
		metrics.WatchRedis(shared.Healthy)
		counters = shared
	}
	limiter := ratelimit.New(ratelimit.Config{
		Store: counters, Bans: store, Strikes: cfg.BanStrikes, BanBase: cfg.BanDuration,
	})

	s.Hub = events.NewHub(store, logger)
	store.OnEvent(s.Hub.Wake)
	if store.Dialect() == db.DialectPostgres {
		go func() {
			_, dsn, _ := db.ParseURL(cfg.DatabaseURL) // validated by LoadConfig; adds the connect timeout
			if err := s.Hub.ListenPostgres(bg, dsn); err != nil && !errors.Is(err, context.Canceled) {
				logger.Error("event listener stopped", "err", err)
			}
		}()
	}

	h := &handlers.Handler{
		Store: store, Limiter: limiter, Shared: shared, Proxies: cfg.Proxies, Logger: logger, Events: s.Hub,
		Sessions: web.NewSessions(cfg.SessionKeys), Metrics: metrics,
		Config: handlers.Config{Deprecated: cfg.Deprecated, Sunset: cfg.Sunset, ShopMaxOpenUnits: cfg.ShopMaxOpenUnits},
		Now:    func() time.Time { return time.Now().UTC() },
	}
	s.App = handlers.NewApp(h)
	return s, nil
}

// Serve answers on ln until ctx is done, then shuts down gracefully:
// stop accepting, end event streams, finish in-flight requests (10 s).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- s.App.Listener(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.Hub.Close()
	if err := s.App.ShutdownWithTimeout(10 * time.Second); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// Close releases the database, Redis and background work.
func (s *Server) Close() {
	s.stop()
	s.Hub.Close()
	if s.redis != nil {
		s.redis.Close()
	}
	s.Store.Close()
}
