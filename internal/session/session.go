package session

import (
	"errors"
	"fmt"
	"io"
	"net"
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

	// w is the one writer to the client (writer.go): a backend's pump holds it
	// while it checks it is still current and writes a frame, a switch while it
	// leaves a backend, so no packet of the old server reaches the client after
	// the switch began.
	w clientWriter
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
	resume       Resume
	clientParker Parker // the client's socket, when it can park its reader
	// fromLoop is what the client's side left, run on the event loop, for its
	// run off it; only the client's side touches it.
	fromLoop handOff
}

// handOff is what a pump's run on the event loop (Resume) leaves to its run
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
	s := &Session{
		client: client, clientNet: clientNet, policy: policy, owner: owner, toClient: client.State, toServer: client.State,
		watch: policy.Filter.watchFor(client.Registry),
	}
	s.w.init(clientNet)
	s.clientParker, _ = clientNet.(Parker)
	return s
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
// again (on another, or on the event loop: park) each time bytes come
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
			xp, _ := x.Net.(Parker) // not x.pump's: a switch may be starting it now
			parked := unpark(xp)
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
	_ = s.w.kick(func() error { return kick(s.client.Conn, s.client.Registry, state, text) })
	s.endClient()
}

// drainClient reads what the kicked client still sends until it closes (or
// lingerAfterEnd, the read deadline endClient set), off the event loop only: a
// socket closed with the client's bytes unread is reset, and a reset can take
// the kick with it before the client read it (a bot verification's kick was
// lost that way to a client still sending its positions).
func (s *Session) drainClient() {
	_, _ = io.Copy(io.Discard, io.LimitReader(s.clientNet, maxDrainAfterKick))
}

// maxDrainAfterKick bounds what drainClient reads of a client that keeps sending.
const maxDrainAfterKick = 64 << 10

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
