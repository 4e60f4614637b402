package limbo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// Message is what the limbo shows a held player. Each text is a JSON chat
// component (mc.TextComponent for plain text); nil shows nothing.
type Message struct {
	// Title and Subtitle are shown large in the middle of the screen until
	// they change; 1.7, which has no titles, gets them as a chat line.
	Title, Subtitle json.RawMessage
	// ActionBar is shown above the hotbar, refreshed every tick so it does
	// not fade (1.8+).
	ActionBar json.RawMessage
}

// Clock is the time source of Hold, injected so tests move it by hand.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Stopper
}

// Stopper cancels a pending AfterFunc.
type Stopper interface{ Stop() bool }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Stopper {
	return time.AfterFunc(d, f)
}

// HoldOptions tune Hold; the zero value is vanilla's behaviour.
type HoldOptions struct {
	// Message is asked for the text to show at every tick; nil shows nothing.
	// It runs on the limbo's timer with the player's hold state locked: it
	// must return at once (read a value the caller updates, format a number).
	Message func() Message
	// Tick is how often the message is refreshed (default 1 s). Without a
	// message the limbo only wakes for keep-alives.
	Tick time.Duration
	// KeepAliveInterval is how often a keep-alive is sent (default 15 s, as
	// vanilla servers do).
	KeepAliveInterval time.Duration
	// KeepAliveTimeout is how long a keep-alive may stay unanswered before
	// the player counts as gone (default 30 s, as vanilla).
	KeepAliveTimeout time.Duration
	// WriteTimeout bounds each write to the client (default 10 s).
	WriteTimeout time.Duration
	// ReleaseTimeout is how long the client has to answer the keep-alive
	// that ends the hold at a frame boundary (default 10 s).
	ReleaseTimeout time.Duration
	// ReadLimit bounds each packet the client sends while held (default
	// 32 KiB; vanilla clients send far less in an empty world).
	ReadLimit int
	// Commands, when set, are the commands the player may type in the limbo
	// (a login's /login): declared to 1.13+ clients for completion, and each
	// command line the client sends is handed to Run.
	Commands *Commands
	// Watch, when set, sees the packets of its types the client sends (bot
	// verification watches movement).
	Watch *Watch
	// Clock schedules the keep-alives and messages (default the real one).
	// Socket deadlines always follow the real time.
	Clock Clock

	// onAnswer lets tests see each keep-alive answer once it is recorded.
	onAnswer func(id int64)
}

func (o *HoldOptions) defaults() {
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	if o.KeepAliveInterval <= 0 {
		o.KeepAliveInterval = 15 * time.Second
	}
	if o.KeepAliveTimeout <= 0 {
		o.KeepAliveTimeout = 30 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.ReleaseTimeout <= 0 {
		o.ReleaseTimeout = 10 * time.Second
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = 32 << 10
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
}

// Commands are the commands of a hold.
type Commands struct {
	// Tree builds the command tree declared to 1.13+ clients when the hold
	// starts; nil declares none (the client still sends what is typed).
	Tree func(p mc.Protocol) (mc.CommandTree, error)
	// Run is called, in the reading goroutine, with each command line (without
	// its slash) the player sends: it must hand the line on and return.
	Run func(line string)
}

// Watch is what a hold shows its caller of the client's packets.
type Watch struct {
	Types []mc.PacketType
	// Packet is called in the reading goroutine with each packet of Types
	// (its payload is only valid during the call); keep-alive answers come
	// once recorded; client information and plugin message stand for the
	// client's settings and brand, once each, also when sent before the hold
	// (the configuration of 1.20.2+). It must return at once.
	Packet func(t mc.PacketType, payload []byte)
}

// chatIDs are the ids of the serverbound packets a typed command comes in.
type chatIDs map[int32]mc.PacketType

func commandPackets(reg *mc.Registry) chatIDs {
	ids := chatIDs{}
	for _, t := range []mc.PacketType{mc.PacketChatCommand, mc.PacketChatCommandSigned, mc.PacketChatMessage} {
		if id, ok := reg.ID(mc.PlayState, mc.Serverbound, t); ok {
			ids[id] = t
		}
	}
	return ids
}

// declare sends the hold's command tree to a client that knows trees.
func declare(p *Player, c *Commands) error {
	if c.Tree == nil || p.Protocol().Before(mc.V1_13) {
		return nil
	}
	t, err := c.Tree(p.Protocol())
	if err != nil {
		return err
	}
	payload, err := t.AppendPayload(nil)
	if err != nil {
		return err
	}
	return Send(p, mc.Packet{Type: mc.PacketDeclareCommands, Payload: payload})
}

// Undeclare takes a hold's commands away again (an empty tree) before the
// player leaves the limbo: a backend that declares none of its own must not
// leave the client completing /login.
func Undeclare(p *Player, c *Commands) error {
	if c == nil || c.Tree == nil || p.Protocol().Before(mc.V1_13) || p.State != mc.PlayState {
		return nil
	}
	t := mc.NewCommandTree(p.Protocol())
	payload, err := t.AppendPayload(nil)
	if err != nil {
		return err
	}
	return Send(p, mc.Packet{Type: mc.PacketDeclareCommands, Payload: payload})
}

// Why a hold ended without the caller asking.
var (
	// ErrClientLeft means the client closed the connection.
	ErrClientLeft = errors.New("limbo: the client left")
	// ErrTimedOut means the client stopped answering keep-alives.
	ErrTimedOut = errors.New("limbo: the client stopped answering keep-alives")
)

// holder is the state of one held player shared by the reading goroutine
// (Hold's caller) and the timer callbacks.
type holder struct {
	p    *Player
	opts HoldOptions

	kaWire mc.Protocol // keep-alive layout

	mu        sync.Mutex
	stopped   bool
	err       error // why the timer side ended the hold
	timer     Stopper
	nextID    int64
	pendingID int64
	pending   bool
	sentAt    time.Time
	releasing bool
	releaseID int64
	shown     Message // title and subtitle on screen
}

// Hold keeps a player in the limbo until ctx ends or the client goes: it
// reads and drops everything the client sends (each packet bounded by
// ReadLimit, none kept), sends keep-alives at vanilla's interval and checks
// the answers, and shows opts.Message. When ctx ends it sends one more
// keep-alive and returns nil once the client has answered it: the client is
// then still in play in the limbo and the connection is at a frame boundary,
// ready for a kick, StartConfiguration or Rejoin. It returns ErrClientLeft,
// ErrTimedOut or the read or write error otherwise. Hold lifts the deadlines
// the caller left on Net, uses its own while it runs and clears them before
// returning; the read limit is restored too. It runs in the caller's
// goroutine and starts none that outlives it. The caller may write to the
// player meanwhile (Send: a chat line); writes are serialised.
func Hold(ctx context.Context, p *Player, opts HoldOptions) error {
	if p.State != mc.PlayState {
		return fmt.Errorf("limbo: hold from the %s state", p.State)
	}
	opts.defaults()
	kaIn, ok := p.Registry.ID(mc.PlayState, mc.Serverbound, mc.PacketKeepAlive)
	if !ok {
		return fmt.Errorf("limbo: %v has no keep-alive", p.Protocol())
	}
	h := &holder{p: p, opts: opts, kaWire: p.Protocol(), nextID: 1}
	prevLimit := p.Conn.ReadLimit()
	p.Conn.SetReadLimit(opts.ReadLimit)
	// The hold has its own liveness check: whatever deadline the caller's
	// login or Enter left is lifted.
	_ = p.Net.SetDeadline(time.Time{})
	defer func() {
		p.Conn.SetReadLimit(prevLimit)
		_ = p.Net.SetDeadline(time.Time{})
	}()

	var watched map[int32]mc.PacketType // nil (no lookup cost) without a Watch
	watchKA, watchInfo, watchBrand := false, false, false
	if opts.Watch != nil {
		watched = map[int32]mc.PacketType{}
		for _, t := range opts.Watch.Types {
			switch t {
			case mc.PacketKeepAlive:
				watchKA = true
			case mc.PacketClientInformation:
				watchInfo = true
			case mc.PacketPluginMessage:
				watchBrand = true // only the brand: the limbo keeps it (Player.Brand)
			default:
				if id, ok := p.Registry.ID(mc.PlayState, mc.Serverbound, t); ok {
					watched[id] = t
				}
			}
		}
	}
	// Settings and brand the client sent before the hold (in configuration,
	// 1.20.2+) count as sent; later ones are shown as they come.
	sawInfo, sawBrand := false, false
	identity := func() {
		if watchInfo && !sawInfo && p.ClientInformation != nil {
			sawInfo = true
			opts.Watch.Packet(mc.PacketClientInformation, p.ClientInformation)
		}
		if watchBrand && !sawBrand && p.Brand != nil {
			sawBrand = true
			opts.Watch.Packet(mc.PacketPluginMessage, p.Brand)
		}
	}
	identity()
	var cmdIDs chatIDs
	if opts.Commands != nil {
		cmdIDs = commandPackets(p.Registry)
		if err := declare(p, opts.Commands); err != nil {
			return fmt.Errorf("limbo: declaring the commands: %w", err)
		}
	}
	h.mu.Lock()
	h.tickLocked() // the first keep-alive and message go out at once
	h.mu.Unlock()
	stopRelease := context.AfterFunc(ctx, h.release)
	defer stopRelease()
	defer h.stop()

	for {
		raw, err := p.Conn.ReadRaw()
		if err != nil {
			h.mu.Lock()
			why := h.err
			h.mu.Unlock()
			switch {
			case why != nil:
				return why
			case errors.Is(err, io.EOF):
				return ErrClientLeft
			case errors.Is(err, os.ErrDeadlineExceeded):
				return fmt.Errorf("limbo: the client did not answer the release keep-alive: %w", ErrTimedOut)
			}
			return fmt.Errorf("limbo: reading the held client: %w", err)
		}
		id, err := p.Conn.PeekID(raw)
		if err != nil {
			return err
		}
		if t, ok := watched[id]; ok {
			f, err := p.Conn.Decode(raw)
			if err != nil {
				return err
			}
			opts.Watch.Packet(t, f.Payload)
			continue
		}
		if t, ok := cmdIDs[id]; ok {
			f, err := p.Conn.Decode(raw)
			if err != nil {
				return err
			}
			line, isCmd, err := mc.DecodeChatCommand(t, f.Payload, p.Protocol())
			if err != nil {
				return fmt.Errorf("%w: %v", ErrProtocol, err)
			}
			if isCmd {
				opts.Commands.Run(line)
			}
			continue
		}
		if id != kaIn {
			// Movement, chat, commands: a limbo has nothing to do with them.
			// Settings and brand are kept for the next backend.
			if err := p.remember(id, raw); err != nil {
				return err
			}
			identity()
			continue
		}
		f, err := p.Conn.Decode(raw)
		if err != nil {
			return err
		}
		ka, err := mc.DecodeKeepAlive(f.Payload, h.kaWire)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrProtocol, err)
		}
		released := h.answered(ka.ID)
		if opts.onAnswer != nil {
			opts.onAnswer(ka.ID)
		}
		if watchKA {
			opts.Watch.Packet(mc.PacketKeepAlive, f.Payload)
		}
		if released {
			return nil
		}
	}
}

// answered records a keep-alive answer; it reports whether it was the release.
func (h *holder) answered(id int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.releasing && id == h.releaseID {
		h.stopped = true
		return true
	}
	if h.pending && id == h.pendingID {
		h.pending = false
	}
	return false
}

// stop ends the timer side; no write happens after it returns.
func (h *holder) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	if h.timer != nil {
		h.timer.Stop()
	}
}

// fail ends the hold from the timer side: the read deadline wakes the reader,
// which returns err.
func (h *holder) failLocked(err error) {
	if h.err == nil {
		h.err = err
	}
	h.stopped = true
	_ = h.p.Net.SetReadDeadline(time.Unix(1, 0))
}

// release answers the end of ctx: one keep-alive whose answer marks a frame
// boundary, with ReleaseTimeout for the client to send it. A title the limbo
// put up is taken down with it (it would stay for hours in the next world).
func (h *holder) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped || h.releasing {
		return
	}
	h.releasing = true
	h.releaseID = h.newID()
	pks := []mc.Packet{h.keepAlive(h.releaseID)}
	if (len(h.shown.Title) > 0 || len(h.shown.Subtitle) > 0) && h.p.Protocol().AtLeast(mc.V1_8) {
		if pk, err := titlePacket(h.p.Protocol(), mc.Title{Action: mc.TitleReset}); err == nil {
			pks = append(pks, pk)
		}
	}
	defer h.deadline()()
	if err := Send(h.p, pks...); err != nil {
		h.failLocked(err)
		return
	}
	_ = h.p.Net.SetReadDeadline(time.Now().Add(h.opts.ReleaseTimeout))
}

// newID numbers keep-alives; small numbers fit every version's layout
// (an int32 in 1.7, a VarInt before 1.12.2).
func (h *holder) newID() int64 {
	id := h.nextID
	h.nextID++
	return id
}

func (h *holder) tick() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tickLocked()
}

// deadline bounds the writes of one tick (under the player's Writer when he
// has one); the returned func lifts it again, so a caller writing to the held
// client between ticks is not cut short.
func (h *holder) deadline() func() {
	if w := h.p.Writer; w != nil {
		w.Lock()
		return w.Unlock
	}
	_ = h.p.Net.SetWriteDeadline(time.Now().Add(h.opts.WriteTimeout))
	return func() { _ = h.p.Net.SetWriteDeadline(time.Time{}) }
}

// tickLocked sends the keep-alive when due, checks the last one was answered,
// refreshes the message and schedules the next tick (before writing, so the
// schedule never depends on how long a write takes).
func (h *holder) tickLocked() {
	if h.stopped || h.releasing {
		return
	}
	now := h.opts.Clock.Now()
	if h.pending && now.Sub(h.sentAt) >= h.opts.KeepAliveTimeout {
		h.failLocked(ErrTimedOut)
		return
	}
	sendKA := !h.pending && (h.sentAt.IsZero() || now.Sub(h.sentAt) >= h.opts.KeepAliveInterval)
	if sendKA {
		h.pendingID, h.pending, h.sentAt = h.newID(), true, now
	}
	// Wake when the next keep-alive is due; if the last one is still
	// unanswered by then, when it times out.
	elapsed := now.Sub(h.sentAt)
	next := h.opts.KeepAliveInterval - elapsed
	if next <= 0 {
		next = h.opts.KeepAliveTimeout - elapsed
	}
	if h.opts.Message != nil {
		next = min(next, h.opts.Tick)
	}
	h.timer = h.opts.Clock.AfterFunc(max(next, time.Millisecond), h.tick)

	// Everything of one tick goes out in one write.
	var pks []mc.Packet
	if sendKA {
		pks = append(pks, h.keepAlive(h.pendingID))
	}
	if h.opts.Message != nil {
		var err error
		if pks, err = h.showLocked(pks, h.opts.Message()); err != nil {
			h.failLocked(err)
			return
		}
	}
	if len(pks) == 0 {
		return
	}
	defer h.deadline()()
	if err := Send(h.p, pks...); err != nil {
		h.failLocked(err)
	}
}

func (h *holder) keepAlive(id int64) mc.Packet {
	return mc.Packet{Type: mc.PacketKeepAlive, Payload: mc.KeepAlive{ID: id}.AppendPayload(nil, h.kaWire)}
}

// titleStay keeps a title up for about 14 hours: it only changes when the
// caller's message does.
const titleStay = 1_000_000

// showLocked adds to pks what changed in the message, and the action bar
// always (it fades after about three seconds).
func (h *holder) showLocked(pks []mc.Packet, m Message) ([]mc.Packet, error) {
	proto := h.p.Protocol()
	if !jsonEqual(m.Title, h.shown.Title) || !jsonEqual(m.Subtitle, h.shown.Subtitle) {
		var err error
		if pks, err = titlePackets(pks, proto, m); err != nil {
			return nil, err
		}
		h.shown.Title, h.shown.Subtitle = m.Title, m.Subtitle
	}
	if len(m.ActionBar) == 0 || proto.Before(mc.V1_8) {
		return pks, nil
	}
	pk, err := titlePacket(proto, mc.Title{Action: mc.TitleActionBar, Text: m.ActionBar})
	if err != nil {
		return nil, err
	}
	return append(pks, pk), nil
}

// titlePackets adds what shows m's title and subtitle (or hides them).
func titlePackets(pks []mc.Packet, proto mc.Protocol, m Message) ([]mc.Packet, error) {
	if proto.Before(mc.V1_8) {
		text := mc.DescriptionText(m.Title)
		if sub := mc.DescriptionText(m.Subtitle); sub != "" {
			text += " - " + sub
		}
		if text == "" {
			return pks, nil
		}
		payload, err := mc.SystemChat{Message: mc.TextComponent(text)}.AppendPayload(nil, proto)
		if err != nil {
			return nil, err
		}
		return append(pks, mc.Packet{Type: mc.PacketSystemChat, Payload: payload}), nil
	}
	if len(m.Title) == 0 && len(m.Subtitle) == 0 {
		pk, err := titlePacket(proto, mc.Title{Action: mc.TitleHide})
		if err != nil {
			return nil, err
		}
		return append(pks, pk), nil
	}
	title := m.Title
	if len(title) == 0 {
		title = mc.TextComponent("") // a subtitle shows only under a title
	}
	for _, t := range []mc.Title{
		{Action: mc.TitleTimes, FadeIn: 0, Stay: titleStay, FadeOut: 10},
		{Action: mc.TitleSubtitle, Text: orEmpty(m.Subtitle)},
		{Action: mc.TitleShow, Text: title},
	} {
		pk, err := titlePacket(proto, t)
		if err != nil {
			return nil, err
		}
		pks = append(pks, pk)
	}
	return pks, nil
}

// titleCache keeps encoded title packets: thousands of held players see the
// same few texts (a countdown, queue positions), and a component costs far
// more to encode (NBT from 1.20.3) than to look up. It is bounded by
// emptying it when full.
var titleCache struct {
	sync.Mutex
	m map[titleKey]mc.Packet
}

type titleKey struct {
	p      mc.Protocol
	action mc.TitleAction
	text   string
	times  [3]int32
}

const titleCacheSize = 4096

func titlePacket(p mc.Protocol, t mc.Title) (mc.Packet, error) {
	k := titleKey{p, t.Action, string(t.Text), [3]int32{t.FadeIn, t.Stay, t.FadeOut}}
	titleCache.Lock()
	pk, ok := titleCache.m[k]
	titleCache.Unlock()
	if ok {
		return pk, nil
	}
	pk, err := t.Packet(p)
	if err != nil {
		return mc.Packet{}, err
	}
	titleCache.Lock()
	if titleCache.m == nil || len(titleCache.m) >= titleCacheSize {
		titleCache.m = make(map[titleKey]mc.Packet, titleCacheSize)
	}
	titleCache.m[k] = pk
	titleCache.Unlock()
	return pk, nil
}

func orEmpty(js json.RawMessage) json.RawMessage {
	if len(js) == 0 {
		return mc.TextComponent("")
	}
	return js
}

func jsonEqual(a, b json.RawMessage) bool { return string(a) == string(b) }
