package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"petstore/db"
	"petstore/handlers"
	"petstore/web"
	"petstore/web/browser"
	"petstore/web/email"
	"petstore/web/events"
	"petstore/web/imports"
	"petstore/web/queue"
	"petstore/web/ratelimit"
	"petstore/web/webhooks"
)

// Server is one running instance: the app and what it holds open.
type Server struct {
	App   *fiber.App
	Store *db.Store
	Hub   *events.Hub
	// Queue works the background jobs (webhook deliveries, imports) and
	// relays committed events to them until shutdown.
	Queue *queue.Queue
	// Ops is the operations listener's handler (/metrics, pprof when
	// enabled), nil when PETSTORE_METRICS_ADDR is unset: see ServeOps.
	Ops   http.Handler
	redis *sharedCounters
	stop  context.CancelFunc
	log   *slog.Logger
	// tracer exports the spans (SPEC §21); nil when tracing is off.
	tracer *sdktrace.TracerProvider
	// stopping is when Serve began to shut down; zero until then.
	stopping time.Time
}

// NewServer opens and migrates the database and builds the app. It does
// not listen. now is the one clock every part reads domain time from (the
// store, the limiter, the handlers): main passes systemClock, in-process
// tests a pinned one.
func NewServer(ctx context.Context, cfg *Config, logger *slog.Logger, now func() time.Time) (*Server, error) {
	// Tracing is set up here once; every part that makes spans is handed
	// the provider (nil: off, and no part wraps anything).
	var tracer *sdktrace.TracerProvider
	var tp trace.TracerProvider
	var opts []db.OpenOption
	if cfg.Tracing != nil {
		var err error
		if tracer, err = startTracing(cfg.Tracing, logger); err != nil {
			return nil, err
		}
		tp = tracer
		opts = append(opts, db.WithTracing(tracer))
		// A record logged within a span names it (trace_id, span_id).
		logger = slog.New(web.TraceIDs(logger.Handler()))
	}
	store, err := db.Open(ctx, cfg.DatabaseURL, now, opts...)
	if err != nil {
		shutdownTracing(tracer, logger)
		return nil, err
	}
	store.Currency = cfg.Currency
	store.Secrets = cfg.SecretKeys
	if err := store.Migrate(ctx); err != nil {
		store.Close()
		return nil, err
	}
	if err := sealSecrets(ctx, store, logger); err != nil {
		store.Close()
		return nil, err
	}
	if err := store.AdoptCurrency(ctx); err != nil {
		store.Close()
		return nil, err
	}
	bg, stop := context.WithCancel(context.Background())
	s := &Server{Store: store, stop: stop, log: logger, tracer: tracer}

	metrics := web.NewMetrics(store.DB().DB)
	metrics.WatchOrderBatches(store.OrderBatches)
	metrics.WatchTxRetries(db.TxRetryCodes(), store.TxRetries)
	counters := ratelimit.Store(ratelimit.NewMemoryStore())
	var shared *ratelimit.FailoverStore
	if cfg.Redis != nil {
		s.redis = openSharedCounters(ctx, bg, cfg, counters, logger)
		shared = s.redis.store
		shared.OnFallback = metrics.RedisFallback
		metrics.WatchRedis(shared.Healthy)
		counters = shared
	}
	limiter := ratelimit.New(ratelimit.Config{
		Store: counters, Bans: store, Strikes: cfg.BanStrikes, BanBase: cfg.BanDuration, Now: now,
	})

	s.Hub = events.NewHub(store, logger)
	store.OnEvent(s.Hub.Wake)

	h := &handlers.Handler{
		Store: store, Limiter: limiter, Shared: shared, Proxies: cfg.Proxies, Logger: logger, Events: s.Hub,
		Sessions: browser.NewSessions(cfg.SessionKeys), Metrics: metrics,
		Config: handlers.Config{Deprecated: cfg.Deprecated, Sunset: cfg.Sunset, ShopMaxOpenUnits: cfg.ShopMaxOpenUnits,
			MetricsElsewhere: cfg.MetricsAddr != "", StaffTwoFactorRequired: cfg.StaffTwoFactorRequired},
		Now: now, Load: &web.Load{}, Tracer: tp,
	}
	// The queue is the process's one River client: each kind of job
	// registers with it, then it starts (as miniflux's cli starts its
	// worker pool once the rest is built).
	q := queue.New(store, queue.Config{Logger: logger, Tracer: tp})
	h.Queue = q
	metrics.Register(q.Collector())
	// Another instance's commit wakes the relay too (its NOTIFY), not
	// only the relay's poll: whichever instance holds the relay turns the
	// events into jobs at once.
	s.Hub.Notified = q.Wake
	if store.Dialect() == db.DialectPostgres {
		go func() {
			_, dsn, _ := db.ParseURL(cfg.DatabaseURL) // validated by LoadConfig; adds the connect timeout
			if err := s.Hub.ListenPostgres(bg, dsn); err != nil && !errors.Is(err, context.Canceled) {
				logger.Error("event listener stopped", "err", err)
			}
		}()
	}
	wm := webhooks.NewMetrics(store)
	metrics.Register(wm.Collectors()...)
	h.Deliveries, err = webhooks.New(q, webhooks.Config{
		Store: store, Now: now, Logger: logger, AllowPrivate: cfg.WebhookAllowPrivate, Metrics: wm, Load: h.Load, Tracer: tp,
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	em := email.NewMetrics(store)
	metrics.Register(em.Collectors()...)
	h.Emails, err = email.New(q, email.Config{
		Store: store, Transport: cfg.SMTP, From: cfg.MailFrom, BaseURL: cfg.PublicURL, Now: now, Logger: logger, Metrics: em, Load: h.Load, Tracer: tp,
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	if h.Imports, err = imports.New(store, q, logger); err != nil {
		s.Close()
		return nil, err
	}
	if s.App, err = handlers.NewApp(h); err != nil {
		s.Close()
		return nil, err
	}
	if err := q.Start(bg); err != nil {
		s.Close()
		return nil, err
	}
	s.Queue = q
	if cfg.MetricsAddr != "" {
		s.Ops = opsHandler(metrics.HTTPHandler(), cfg.PprofAddr != "")
	}
	return s, nil
}

// Serve answers on ln until ctx is done, then shuts down gracefully:
// stop accepting, end event streams, finish in-flight requests and
// webhook attempts (10 s), and let the last closed connections linger
// (web.Lingering) within the same grace.
// It logs "shutting down" with what ended ctx (main's: the signal).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	lingering := web.Lingering(ln)
	errc := make(chan error, 1)
	go func() { errc <- s.App.Listener(lingering) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.stopping = time.Now()
	s.log.Info("shutting down", "cause", context.Cause(ctx).Error())
	s.Hub.Close()
	// Jobs running (webhook attempts) finish within the same grace as
	// requests; no new one starts.
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		s.stopQueue(shutdownGrace)
	}()
	err := s.App.ShutdownWithTimeout(shutdownGrace)
	graceLeft, cancel := context.WithDeadline(context.Background(), s.stopping.Add(shutdownGrace))
	_ = lingering.Wait(graceLeft)
	cancel()
	<-stopped
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// shutdownGrace is how long in-flight requests and jobs (webhook
// attempts) get to finish once shutdown starts (SPEC §11).
const shutdownGrace = 10 * time.Second

// stopQueue stops the queue, waiting up to grace for the jobs running;
// once stopped, stopping again returns at once.
func (s *Server) stopQueue(grace time.Duration) {
	if s.Queue == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := s.Queue.Stop(ctx); err != nil {
		s.log.Warn("jobs cut off by the shutdown; they will run again", "err", err)
	}
}

// Close releases the database, Redis and background work. After Serve
// shut down it logs "stopped" with how long the shutdown took.
func (s *Server) Close() {
	s.stopQueue(time.Second)
	s.stop()
	s.Hub.Close()
	if s.redis != nil {
		s.redis.Close()
	}
	s.Store.Close()
	shutdownTracing(s.tracer, s.log)
	if !s.stopping.IsZero() {
		s.log.Info("stopped", "durationMs", float64(time.Since(s.stopping).Microseconds())/1000)
	}
}

// shutdownTracing sends the spans still buffered and stops the exporter,
// within tracingShutdownGrace; nil (tracing off) does nothing.
func shutdownTracing(tp *sdktrace.TracerProvider, logger *slog.Logger) {
	if tp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), tracingShutdownGrace)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		logger.Warn("tracing: spans not sent at shutdown", "err", err)
	}
}
