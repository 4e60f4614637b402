// Package fakemc is a small Minecraft server for the demo mode, the tests and the
// benchmarks: it answers status with its own name and tells a player which backend
// they reached, or hands the connection to a custom login handler.
package fakemc

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	proxyproto "github.com/pires/go-proxyproto"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// LoginFunc takes over a connection after the login start was read.
type LoginFunc func(c net.Conn, br *bufio.Reader, hs mc.Handshake, ls mc.LoginStart)

// Options shape the fake server.
type Options struct {
	Name    string
	MOTD    string // defaults to Name
	Online  int
	Max     int // 0 = 20
	Version string
	// ProxyProtocol expects a PROXY header first and records it.
	ProxyProtocol bool
	// OnLogin replaces the default "You reached <name>" disconnect.
	OnLogin LoginFunc
	// StatusDelay slows status answers (to test collapsing of concurrent pings).
	StatusDelay time.Duration
	// Legacy answers 0xFE pings with a legacy reply.
	Legacy bool
}

// Server is a running fake backend.
type Server struct {
	opts Options
	ln   net.Listener
	wg   sync.WaitGroup

	StatusRequests atomic.Int64
	Logins         atomic.Int64
	LegacyPings    atomic.Int64

	mu          sync.Mutex
	handshakes  []mc.Handshake
	proxySource []string
	online      atomic.Int64
	conns       map[net.Conn]struct{}
}

// Start listens on addr ("127.0.0.1:0" for tests).
func Start(addr string, opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if opts.MOTD == "" {
		opts.MOTD = opts.Name
	}
	if opts.Max == 0 {
		opts.Max = 20
	}
	if opts.Version == "" {
		opts.Version = "fakemc"
	}
	s := &Server{opts: opts, ln: ln, conns: map[net.Conn]struct{}{}}
	s.online.Store(int64(opts.Online))
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is the host:port players reach it at.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// SetOnline changes the player count reported in status (capacity tests).
func (s *Server) SetOnline(n int) { s.online.Store(int64(n)) }

// Handshakes returns the handshakes received (to check domain_rewrite).
func (s *Server) Handshakes() []mc.Handshake {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]mc.Handshake(nil), s.handshakes...)
}

// ProxySources returns the client addresses announced in PROXY headers.
func (s *Server) ProxySources() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.proxySource...)
}

// Close stops listening and closes live connections.
func (s *Server) Close() error {
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			_ = s.serve(c)
		}()
	}
}

func (s *Server) serve(c net.Conn) error {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	if s.opts.ProxyProtocol {
		h, err := proxyproto.Read(br)
		if err != nil {
			return err
		}
		src := "local" // a LOCAL header (a health check) names no client
		if !h.Command.IsLocal() && h.SourceAddr != nil {
			src = h.SourceAddr.String()
		}
		s.mu.Lock()
		s.proxySource = append(s.proxySource, src)
		s.mu.Unlock()
	}
	first, err := br.Peek(1)
	if err != nil {
		return err
	}
	if first[0] == 0xFE && s.opts.Legacy {
		ping, _, err := mc.ReadLegacyPing(br)
		if err != nil {
			return err
		}
		s.LegacyPings.Add(1)
		_, err = c.Write(mc.EncodeLegacyPingReply(ping.Form, mc.LegacyStatus{Protocol: 78, Version: s.opts.Version, MOTD: s.opts.MOTD, Online: int(s.online.Load()), Max: s.opts.Max}))
		return err
	}
	hs, _, err := mc.ReadHandshake(br)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.handshakes = append(s.handshakes, hs)
	s.mu.Unlock()
	switch hs.NextState {
	case mc.StateStatus:
		return s.status(c, br, hs)
	case mc.StateLogin, mc.StateTransfer:
		ls, _, err := mc.ReadLoginStart(br, hs.ProtocolVersion)
		if err != nil {
			return err
		}
		s.Logins.Add(1)
		_ = c.SetReadDeadline(time.Time{})
		if s.opts.OnLogin != nil {
			s.opts.OnLogin(c, br, hs, ls)
			return nil
		}
		_, err = c.Write(mc.EncodeLoginDisconnect(fmt.Sprintf("You reached %s (as %s)", s.opts.Name, ls.Name)))
		return err
	}
	return errors.New("unknown next state")
}

func (s *Server) status(c net.Conn, br *bufio.Reader, hs mc.Handshake) error {
	if err := mc.ReadStatusRequest(br); err != nil {
		return err
	}
	s.StatusRequests.Add(1)
	if s.opts.StatusDelay > 0 {
		time.Sleep(s.opts.StatusDelay)
	}
	var r mc.StatusResponse
	r.Version.Name = s.opts.Version
	r.Version.Protocol = hs.ProtocolVersion
	r.Players.Max = s.opts.Max
	r.Players.Online = int(s.online.Load())
	r.Description, _ = json.Marshal(map[string]string{"text": s.opts.MOTD})
	body, _ := json.Marshal(r)
	if _, err := c.Write(mc.EncodeStatusResponse(body)); err != nil {
		return err
	}
	payload, err := mc.ReadPing(br)
	if err != nil {
		return nil
	}
	_, err = c.Write(mc.EncodePing(payload))
	return err
}
