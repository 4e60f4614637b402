package limbo

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// held starts Hold on a fresh play-state pair with a fake clock; answers
// carries every keep-alive answer Hold has recorded.
type held struct {
	player  *Player
	client  *testClient
	clock   *fakeClock
	done    chan error
	answers chan int64
	cancel  func()
}

func startHold(t *testing.T, p mc.Protocol, opts HoldOptions) *held {
	t.Helper()
	player, client := pair(t, p, mc.PlayState, 128)
	player.Spawned = true
	h := &held{player: player, client: client, clock: newFakeClock(), done: make(chan error, 1), answers: make(chan int64, 64)}
	opts.Clock = h.clock
	opts.onAnswer = func(id int64) { h.answers <- id }
	ctx, cancel := ctxWithCancel(t)
	h.cancel = cancel
	go func() { h.done <- Hold(ctx, player, opts) }()
	return h
}

// keepAlive reads packets until a keep-alive and returns its id.
func (h *held) keepAlive() int64 {
	h.client.t.Helper()
	f := h.client.nextOf(mc.PacketKeepAlive)
	ka, err := mc.DecodeKeepAlive(f.Payload, h.client.reg.Protocol())
	if err != nil {
		h.client.t.Fatal(err)
	}
	return ka.ID
}

// answer echoes a keep-alive and waits until Hold recorded it.
func (h *held) answer(id int64) {
	h.client.t.Helper()
	h.client.send(mc.PacketKeepAlive, mc.KeepAlive{ID: id}.AppendPayload(nil, h.client.reg.Protocol()))
	select {
	case got := <-h.answers:
		if got != id {
			h.client.t.Fatalf("recorded answer %d, sent %d", got, id)
		}
	case <-time.After(5 * time.Second):
		h.client.t.Fatal("answer not recorded")
	}
}

func (h *held) result() error {
	h.client.t.Helper()
	select {
	case err := <-h.done:
		return err
	case <-time.After(5 * time.Second):
		h.client.t.Fatal("Hold did not return")
	}
	return nil
}

func TestHoldKeepAlives(t *testing.T) {
	for _, p := range []mc.Protocol{mc.V1_7_6, mc.V1_8, mc.V1_12_2, mc.V1_20_3, mc.V1_21_4} {
		h := startHold(t, p, HoldOptions{})
		first := h.keepAlive() // sent at once
		h.answer(first)
		h.clock.Advance(14 * time.Second)
		h.client.quiet()
		h.clock.Advance(time.Second)
		second := h.keepAlive()
		if second == first {
			t.Fatalf("%v: keep-alive id reused", p)
		}
		// Unanswered: no new keep-alive, and after 30 s the player is gone.
		h.clock.Advance(15 * time.Second)
		h.client.quiet()
		h.clock.Advance(15 * time.Second)
		if err := h.result(); !errors.Is(err, ErrTimedOut) {
			t.Fatalf("%v: %v", p, err)
		}
		if h.clock.pendingTimers() != 0 {
			t.Errorf("%v: a timer outlived Hold", p)
		}
	}
}

// The client's other packets are read and dropped, however many.
func TestHoldDropsEverythingElse(t *testing.T) {
	h := startHold(t, mc.V1_21_4, HoldOptions{})
	h.answer(h.keepAlive())
	move := make([]byte, 33)
	for range 5000 {
		h.client.sendRaw(0x1C, move)
	}
	h.cancel()
	release := h.keepAlive()
	h.answer(release)
	if err := h.result(); err != nil {
		t.Fatalf("release after 5000 dropped packets: %v", err)
	}
}

func TestHoldReleaseAtFrameBoundary(t *testing.T) {
	h := startHold(t, mc.V1_20_3, HoldOptions{})
	h.answer(h.keepAlive())
	h.cancel()
	id := h.keepAlive()
	h.client.send(mc.PacketKeepAlive, mc.KeepAlive{ID: id}.AppendPayload(nil, mc.V1_20_3))
	if err := h.result(); err != nil {
		t.Fatalf("release: %v", err)
	}
	if h.clock.pendingTimers() != 0 {
		t.Error("a timer outlived Hold")
	}
	// The connection is intact and the deadlines are gone: the switch goes on.
	done := make(chan error, 1)
	go func() { done <- StartConfiguration(h.player) }()
	h.client.nextOf(mc.PacketStartConfiguration)
	h.client.send(mc.PacketConfigurationAck, nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Minute)
	h.client.quiet()
}

func TestHoldReleaseUnanswered(t *testing.T) {
	h := startHold(t, mc.V1_16_4, HoldOptions{ReleaseTimeout: 50 * time.Millisecond})
	h.keepAlive()
	h.cancel()
	h.keepAlive()
	if err := h.result(); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("unanswered release: %v", err)
	}
}

func TestHoldClientLeaves(t *testing.T) {
	h := startHold(t, mc.V1_12_2, HoldOptions{})
	h.keepAlive()
	h.client.net.Close()
	if err := h.result(); !errors.Is(err, ErrClientLeft) {
		t.Fatalf("%v", err)
	}
}

func TestHoldBoundsPackets(t *testing.T) {
	h := startHold(t, mc.V1_21_4, HoldOptions{ReadLimit: 1024})
	h.keepAlive()
	h.client.sendRaw(0x14, make([]byte, 4096))
	if err := h.result(); !errors.Is(err, mc.ErrFrameTooLarge) {
		t.Fatalf("oversized packet: %v", err)
	}
	if h.player.Conn.ReadLimit() != mc.MaxUncompressedSize {
		t.Errorf("read limit left at %d", h.player.Conn.ReadLimit())
	}
}

func TestHoldRefusesOtherStates(t *testing.T) {
	player, _ := pair(t, mc.V1_21_4, mc.ConfigState, -1)
	ctx, _ := ctxWithCancel(t)
	if err := Hold(ctx, player, HoldOptions{}); err == nil {
		t.Error("hold in configuration accepted")
	}
}

// message is a Message the test changes while Hold shows it.
type message struct {
	mu sync.Mutex
	m  Message
}

func (m *message) set(v Message) {
	m.mu.Lock()
	m.m = v
	m.mu.Unlock()
}

func (m *message) get() Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m
}

func TestHoldMessages(t *testing.T) {
	title := mc.TextComponent("Waking the server")
	tests := []struct {
		p                            mc.Protocol
		titleSeq                     []mc.PacketType
		actionBar                    mc.PacketType
		hide                         mc.PacketType
		firstSubtitle, firstTitleTxt string
	}{
		{mc.V1_8, []mc.PacketType{mc.PacketTitle, mc.PacketTitle, mc.PacketTitle}, mc.PacketSystemChat, mc.PacketTitle, "", ""},
		{mc.V1_12_2, []mc.PacketType{mc.PacketTitle, mc.PacketTitle, mc.PacketTitle}, mc.PacketTitle, mc.PacketTitle, "", ""},
		{mc.V1_17_1, []mc.PacketType{mc.PacketSetTitleTimes, mc.PacketSetSubtitleText, mc.PacketSetTitleText}, mc.PacketSetActionBarText, mc.PacketClearTitles, "", ""},
		{mc.V1_21_4, []mc.PacketType{mc.PacketSetTitleTimes, mc.PacketSetSubtitleText, mc.PacketSetTitleText}, mc.PacketSetActionBarText, mc.PacketClearTitles, "", ""},
	}
	for _, tc := range tests {
		var msg message
		countdown := 12
		msg.set(Message{Title: title, Subtitle: mc.TextComponent("12 s"), ActionBar: mc.TextComponent("You are #3 in the queue")})
		h := startHold(t, tc.p, HoldOptions{Message: msg.get})
		c := h.client
		c.expect(mc.PacketKeepAlive)
		var texts []string
		for _, ty := range tc.titleSeq {
			f := c.expect(ty)
			ti, err := mc.DecodeTitle(ty, f.Payload, tc.p)
			if err != nil {
				t.Fatalf("%v: %v", tc.p, err)
			}
			if ti.Action == mc.TitleTimes && ti.Stay < 20*60*60 {
				t.Errorf("%v: title stays only %d ticks", tc.p, ti.Stay)
			}
			texts = append(texts, mc.DescriptionText(ti.Text))
		}
		if texts[1] != "12 s" || texts[2] != "Waking the server" {
			t.Errorf("%v: title texts %q", tc.p, texts)
		}
		checkActionBar(t, c, tc.p, tc.actionBar, "You are #3 in the queue")

		// A second later only the action bar is refreshed.
		h.clock.Advance(time.Second)
		checkActionBar(t, c, tc.p, tc.actionBar, "You are #3 in the queue")
		c.quiet()

		// The countdown moves: the title goes out again.
		countdown--
		msg.set(Message{Title: title, Subtitle: mc.TextComponent("11 s")})
		h.clock.Advance(time.Second)
		for range tc.titleSeq {
			c.next()
		}
		c.quiet()

		// No title any more: it is hidden once.
		msg.set(Message{})
		h.clock.Advance(time.Second)
		f := c.expect(tc.hide)
		if ti, err := mc.DecodeTitle(tc.hide, f.Payload, tc.p); err != nil || ti.Action != mc.TitleHide {
			t.Errorf("%v: hide %+v %v", tc.p, ti, err)
		}
		h.clock.Advance(time.Second)
		c.quiet()

		// Shown again, then released: the release takes the title down.
		msg.set(Message{Title: title})
		h.clock.Advance(time.Second)
		for range tc.titleSeq {
			c.next()
		}
		h.cancel()
		release := h.keepAlive()
		reset := map[bool]mc.PacketType{true: mc.PacketClearTitles, false: mc.PacketTitle}[tc.p.AtLeast(mc.V1_17)]
		if ti, err := mc.DecodeTitle(reset, c.expect(reset).Payload, tc.p); err != nil || ti.Action != mc.TitleReset {
			t.Errorf("%v: release sent %+v %v, want a title reset", tc.p, ti, err)
		}
		h.answer(release)
		if err := h.result(); err != nil {
			t.Fatalf("%v: %v", tc.p, err)
		}
		_ = countdown
	}
}

func checkActionBar(t *testing.T, c *testClient, p mc.Protocol, ty mc.PacketType, want string) {
	t.Helper()
	f := c.expect(ty)
	var text json.RawMessage
	if ty == mc.PacketSystemChat {
		m, err := mc.DecodeSystemChat(f.Payload, p)
		if err != nil || !m.ActionBar {
			t.Fatalf("%v: action bar chat %+v %v", p, m, err)
		}
		text = m.Message
	} else {
		ti, err := mc.DecodeTitle(ty, f.Payload, p)
		if err != nil || ti.Action != mc.TitleActionBar {
			t.Fatalf("%v: action bar %+v %v", p, ti, err)
		}
		text = ti.Text
	}
	if got := mc.DescriptionText(text); got != want {
		t.Errorf("%v: action bar %q", p, got)
	}
}

// 1.7 has neither titles nor an action bar: the title becomes a chat line
// when it changes, the action bar is left out.
func TestHoldMessages17(t *testing.T) {
	var msg message
	msg.set(Message{Title: mc.TextComponent("Waking"), Subtitle: mc.TextComponent("12 s"), ActionBar: mc.TextComponent("bar")})
	h := startHold(t, mc.V1_7_6, HoldOptions{Message: msg.get})
	h.client.expect(mc.PacketKeepAlive)
	m, err := mc.DecodeSystemChat(h.client.expect(mc.PacketSystemChat).Payload, mc.V1_7_6)
	if err != nil || mc.DescriptionText(m.Message) != "Waking - 12 s" {
		t.Fatalf("%+v %v", m, err)
	}
	h.clock.Advance(time.Second)
	h.client.quiet()
}

// The shared cache against encoding every title anew (the baseline): held
// players of one server see the same few texts every second.
func BenchmarkTitlePacket(b *testing.B) {
	title := mc.Title{Action: mc.TitleActionBar, Text: mc.TextComponent("You are #3 in the queue")}
	for _, p := range []mc.Protocol{mc.V1_12_2, mc.V1_21_4} {
		b.Run(p.String()+"/encode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := title.Packet(p); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(p.String()+"/cached", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := titlePacket(p, title); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
