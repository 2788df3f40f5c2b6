package ratelimit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// fakeRedis listens on loopback and treats every connection with serve:
// enough of a Redis that misbehaves to get the client's real errors.
func fakeRedis(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// hang reads what the client sends and never answers, like a Redis that
// hangs or a balancer with nothing behind it.
func hang(c net.Conn) { _, _ = io.Copy(io.Discard, c) }

// hangUp closes the connection as soon as the client has sent something.
func hangUp(c net.Conn) {
	_, _ = c.Read(make([]byte, 64))
	c.Close()
}

// loading answers every command with the error a restarting Redis gives.
func loading(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		// A command is an array of bulk strings: "*<n>", then n times
		// "$<len>" and the argument, each line ending in CRLF.
		head, err := r.ReadString('\n')
		if err != nil {
			return
		}
		n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "*")))
		for range 2 * n {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
		}
		if _, err := io.WriteString(c, "-LOADING Redis is loading the dataset in memory\r\n"); err != nil {
			return
		}
	}
}

// testClient is a go-redis client to addr that neither retries commands
// nor dials, and gives up reading after readTimeout.
func testClient(t *testing.T, addr string, readTimeout time.Duration) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr: addr, DialerRetries: 1, MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: readTimeout, PoolSize: 1, PoolTimeout: 50 * time.Millisecond,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestUnreachable(t *testing.T) {
	ctx := context.Background()
	// Nothing listens on port 1.
	refused := testClient(t, "127.0.0.1:1", time.Second).Ping(ctx).Err()
	closed := testClient(t, fakeRedis(t, hangUp), time.Second).Ping(ctx).Err()
	slow := testClient(t, fakeRedis(t, hang), 50*time.Millisecond)
	lateAnswer := slow.Ping(ctx).Err()
	// The one connection is busy with a hung call: the next waits for it.
	busy := testClient(t, fakeRedis(t, hang), 5*time.Second)
	go busy.Ping(ctx)
	for deadline := time.Now().Add(5 * time.Second); busy.PoolStats().TotalConns == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	poolTimeout := busy.Ping(ctx).Err()
	replied := testClient(t, fakeRedis(t, loading), time.Second).Ping(ctx).Err()
	expired, cancel := context.WithTimeout(ctx, 0)
	defer cancel()
	_, dialTimeout := (&net.Dialer{}).DialContext(expired, "tcp", "127.0.0.1:1")

	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", refused, true},
		{"closed by the server (EOF)", closed, true},
		{"dial timeout", dialTimeout, true},
		{"wrapped by the store", fmt.Errorf("redis take: %w", refused), true},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true},
		{"broken pipe", &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}, true},
		{"name does not resolve", &net.DNSError{Err: "no such host", Name: "redis.invalid", IsNotFound: true}, true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},

		{"no error", nil, false},
		{"waiting for a pooled connection", poolTimeout, false},
		{"answer later than the read timeout", lateAnswer, false},
		{"the caller's deadline", context.DeadlineExceeded, false},
		{"the caller went away", context.Canceled, false},
		{"an error the server replied with", replied, false},
		// The words are not the evidence: only the error's type is.
		{"text that looks like an outage", errors.New("dial tcp 127.0.0.1:6379: connect: connection refused"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unreachable(tt.err); got != tt.want {
				t.Errorf("unreachable(%T %v) = %v, want %v", tt.err, tt.err, got, tt.want)
			}
		})
	}
	if !errors.Is(poolTimeout, redis.ErrPoolTimeout) {
		t.Errorf("the busy pool gave %v, want redis.ErrPoolTimeout", poolTimeout)
	}
	if !redis.IsLoadingError(replied) {
		t.Errorf("the loading server gave %v, want a LOADING reply", replied)
	}
}
