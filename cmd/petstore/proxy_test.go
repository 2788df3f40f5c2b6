package main

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// tcpProxy forwards connections from a loopback port to a target address,
// so a test can take a dependency (PostgreSQL, Redis) away from a running
// server and give it back: Cut closes the listener and every open
// connection, so new connections are refused as if the server were gone;
// Stall closes every open connection but accepts new ones and never answers
// on them, like a server that hangs; Restore forwards again.
type tcpProxy struct {
	t      testing.TB
	addr   string // the proxy's own address, stable across Cut and Restore
	target string

	mu      sync.Mutex
	ln      net.Listener
	stalled bool
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
}

// newProxy starts a proxy to target and stops it when the test ends.
func newProxy(t testing.TB, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	p := &tcpProxy{t: t, addr: ln.Addr().String(), target: target, conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(func() {
		p.Cut()
		p.wg.Wait()
	})
	return p
}

// Addr is host:port to dial instead of the target.
func (p *tcpProxy) Addr() string { return p.addr }

// Cut takes the target away: the listener closes (new connections are
// refused) and every forwarded connection is closed in both directions.
func (p *tcpProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	p.closeAll()
}

// Stall closes every open connection and holds new ones without an answer.
func (p *tcpProxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = true
	p.closeAll()
}

// closeAll closes every connection; p.mu is held.
func (p *tcpProxy) closeAll() {
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// Restore forwards again: after Stall it closes the held connections, so
// their clients reconnect; after Cut it listens on the proxy's port again
// (the port was free a moment ago: a few quick retries cover the kernel
// releasing it).
func (p *tcpProxy) Restore() {
	p.t.Helper()
	p.mu.Lock()
	p.stalled = false
	p.closeAll()
	listening := p.ln != nil
	p.mu.Unlock()
	if listening {
		return
	}
	var ln net.Listener
	var err error
	for range 50 {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

// serve accepts on ln until it is closed.
func (p *tcpProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by Cut
			}
			if p.hold(c) {
				continue
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.forward(c)
			}()
		}
	}()
}

// forward copies both ways between the client connection and a fresh
// connection to the target, until either side or Cut closes them.
func (p *tcpProxy) forward(client net.Conn) {
	server, err := net.DialTimeout("tcp", p.target, 2*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	if !p.track(client, server) {
		return // cut while dialling
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src) // ends with an error when cut: that is the point
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done
	<-done
	p.untrack(client, server)
}

// hold keeps c open without an answer while the proxy is stalled.
func (p *tcpProxy) hold(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalled {
		p.conns[c] = struct{}{}
	}
	return p.stalled
}

// track registers a forwarded pair, or closes it when the proxy was cut
// in the meantime.
func (p *tcpProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil || p.stalled {
		for _, c := range cs {
			_ = c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *tcpProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}
