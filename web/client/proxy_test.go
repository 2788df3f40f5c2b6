package client_test

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// proxy is a TCP relay in front of the real server: the test can take the
// address dark (stop: listener and every connection closed, so a client
// meets refused connections) and bring it back on the same port (start),
// and can lose the next answers (dropAnswers: the server's answer is read,
// so the server has committed, then the client's connection is closed
// without it).
type proxy struct {
	t           *testing.T
	addr        string // host:port, kept across stop and start
	target      string
	dropAnswers atomic.Int32

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{t: t, addr: "127.0.0.1:0", target: target, conns: map[net.Conn]struct{}{}}
	p.start()
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) url() string { return "http://" + p.addr }

func (p *proxy) start() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Error(err) // Error: start may run on a timer's goroutine
		return
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.relay(c)
		}
	}()
}

func (p *proxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *proxy) relay(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(client, server) {
		client.Close()
		server.Close()
		return
	}
	go func() {
		_, _ = io.Copy(server, client)
		server.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			if p.dropAnswers.Load() > 0 && p.dropAnswers.Add(-1) >= 0 {
				// The server has answered (and committed): lose it.
				client.Close()
				server.Close()
				return
			}
			if _, werr := client.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	client.Close()
	server.Close()
}
