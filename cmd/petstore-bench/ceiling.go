package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"petstore/db"
	"petstore/web"
)

// bareServerCmd is the hidden first argument that turns the bench binary
// into the bare ceiling server: `petstore-bench bare-server ADDR BODYFILE`.
// It runs as a process of its own, like the real server, so both compete
// with the generator for the CPU in the same way.
const bareServerCmd = "bare-server"

// bareRoute is the bare server's one route.
const bareRoute = "/api/pets"

// runBareServer serves body as JSON on GET /api/pets at addr with a plain
// Fiber v2 app (no middleware but compression, no database) until SIGTERM.
func runBareServer(addr, bodyFile string) error {
	body, err := os.ReadFile(bodyFile)
	if err != nil {
		return err
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ReadTimeout: 10 * time.Second, IdleTimeout: 30 * time.Second})
	// The store compresses text answers for clients that ask, as the
	// generator does (Go's transport sends Accept-Encoding: gzip): the
	// ceiling runs the store's own compression rule (web.Compress), and
	// tags the body as the API does (the hash of the body), so the
	// compressed bytes are kept and reused as the store's are.
	etag := web.BodyTag(body)
	app.Use(web.Compress())
	app.Get(bareRoute, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		c.Set(fiber.HeaderETag, etag)
		return c.Send(body)
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = app.ShutdownWithTimeout(5 * time.Second)
	}()
	return app.Listen(addr)
}

// measureBare starts the bare server with body (the real API's 20-pet
// page) and attacks it like the real endpoints, at the maximum rate.
func measureBare(ctx context.Context, dir string, body []byte, s attackSettings) (measurement, error) {
	file := filepath.Join(dir, "pets-page.json")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		return measurement{}, err
	}
	exe, err := os.Executable()
	if err != nil {
		return measurement{}, err
	}
	port, err := freePort()
	if err != nil {
		return measurement{}, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(exe, bareServerCmd, addr, file)
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return measurement{}, fmt.Errorf("start bare server: %w", err)
	}
	srv := &server{cmd: cmd, base: "http://" + addr, stderr: stderr, done: make(chan error, 1)}
	go func() { srv.done <- cmd.Wait() }()
	defer srv.stop()
	if err := waitFor(ctx, srv, bareRoute); err != nil {
		return measurement{}, err
	}
	tr := vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodGet, URL: srv.base + bareRoute})
	s.Half = 0 // the ceiling is a rate; its latency at half load says nothing about the store
	return measure(ctx, tr, s)
}

// waitFor polls path on srv until it answers 200.
func waitFor(ctx context.Context, srv *server, path string) error {
	for range 100 {
		select {
		case err := <-srv.done:
			srv.done <- err
			return fmt.Errorf("bare server exited: %v\n%s", err, srv.stderr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if resp, err := http.Get(srv.base + path); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return errors.New("bare server did not answer within 5s")
}

// measureRawQuery runs the pets list's page query (db.Store.FindPets with
// limit 20, exactly what GET /api/pets?limit=20 runs) in a closed loop from
// workers goroutines on a store of its own, for warmup then d. It reports
// queries per second and their latency.
func measureRawQuery(ctx context.Context, databaseURL string, workers int, warmup, d time.Duration) (phase, error) {
	store, err := db.Open(ctx, databaseURL, wallClock)
	if err != nil {
		return phase{}, err
	}
	defer store.Close()
	filter := db.PetFilter{Page: db.Page{Limit: 20}}
	ph, err := closedLoop(ctx, workers, warmup, d, func(ctx context.Context) error {
		pets, _, err := store.FindPets(ctx, filter)
		if err == nil && len(pets) != 20 {
			err = fmt.Errorf("FindPets returned %d pets, want 20", len(pets))
		}
		return err
	})
	if err != nil {
		return phase{}, fmt.Errorf("raw query: %w", err)
	}
	return ph, nil
}

// closedLoop calls op from workers goroutines, each as soon as its last
// call returned, for warmup (not measured) and then d. It reports calls per
// second and their latency; the first error ends the run.
func closedLoop(ctx context.Context, workers int, warmup, d time.Duration, op func(context.Context) error) (phase, error) {
	loop := func(d time.Duration) (phase, error) {
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		var (
			mu       sync.Mutex
			all      []time.Duration
			firstErr error
			wg       sync.WaitGroup
		)
		start := time.Now()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []time.Duration
				for ctx.Err() == nil {
					t0 := time.Now()
					err := op(ctx)
					if ctx.Err() != nil {
						break // cut off by the deadline: not a whole call
					}
					if err != nil {
						mu.Lock()
						firstErr = cmpOr(firstErr, err)
						mu.Unlock()
						return
					}
					mine = append(mine, time.Since(t0))
				}
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		if firstErr != nil {
			return phase{}, firstErr
		}
		slices.Sort(all)
		return phase{Requests: len(all), Rate: float64(len(all)) / elapsed.Seconds(),
			P50: percentile(all, 0.50), P99: percentile(all, 0.99)}, nil
	}
	if warmup > 0 {
		if _, err := loop(warmup); err != nil {
			return phase{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return phase{}, err
	}
	return loop(d)
}

// cmpOr keeps the first non-nil error.
func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
