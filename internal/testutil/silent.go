package testutil

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// SilentServer listens on loopback, accepts every connection and never
// answers: the server a bounded fetch must give up on. It counts the
// connections it accepted (a refused fetch must make none) and closes
// them when the test ends.
type SilentServer struct {
	Addr     string
	accepted atomic.Int64
}

// Accepted is how many connections reached the server.
func (s *SilentServer) Accepted() int64 { return s.accepted.Load() }

// NewSilentServer starts one for the test.
func NewSilentServer(t testing.TB) *SilentServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &SilentServer{Addr: ln.Addr().String()}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return s
}
