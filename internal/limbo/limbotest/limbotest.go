// Package limbotest runs a small limbo server for tests and measurements: it
// accepts offline-mode logins on a TCP address, finishes them as the proxy
// does, and hands each player to a script (enter the limbo, hold, kick).
package limbotest

import (
	"bufio"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/session"
)

// Script is what happens to one logged-in player; its error is reported to
// Options.Done.
type Script func(ctx context.Context, p *limbo.Player, name string) error

// Options configure a Server.
type Options struct {
	// Threshold is the compression threshold given to players (-1: off).
	Threshold int
	// ReaderSize is each connection's read buffer (default mc.ReaderSize, as the proxy's).
	ReaderSize int
	// Script runs after the login; the connection closes when it returns.
	Script Script
	// Done is told how each player's script ended (nil: ignored).
	Done func(name string, err error)
}

// Server accepts players until Close.
type Server struct {
	// Addr is where it listens.
	Addr string

	ln     net.Listener
	opts   Options
	zlib   *mc.Zlib
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Listen starts a server on addr ("127.0.0.1:0" for any port).
func Listen(addr string, opts Options) (*Server, error) {
	if opts.Script == nil {
		return nil, errors.New("limbotest: a Script is required")
	}
	if opts.ReaderSize <= 0 {
		opts.ReaderSize = mc.ReaderSize
	}
	z, err := mc.NewZlib(zlib.BestSpeed)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{Addr: ln.Addr().String(), ln: ln, opts: opts, zlib: z, ctx: ctx, cancel: cancel}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Close stops accepting, cancels every script's context and waits for them.
func (s *Server) Close() {
	s.cancel()
	s.ln.Close()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			name, err := s.serve(c)
			if s.opts.Done != nil {
				s.opts.Done(name, err)
			}
		}()
	}
}

// serve logs the player in (offline mode) and runs the script.
func (s *Server) serve(c net.Conn) (string, error) {
	br := bufio.NewReaderSize(c, s.opts.ReaderSize)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	hs, _, err := mc.ReadHandshake(br)
	if err != nil {
		return "", err
	}
	if hs.NextState != mc.StateLogin {
		return "", fmt.Errorf("limbotest: handshake asks for state %d, not login", hs.NextState)
	}
	reg, ok := mc.RegistryFor(mc.Protocol(hs.ProtocolVersion))
	if !ok {
		return "", fmt.Errorf("limbotest: unknown protocol %d", hs.ProtocolVersion)
	}
	start, _, err := mc.ReadLoginStart(br, hs.ProtocolVersion)
	if err != nil {
		return "", err
	}
	client := &session.Client{Conn: mc.NewConn(br, c, s.zlib), Registry: reg, Protocol: reg.Protocol(), Start: start, State: mc.LoginState}
	if err := client.FinishLogin(session.OfflineProfile(start.Name), s.opts.Threshold); err != nil {
		return start.Name, err
	}
	if err := client.Acknowledged(); err != nil {
		return start.Name, err
	}
	p := &limbo.Player{Conn: client.Conn, Net: c, Registry: reg, State: client.State}
	err = s.opts.Script(s.ctx, p, start.Name)
	// Let the client read what the script wrote last (a kick) before closing.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var buf [512]byte
	for {
		if _, rerr := c.Read(buf[:]); rerr != nil {
			break
		}
	}
	return start.Name, err
}
