package session

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// Backend is one backend connection of a session: the framed connection and
// what the proxy needs to account for it.
type Backend struct {
	Side
	// Server and Address say where the player is, for the players list and events.
	Server, Address string
	// Release ends the balancer lease and closes the connection; the session calls
	// it once, when it leaves this backend.
	Release func()
	// Failed counts the backend's loss as a health failure of its address (a
	// stall); the proxy's policy calls it, the session never does.
	Failed func(reason string)

	// pump relays it, once the session has started it; held here, not beside
	// it: a backend is pumped once, and a relay event touches both.
	pump backendPump
}

// Gone says why a backend stopped serving the player.
type Gone struct {
	// Kick is the text of a Disconnect the backend sent; "" when it just went away.
	Kick string
	// Err is the read error when the connection broke or stalled; nil on a clean close.
	Err error
}

// Reason words Gone for the player and the logs.
func (g Gone) Reason() string {
	switch {
	case g.Kick != "":
		return g.Kick
	case g.Err != nil:
		return "the server stopped answering"
	}
	return "the server closed the connection"
}

// Policy is what the proxy decides for its sessions. One policy serves every
// session that starts under it: a hook finds the player it acts for in the
// session's owner (Owner), so a login makes no closures of its own.
type Policy struct {
	// Lost is called when the current backend kicked the player, closed or broke.
	// It may move the player elsewhere (return nil after a successful Switch) or
	// return an error, and the player is then disconnected with gone's reason.
	Lost func(s *Session, b *Backend, gone Gone) error
	// Limbo is told when the player enters a handler's limbo (entered) and when
	// they leave it, with how long they waited; nil tells nobody.
	Limbo func(handler string, entered bool, waited time.Duration)
	// Moved is told every completed move, for counts and events.
	Moved func(s *Session, from, to *Backend)
	// StallTimeout ends a backend that sends nothing at all for this long (not
	// even a keep-alive) while the client is connected; 0 means never.
	StallTimeout time.Duration
	// PluginMessage, when set, sees every plugin message a backend sends towards
	// the client; returning true keeps it from the client (the proxy answered it,
	// as it does for the BungeeCord channel).
	PluginMessage func(s *Session, b *Backend, channel string, data []byte) bool
	// PluginChannels, when set, names the channels PluginMessage wants to see;
	// the others are relayed without a call (and without leaving the event loop).
	PluginChannels func(channel string) bool
	// Filter sees the packets it names (filter.go); nil relays everything as is.
	Filter *Filter
	// FilterPanicked is told a filter's panic (the packet went on untouched).
	FilterPanicked func(v any)
}

// Session relays one intercepted player between their client, which it holds
// for the whole visit, and the backend of the moment, which Switch replaces
// without disconnecting the client.
type Session struct {
	client    *Client
	clientNet net.Conn
	policy    *Policy
	owner     any

	// cw is held by a backend's pump while it checks it is still current and
	// writes a frame to the client, and by a switch while it leaves a backend: no
	// packet of the old server reaches the client after the switch began.
	cw sync.Mutex
	// leftovers is what the current backend created on the client that a move
	// must remove (boss bars, tab list, scoreboards, titles); guarded by mu.
	leftovers limbo.Leftovers

	mu         sync.Mutex
	backend    *Backend      // where client frames go; nil while a switch waits for the client
	pending    *Backend      // the backend a switch attaches once the client acknowledges
	attached   chan struct{} // closed when pending is attached
	clientInfo []byte        // the client's last Client Information payload, replayed to a new backend
	up, down   int64
	closed     bool
	limbo      *Stay // a move into the limbo the client's goroutine is to make
	held       bool  // the player is in the limbo (a stay holds him)
	// tells are chat lines told while the client was between worlds (a
	// switch's configuration phase): written once it is in its new world.
	tells []string
	// joining: the client finished a configuration phase and waits for its
	// new world (the backend's join game), where a chat line is shown.
	joining bool
	spawned bool // the client has been in a world (a backend's or the limbo's)
	// awaiting: the client's goroutine waits for the start of a frame, where a
	// deadline may interrupt it without losing data; poked: one was set to.
	awaiting, poked bool

	done chan struct{} // closed when the client is gone; made under mu at the first ask (doneLocked)

	// live counts the sides still running: the client's and each backend pump
	// (one may still be replacing a lost backend when the client leaves). The
	// last one out hands report the counts, so no side waits for another: the
	// client's end may run on the event loop.
	live     atomic.Int32
	reported atomic.Bool
	report   func(up, down int64)

	// Protocol states of the two streams, as the packets that change them passed.
	toClient, toServer mc.State

	watch *watchSet // the packet ids policy.Filter sees; nil when none

	// resume runs the client's side (pumpClient) again after it parked, and ends
	// the session once the client is gone; set once, before the relay starts.
	resume mc.Resume
	// fromLoop is what the client's side left, run on the event loop, for its
	// run off it; only the client's side touches it.
	fromLoop handOff
}

// handOff is what a pump's run on the event loop (mc.Resume) leaves to its run
// off the loop when it meets something that may wait: the frame it could not
// relay there, a read error to act on, or a batch whose socket did not take it
// all at once.
type handOff struct {
	frame   mc.RawFrame
	held    bool     // frame is set
	counted bool     // the frame's accounting is done: only its write remains
	to      *Backend // where a counted client frame goes
	err     error
	// flush has a batch to write out; flushNet is closed when that fails.
	flush    *mc.Conn
	flushNet net.Conn
}

func (h *handOff) hold(f mc.RawFrame, counted bool, to *Backend) {
	h.frame, h.held, h.counted, h.to = f, true, counted, to
}

// flushOut writes out the batch the loop left, waiting as long as it takes (the
// relay's back-pressure); a failure closes the connection.
func (h *handOff) flushOut() {
	if h.flush == nil {
		return
	}
	if h.flush.Flush() != nil {
		h.flushNet.Close()
	}
	h.flush, h.flushNet = nil, nil
}

// take returns the held frame or error (ok false: neither, read on).
func (h *handOff) take() (f mc.RawFrame, counted bool, to *Backend, err error, ok bool) {
	switch {
	case h.held:
		f, counted, to = h.frame, h.counted, h.to
		*h = handOff{flush: h.flush, flushNet: h.flushNet}
		return f, counted, to, nil, true
	case h.err != nil:
		err, h.err = h.err, nil
		return mc.RawFrame{}, false, nil, err, true
	}
	return mc.RawFrame{}, false, nil, nil, false
}

// loopBudget bounds the bytes one run on the event loop relays before it hands
// the rest to a goroutine, so that one busy player does not hold up the
// wake-ups of every other.
const loopBudget = 64 << 10

// ErrNotPlaying: the player is still joining (in the configuration phase); a
// move is possible once they are in the game.
var ErrNotPlaying = errors.New("the player is still joining; try again in a moment")

// New makes the session of a client whose login has finished, under policy
// (nil: none), for owner (what policy's hooks act for: Owner).
func New(client *Client, clientNet net.Conn, policy *Policy, owner any) *Session {
	if policy == nil {
		policy = &noPolicy
	}
	return &Session{
		client: client, clientNet: clientNet, policy: policy, owner: owner, toClient: client.State, toServer: client.State,
		watch: policy.Filter.watchFor(client.Registry),
	}
}

var noPolicy Policy

// Owner is what New was given to act for: the proxy's player.
func (s *Session) Owner() any { return s.owner }

// Client is the player's side.
func (s *Session) Client() *Client { return s.client }

// Current is the backend the player is on now (nil between a switch's two halves).
func (s *Session) Current() *Backend {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.backend
}

// Run relays between the client and first (and the backends that follow it)
// until the client leaves; it returns the bytes read from the client and from
// the backends.
func (s *Session) Run(first *Backend) (up, down int64) {
	return wait(func(done func(up, down int64)) { s.Start(first, done) })
}

// Start is Run without holding the caller: done gets Run's counts once the
// client is gone. While the client sends nothing no goroutine waits for it: its
// side parks on the connection as a backend's does (backendPump), so a held
// player holds no goroutine at all.
func (s *Session) Start(first *Backend, done func(up, down int64)) {
	s.begin(done)
	s.mu.Lock()
	s.backend = first
	s.spawned = s.client.State == mc.PlayState // an older client is in play from Login Success
	s.mu.Unlock()
	s.startPump(first)
	s.relayClient()
}

// begin counts the client's side in, before any backend pump can end: done
// gets the counts once every side is out (sideDone).
func (s *Session) begin(done func(up, down int64)) {
	s.report = done
	s.live.Store(1)
}

// wait runs start and returns the counts it hands its done.
func wait(start func(done func(up, down int64))) (up, down int64) {
	ended := make(chan [2]int64, 1)
	start(func(up, down int64) { ended <- [2]int64{up, down} })
	counts := <-ended
	return counts[0], counts[1]
}

// relayClient runs the client's side (pumpClient) on the calling goroutine, and
// again (on another, or on the event loop: mc.Conn.Park) each time bytes come
// after it parked; once the client is gone it ends the session where it is.
func (s *Session) relayClient() {
	s.resume = func(onLoop bool) bool {
		switch s.pumpClient(onLoop) {
		case pumpParked:
			return false
		case pumpOffLoop:
			return true
		}
		s.end()
		return false
	}
	s.resume(false)
}

// startPump starts relaying backend b to the client: a backendPump.
func (s *Session) startPump(b *Backend) {
	s.live.Add(1)
	p := &b.pump
	*p = backendPump{s: s, b: b}
	p.resume = p.run // one closure for every park
	if s.policy.StallTimeout > 0 {
		p.stall.watch(b.Net, s.policy.StallTimeout)
	}
	// A backend that has sent nothing yet (the usual case: it has just been
	// logged in) parks at once, without a goroutine started for one empty read.
	if b.Conn.Park(p.resume) {
		return
	}
	go p.run(false)
}

// backendPump relays one backend's frames to the client. While the backend is
// silent it holds no goroutine: it parks on the connection (mc.Conn.Park) and
// run starts again when bytes arrive, on the event loop when it is free. The
// client's side does the same (relayClient), so a held player costs no goroutine.
type backendPump struct {
	s        *Session
	b        *Backend
	stall    stallWatch // idle unless the policy has a StallTimeout
	resume   mc.Resume
	fromLoop handOff
}

// How one run of a pump ended.
type pumpEnd int

const (
	pumpNext    pumpEnd = iota // a frame was relayed: read on
	pumpParked                 // the peer is silent: the run is called again
	pumpOffLoop                // the rest may wait: the run is called again off the event loop
	pumpLeft                   // the session left the backend (a switch, the client's end)
	pumpLost                   // the backend ended: the loss is reported
)

func (p *backendPump) run(onLoop bool) (again bool) {
	gone, end := p.s.pumpBackend(p, onLoop)
	switch end {
	case pumpParked:
		return false
	case pumpOffLoop:
		return true
	}
	if end == pumpLost {
		p.stall.stop()
		p.s.lost(p.b, gone) // off the loop: a read error or a kick is handed off
		p.s.sideDone()
		return false
	}
	p.finish()
	return false
}

// finish ends a pump that left its backend (or whose parked run the session's
// end took back: mc.Conn.Unpark): nothing is read or reported any more.
func (p *backendPump) finish() {
	p.stall.stop()
	p.s.sideDone()
}

// end releases what the session still holds once the client is gone. Nothing
// in it waits: it runs on the event loop when the client's goodbye woke it
// there, as a passthrough session's end runs on its forwarder's.
func (s *Session) end() {
	s.mu.Lock()
	s.closed = true
	if s.done != nil {
		close(s.done)
	}
	b, p := s.backend, s.pending
	s.backend, s.pending = nil, nil
	s.mu.Unlock()
	for _, x := range []*Backend{b, p} {
		if x != nil {
			parked := x.Conn.Unpark()
			x.Net.Close()
			x.Release()
			if parked != nil {
				// The pump ends here, not on a goroutine Close would wake, and
				// without reading the connection just closed to learn that it is;
				// nothing reads it now, so a buffer it held goes back too.
				x.Conn.Release()
				x.pump.finish()
			}
		}
	}
	s.clientNet.Close()
	s.sideDone()
}

// sideDone counts a side out. The last one hands report the counts: a pump
// replacing its lost backend when the client left is then done with it. A
// pump a switch starts after that (its backend closed by end) reports nothing.
func (s *Session) sideDone() {
	if s.live.Add(-1) != 0 || !s.reported.CompareAndSwap(false, true) {
		return
	}
	s.mu.Lock()
	up, down := s.up, s.down
	s.mu.Unlock()
	s.report(up, down)
}

// Kick disconnects the player with text (shown in their client) and ends the session.
func (s *Session) Kick(text string) {
	s.mu.Lock()
	state := s.toClient
	s.mu.Unlock()
	_ = s.clientNet.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_ = kick(s.client.Conn, s.client.Registry, state, text)
	s.endClient()
}

// endClient half-closes the client after what was written, and gives it a moment
// to read it before the close.
func (s *Session) endClient() {
	if tc, ok := s.clientNet.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
		_ = s.clientNet.SetReadDeadline(time.Now().Add(lingerAfterEnd))
		return
	}
	s.clientNet.Close()
}

// ToBackend writes a plugin message to backend b as if the client had sent it,
// in the state the client's stream is in. It is safe while the session runs.
func (s *Session) ToBackend(b *Backend, channel string, data []byte) error {
	s.mu.Lock()
	state := s.toServer
	s.mu.Unlock()
	reg := s.client.Registry
	id, ok := reg.ID(state, mc.Serverbound, mc.PacketPluginMessage)
	if !ok {
		return fmt.Errorf("no plugin message packet in state %s", state)
	}
	payload, err := mc.PluginMessage{Channel: channel, Data: data}.AppendPayload(nil, reg.Protocol())
	if err != nil {
		return err
	}
	return b.Conn.WritePacket(id, payload)
}

// Switch moves the player to next, a backend the caller has logged in (its
// login acknowledged, so it waits in its configuration state): the current
// backend is left, the client is sent back to its configuration phase, and once
// it acknowledges, next gets the client's settings and takes over. It returns
// when next serves the player or the client failed to acknowledge within wait;
// next is released on failure.
func (s *Session) Switch(next *Backend, wait time.Duration) error {
	if !s.client.Protocol.AtLeast(mc.V1_20_2) {
		return s.switchByRejoin(next, wait)
	}
	s.cw.Lock()
	s.mu.Lock()
	if s.closed || s.pending != nil || s.toClient != mc.PlayState || s.toServer != mc.PlayState {
		closed := s.closed
		s.mu.Unlock()
		s.cw.Unlock()
		next.Net.Close()
		next.Release()
		if closed {
			return errors.New("the player left")
		}
		return ErrNotPlaying
	}
	old := s.backend
	s.backend, s.pending = nil, next
	s.attached = make(chan struct{})
	attached, done := s.attached, s.doneLocked()
	// The client's stream turns to configuration now: what the old server still
	// sends is dropped (its pump ends when its connection is closed below).
	s.toClient = mc.ConfigState
	cleanup, _ := s.leftovers.Clear(s.client.Protocol)
	s.mu.Unlock()
	if old != nil {
		old.Net.Close()
	}
	// What the old server showed goes first (boss bars, tab list, scoreboards and
	// titles outlive the configuration phase), then back to configuration.
	cleanup = append(cleanup, mc.Packet{Type: mc.PacketStartConfiguration})
	err := s.sendClient(mc.PlayState, cleanup)
	s.cw.Unlock() // the client's acknowledgement is read by the client pump
	if err != nil {
		s.failSwitch(next)
		return fmt.Errorf("the client went away: %w", err)
	}
	select {
	case <-attached:
	case <-done:
		s.failSwitch(next)
		return errors.New("the player left")
	case <-time.After(wait):
		s.failSwitch(next)
		s.Kick("Timed out while moving you to another server")
		return errors.New("the client did not acknowledge the move")
	}
	if old != nil {
		old.Release()
	}
	if s.policy.Moved != nil {
		s.policy.Moved(s, old, next)
	}
	return nil
}

// switchByRejoin moves a pre-1.20.2 player: the client has no configuration
// phase, so the new backend's join game is rewritten into the sequence that
// resets a client's world (a dimension flip before 1.16), after what the old
// server created has been removed.
func (s *Session) switchByRejoin(next *Backend, wait time.Duration) error {
	_ = next.Net.SetReadDeadline(time.Now().Add(wait))
	jg, raw, early, err := readJoinGame(next, s.client.Registry)
	if err != nil {
		next.Net.Close()
		next.Release()
		return fmt.Errorf("the new server's join game: %w", err)
	}
	_ = next.Net.SetReadDeadline(time.Time{})
	// From 1.16 the switch sequence's join game is the backend's own, unchanged
	// (mc.JoinGame.SwitchSequence): it goes to the client as the backend sent it,
	// so its registry codec (~40 KB) is not encoded again and, when both sides
	// compress at the same threshold, not deflated again either; only the
	// respawn after it is the proxy's.
	relayJoin := s.client.Protocol.AtLeast(mc.V1_16)
	var seq []mc.Packet
	if relayJoin {
		var rp []byte
		rp, err = jg.Respawn().AppendPayload(nil, s.client.Protocol)
		seq = []mc.Packet{{Type: mc.PacketRespawn, Payload: rp}}
	} else {
		seq, err = jg.SwitchSequence(s.client.Protocol)
	}
	if err != nil {
		next.Net.Close()
		next.Release()
		return err
	}
	s.cw.Lock()
	s.mu.Lock()
	if s.closed || s.pending != nil || s.toClient != mc.PlayState {
		closed := s.closed
		s.mu.Unlock()
		s.cw.Unlock()
		next.Net.Close()
		next.Release()
		if closed {
			return errors.New("the player left")
		}
		return ErrNotPlaying
	}
	old := s.backend
	s.backend = next
	cleanup, _ := s.leftovers.Clear(s.client.Protocol)
	info := s.clientInfo
	s.mu.Unlock()
	if old != nil {
		old.Net.Close()
	}
	if relayJoin {
		if len(cleanup) > 0 {
			err = s.sendClient(mc.PlayState, cleanup)
		}
		if err == nil {
			// Batched with the respawn into one write when no re-framing is needed.
			err = s.client.Conn.WriteRelay(raw, true)
		}
		if err == nil {
			err = s.sendClient(mc.PlayState, seq)
		}
	} else {
		err = s.sendClient(mc.PlayState, append(cleanup, seq...))
	}
	for _, f := range early {
		if err == nil {
			err = s.client.Conn.WriteRaw(f)
		}
	}
	s.cw.Unlock()
	if err != nil {
		return fmt.Errorf("the client went away: %w", err)
	}
	if info != nil {
		id, _ := s.client.Registry.ID(mc.PlayState, mc.Serverbound, mc.PacketClientInformation)
		_ = next.Conn.WritePacket(id, info)
	}
	s.startPump(next)
	if old != nil {
		old.Release()
	}
	if s.policy.Moved != nil {
		s.policy.Moved(s, old, next)
	}
	return nil
}

// maxBeforeJoin bounds the packets a backend may send before its join game.
const maxBeforeJoin = 64

// readJoinGame reads a backend's first play packets up to its join game, which
// it returns decoded and as it came (raw); the packets before it (a server's
// plugin channel registrations) are returned to be relayed after the join
// sequence.
func readJoinGame(b *Backend, reg *mc.Registry) (jg mc.JoinGame, raw mc.RawFrame, early []mc.RawFrame, err error) {
	for range maxBeforeJoin {
		f, err := b.Conn.ReadRaw()
		if err != nil {
			return mc.JoinGame{}, mc.RawFrame{}, nil, err
		}
		// Decoded whole rather than peeked: the join game, usually the first,
		// is decoded anyway, and a peek inflates up to 32 KiB of it as well.
		full, err := b.Conn.Decode(f)
		if err != nil {
			return mc.JoinGame{}, mc.RawFrame{}, nil, err
		}
		if t, _ := reg.Type(mc.PlayState, mc.Clientbound, full.ID); t != mc.PacketJoinGame {
			early = append(early, f)
			continue
		}
		jg, err := mc.DecodeJoinGame(full.Payload, reg.Protocol())
		return jg, f, early, err
	}
	return mc.JoinGame{}, mc.RawFrame{}, nil, fmt.Errorf("no join game among its first %d packets", maxBeforeJoin)
}

// sendClient writes packets the proxy makes to the client, in one write.
func (s *Session) sendClient(state mc.State, pks []mc.Packet) error {
	out := make([]mc.OutPacket, 0, len(pks))
	for _, pk := range pks {
		id, ok := s.client.Registry.ID(state, mc.Clientbound, pk.Type)
		if !ok {
			return fmt.Errorf("no %s packet in state %s", pk.Type, state)
		}
		out = append(out, mc.OutPacket{ID: id, Payload: pk.Payload})
	}
	return s.client.Conn.WritePackets(out...)
}

// Playing reports whether the client is in a world it may be sent play
// packets for now (not in a configuration phase, not waiting for a new world).
func (s *Session) Playing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.toClient == mc.PlayState && !s.joining
}

// maxHeldTells bounds the chat lines held for a client that is not in play.
const maxHeldTells = 8

// Tell shows a system message in the player's chat (a fallback says why the
// player was moved). While the client is between worlds (a 1.20.2+ client in
// a switch's configuration phase, or waiting for its new world) it is held,
// and written right after the new world's join game.
func (s *Session) Tell(text string) error {
	s.mu.Lock()
	if s.toClient != mc.PlayState || s.joining {
		if len(s.tells) < maxHeldTells && !s.closed {
			s.tells = append(s.tells, text)
		}
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	s.cw.Lock()
	defer s.cw.Unlock()
	return s.tellNow(text)
}

// tellNow writes one chat line to a client in play; the caller holds cw.
func (s *Session) tellNow(text string) error {
	payload, err := mc.SystemChat{Message: mc.TextComponent(text)}.AppendPayload(nil, s.client.Protocol)
	if err != nil {
		return err
	}
	return s.sendClient(mc.PlayState, []mc.Packet{{Type: mc.PacketSystemChat, Payload: payload}})
}

// Between reports that the player is between servers: in the limbo or on his
// way there, or in the middle of a switch. Another move must wait.
func (s *Session) Between() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.backend == nil || s.pending != nil || s.limbo != nil || s.held
}

func (s *Session) failSwitch(next *Backend) {
	s.mu.Lock()
	if s.pending == next {
		s.pending = nil
	}
	s.mu.Unlock()
	next.Net.Close()
	next.Release()
}

// pumpClient relays the client's frames to the backend of the moment, keeps
// track of its protocol state, remembers its settings for the next backend and
// completes a switch when the client acknowledges it. It returns pumpParked
// when it parked (s.resume runs it again when bytes come), pumpOffLoop when
// what is left may wait (onLoop: it runs on the event loop) and pumpLeft once
// the client is gone (never on the loop).
func (s *Session) pumpClient(onLoop bool) pumpEnd {
	h := &s.fromLoop
	for budget := loopBudget; ; {
		h.flushOut()
		f, counted, b, err, ok := h.take()
		if !ok {
			s.mu.Lock()
			s.awaiting = true // and while parked: a poke's deadline runs s.resume
			s.mu.Unlock()
			if s.client.Conn.Park(s.resume) {
				return pumpParked
			}
			if onLoop {
				s.mu.Lock()
				// The limbo takes the client off the loop; so does a backend
				// every frame must be framed again for (CPU the loop leaves to others).
				if s.poked || s.limbo != nil || s.backend != nil && !s.backend.Conn.RelaysAsIs(s.client.Conn) {
					s.mu.Unlock()
					return pumpOffLoop
				}
				s.awaiting = false
				s.mu.Unlock()
				if budget <= 0 {
					return pumpOffLoop
				}
				if n, end := s.passClient(); n > 0 {
					if end != pumpNext {
						return end
					}
					budget -= n
					continue
				}
				var got bool
				if f, got, err = s.client.Conn.TryReadRelay(); err != nil {
					if !mc.IsEOF(err) && errors.Is(err, os.ErrDeadlineExceeded) {
						return pumpOffLoop // a poke came after the look above: readClient acts on it
					}
					return pumpLeft // the client is gone: the session ends here, on the loop
				}
				if !got {
					continue // parks, or reads what came meanwhile
				}
			} else if f, err = s.readClient(); err == errInLimbo {
				continue
			}
		}
		if err != nil {
			return pumpLeft
		}
		budget -= len(f.Bytes)
		var id int32
		if id, err = s.client.Conn.PeekID(f); err != nil {
			mc.Recycle(f)
			return pumpLeft
		}
		if !counted {
			var end pumpEnd
			if b, end = s.countClientFrame(f, id, onLoop); end != pumpNext {
				return end
			}
			if b == nil {
				continue // dropped, or between a switch's halves
			}
		}
		if !onLoop {
			if err := b.Conn.WriteRelay(f, s.client.Conn.FrameBuffered()); err != nil {
				b.Net.Close() // its pump reports the loss
			}
			mc.Recycle(f)
			continue
		}
		taken, held, err := b.Conn.TryWriteRelay(f, s.client.Conn.FrameBuffered())
		if !taken {
			h.hold(f, true, b)
			return pumpOffLoop
		}
		mc.Recycle(f)
		if err != nil {
			b.Net.Close()
		} else if held {
			h.flush, h.flushNet = b.Conn, b.Net
			return pumpOffLoop
		}
	}
}

// errInLimbo: the client's side came back from a stay in the limbo; read on.
var errInLimbo = errors.New("session: back from the limbo")

// readClient waits for the client's next frame, off the event loop; on the
// way a pending move into the limbo is made (errInLimbo once the player is
// back, another error once they are gone).
func (s *Session) readClient() (mc.RawFrame, error) {
	err := s.client.Conn.Await()
	s.mu.Lock()
	s.awaiting = false
	poked := s.poked
	s.poked = false
	s.mu.Unlock()
	if poked {
		_ = s.clientNet.SetReadDeadline(time.Time{})
	}
	if stay := s.takeLimbo(); stay != nil {
		// The server is gone and a handler holds the player in the limbo; the
		// limbo reads the client from here (and drops what was meant for the server).
		if err := s.stay(*stay); err != nil {
			if !errors.Is(err, limbo.ErrClientLeft) {
				s.Kick(err.Error())
			}
			return mc.RawFrame{}, err
		}
		return mc.RawFrame{}, errInLimbo
	}
	if err != nil {
		return mc.RawFrame{}, err
	}
	return s.client.Conn.ReadRelay()
}

// countClientFrame accounts for a client frame (its bytes, the stream's state,
// the client's settings, a switch's acknowledgement) and returns the backend
// it goes to: nil when it goes nowhere (a filter dropped it or wrote what it
// made of it, or a switch is between its halves). On the event loop, a frame
// that needs more than that is left untouched for the run off it (pumpOffLoop).
func (s *Session) countClientFrame(f mc.RawFrame, id int32, onLoop bool) (*Backend, pumpEnd) {
	reg := s.client.Registry
	s.mu.Lock()
	state := s.toServer
	t, known := reg.Type(state, mc.Serverbound, id)
	watched := s.watch.has(mc.Serverbound, state, id)
	if onLoop && (watched || known && state == mc.PlayState && t == mc.PacketConfigurationAck && s.pending != nil) {
		s.mu.Unlock()
		s.fromLoop.hold(f, false, nil)
		return nil, pumpOffLoop
	}
	s.up += int64(len(f.Bytes))
	switch {
	case known && t == mc.PacketClientInformation:
		if full, err := s.client.Conn.Decode(f); err == nil {
			s.clientInfo = append(s.clientInfo[:0], full.Payload...)
		}
	case known && state == mc.ConfigState && t == mc.PacketFinishConfiguration:
		s.toServer = mc.PlayState
	case known && state == mc.PlayState && t == mc.PacketConfigurationAck:
		s.toServer = mc.ConfigState
		if next := s.pending; next != nil {
			// The client is in configuration: the new backend takes over. The ack
			// was for the proxy; the new backend is in configuration already.
			s.pending, s.backend = nil, next
			info, attached := s.clientInfo, s.attached
			s.mu.Unlock()
			if info != nil {
				id, _ := reg.ID(mc.ConfigState, mc.Serverbound, mc.PacketClientInformation)
				_ = next.Conn.WritePacket(id, info)
			}
			s.startPump(next)
			close(attached)
			mc.Recycle(f)
			return nil, pumpNext
		}
	}
	b := s.backend
	s.mu.Unlock()
	if b == nil {
		mc.Recycle(f)
		return nil, pumpNext // between a switch's halves: meant for the server being left
	}
	if !watched {
		return b, pumpNext
	}
	pk, drop := s.filter(s.client.Conn, f, mc.Serverbound, state, id, b)
	switch {
	case drop:
		mc.Recycle(f)
		if b.Conn.Flush() != nil {
			b.Net.Close()
		}
		return nil, pumpNext
	case pk != nil:
		err := b.Conn.WritePacket(id, pk.Payload)
		mc.Recycle(f)
		if err != nil {
			b.Net.Close()
		}
		return nil, pumpNext
	}
	return b, pumpNext
}

func (s *Session) isCurrent(b *Backend) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.backend == b
}

// pumpBackend relays b's frames to the client until b is silent (it parks),
// ends or is left; on the event loop (onLoop) it stops at what may wait
// (pumpOffLoop), and a loss is reported only off it.
func (s *Session) pumpBackend(p *backendPump, onLoop bool) (gone Gone, end pumpEnd) {
	b, h := p.b, &p.fromLoop
	if onLoop && !s.client.Conn.RelaysAsIs(b.Conn) {
		return gone, pumpOffLoop // every frame is framed again: CPU the loop leaves to others
	}
	for budget := loopBudget; ; {
		h.flushOut()
		f, counted, _, err, ok := h.take()
		if !ok {
			if b.Conn.Park(p.resume) {
				return gone, pumpParked
			}
			if !onLoop {
				f, err = b.Conn.ReadRelay()
			} else if budget <= 0 {
				return gone, pumpOffLoop
			} else {
				if n, end := s.passBackend(p); n > 0 {
					if end != pumpNext {
						return gone, end
					}
					budget -= n
					continue
				}
				var got bool
				if f, got, err = b.Conn.TryReadRelay(); err == nil && !got {
					continue // parks, or reads what came meanwhile
				}
			}
			if err == nil {
				p.stall.frame()
			}
		}
		if err != nil {
			if onLoop {
				h.err = err
				return gone, pumpOffLoop
			}
			if !mc.IsEOF(err) {
				gone.Err = err
			}
			return gone, pumpLost
		}
		budget -= len(f.Bytes)
		if end = s.relayBackendFrame(p, f, counted, onLoop, &gone); end != pumpNext {
			return gone, end
		}
	}
}

// relayBackendFrame relays one frame of p's backend to the client: it tracks
// the stream's state and what the server creates on the client, sees a kick,
// answers plugin messages and runs filters (off the loop: on it, such a frame
// is held for the run off it, as is one that finds the client's side busy).
// counted: the frame was accounted for on the loop, only its write remains.
func (s *Session) relayBackendFrame(p *backendPump, f mc.RawFrame, counted, onLoop bool, gone *Gone) pumpEnd {
	b, reg := p.b, s.client.Registry
	id, err := b.Conn.PeekID(f)
	if err != nil {
		mc.Recycle(f)
		if onLoop {
			p.fromLoop.err = err
			return pumpOffLoop
		}
		gone.Err = err
		return pumpLost
	}
	// On the loop cw is taken first (it is never waited for there): what is
	// accounted for below is then written before any switch can begin.
	if onLoop && !s.cw.TryLock() {
		p.fromLoop.hold(f, counted, nil)
		return pumpOffLoop
	}
	var changed *Packet
	var tells []string
	if !counted {
		s.mu.Lock()
		if s.backend != b {
			s.mu.Unlock()
			if onLoop {
				s.cw.Unlock()
			}
			mc.Recycle(f)
			return pumpLeft // left by a switch
		}
		state := s.toClient
		t, known := reg.Type(state, mc.Clientbound, id)
		watched := s.watch.has(mc.Clientbound, state, id)
		handled := known && (t == mc.PacketDisconnect || t == mc.PacketPluginMessage && s.wantsPlugin(b, f) ||
			t == mc.PacketJoinGame && state == mc.PlayState && len(s.tells) > 0)
		if onLoop && (watched || handled) {
			s.mu.Unlock()
			s.cw.Unlock()
			p.fromLoop.hold(f, false, nil)
			return pumpOffLoop
		}
		if known && t == mc.PacketDisconnect {
			s.mu.Unlock()
			if full, err := b.Conn.Decode(f); err == nil {
				if d, err := mc.DecodeDisconnect(full.Payload, reg.Protocol(), state); err == nil {
					gone.Kick = d.Text()
				}
			}
			mc.Recycle(f)
			if gone.Kick == "" {
				gone.Kick = "Disconnected"
			}
			return pumpLost
		}
		if handled && t == mc.PacketPluginMessage {
			s.mu.Unlock()
			if full, err := b.Conn.Decode(f); err == nil {
				if m, err := mc.DecodePluginMessage(full.Payload, reg.Protocol()); err == nil && s.policy.PluginMessage(s, b, m.Channel, m.Data) {
					mc.Recycle(f)
					return pumpNext
				}
			}
			s.mu.Lock()
		}
		switch {
		case known && state == mc.ConfigState && t == mc.PacketFinishConfiguration:
			s.toClient = mc.PlayState
			s.spawned = true
			s.joining = true
			b.Conn.ShareHeads(false)
		case known && state == mc.PlayState && t == mc.PacketJoinGame:
			s.joining = false
			tells, s.tells = s.tells, nil // written after this frame, in the new world
		case known && state == mc.PlayState && t == mc.PacketStartConfiguration:
			s.toClient = mc.ConfigState
			b.Conn.ShareHeads(true)
		case known && state == mc.PlayState && limbo.Tracks(t):
			if full, err := b.Conn.Decode(f); err == nil {
				_ = s.leftovers.Observe(reg.Protocol(), t, full.Payload)
			}
		}
		s.down += int64(len(f.Bytes))
		s.mu.Unlock()
		if watched {
			var drop bool
			if changed, drop = s.filter(b.Conn, f, mc.Clientbound, state, id, b); drop {
				mc.Recycle(f)
				if s.client.Conn.Flush() != nil {
					s.clientNet.Close()
					return pumpLeft
				}
				return pumpNext
			}
		}
	}
	if onLoop {
		taken, held, err := s.client.Conn.TryWriteRelay(f, b.Conn.FrameBuffered())
		s.cw.Unlock()
		switch {
		case !taken:
			p.fromLoop.hold(f, true, nil)
			return pumpOffLoop
		case err != nil:
			mc.Recycle(f)
			s.clientNet.Close()
			return pumpLeft
		case held:
			mc.Recycle(f)
			p.fromLoop.flush, p.fromLoop.flushNet = s.client.Conn, s.clientNet
			return pumpOffLoop
		}
		mc.Recycle(f)
		return pumpNext
	}
	s.cw.Lock()
	if !s.isCurrent(b) {
		s.cw.Unlock()
		mc.Recycle(f)
		return pumpLeft // left by a switch meanwhile
	}
	if changed != nil {
		err = s.client.Conn.WritePacket(id, changed.Payload)
	} else {
		err = s.client.Conn.WriteRelay(f, b.Conn.FrameBuffered() || len(tells) > 0) // the tells flush the batch
	}
	for _, text := range tells {
		if err == nil {
			err = s.tellNow(text)
		}
	}
	s.cw.Unlock()
	mc.Recycle(f)
	if err != nil {
		s.clientNet.Close()
		return pumpLeft
	}
	return pumpNext
}

// wantsPlugin says whether policy.PluginMessage is to see plugin message f
// from b: a channel PluginChannels names, or one too long to peek at.
func (s *Session) wantsPlugin(b *Backend, f mc.RawFrame) bool {
	if s.policy.PluginMessage == nil {
		return false
	}
	if s.policy.PluginChannels == nil {
		return true
	}
	channel, ok, err := b.Conn.PeekString(f)
	return err != nil || !ok || s.policy.PluginChannels(channel)
}

// lost reports that backend b ended to the policy, unless the session already
// left it; without a move the player is kicked with the reason.
func (s *Session) lost(b *Backend, gone Gone) {
	s.mu.Lock()
	current := s.backend == b && !s.closed
	s.mu.Unlock()
	if !current {
		return
	}
	b.Net.Close()
	if errors.Is(gone.Err, os.ErrDeadlineExceeded) {
		gone.Err = fmt.Errorf("nothing received for %s: %w", s.policy.StallTimeout, gone.Err)
	}
	if s.policy.Lost != nil && s.policy.Lost(s, b, gone) == nil {
		return
	}
	s.Kick(gone.Reason())
}
