package session

import (
	"bufio"
	"bytes"
	"io"
	"testing"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// loop repeats one frame forever.
type loop struct {
	b   []byte
	off int
}

func (l *loop) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], l.b[l.off:])
		n += c
		l.off = (l.off + c) % len(l.b)
	}
	return n, nil
}

// BenchmarkRelayFilter is the relay's per-frame work around the filter: read a
// frame, peek its id, ask the watch set, and (when watched) decode it and run
// the filter, then write it on. "unwatched" is what every frame of a session
// costs when no filter names its id (the proxy's commands watch chat and
// completion packets only), "none" a session without any filter, and
// "watched" one filter on the frame's id.
func BenchmarkRelayFilter(b *testing.B) {
	reg, _ := mc.RegistryFor(mc.V1_21_4)
	id, _ := reg.ID(mc.PlayState, mc.Serverbound, mc.PacketPluginMessage)
	var wire bytes.Buffer
	w := mc.NewConn(nil, &wire, nil)
	payload, _ := mc.PluginMessage{Channel: "minecraft:brand", Data: make([]byte, 100)}.AppendPayload(nil, mc.V1_21_4)
	if err := w.WritePacket(id, payload); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"none", "unwatched", "watched"} {
		watched := name == "watched"
		types := []mc.PacketType{mc.PacketChatCommand}
		if watched {
			types = []mc.PacketType{mc.PacketPluginMessage}
		}
		b.Run(name, func(b *testing.B) {
			in := mc.NewConn(bufio.NewReader(&loop{b: wire.Bytes()}), io.Discard, nil)
			out := mc.NewConn(nil, io.Discard, nil)
			seen := 0
			policy := &Policy{Filter: &Filter{
				Serverbound: types,
				Packet:      func(s *Session, pk *Packet) { seen++ },
			}}
			if name == "none" {
				policy = nil
			}
			s := New(&Client{Conn: in, Registry: reg, Protocol: mc.V1_21_4}, nil, policy, nil)
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				f, err := in.ReadRelay()
				if err != nil {
					b.Fatal(err)
				}
				pid, err := in.PeekID(f)
				if err != nil {
					b.Fatal(err)
				}
				if s.watch.has(mc.Serverbound, mc.PlayState, pid) {
					if pk, drop := s.filter(in, f, mc.Serverbound, mc.PlayState, pid, nil); drop || pk != nil {
						b.Fatal("the filter changed nothing")
					}
				}
				if err := out.WriteRelay(f, false); err != nil {
					b.Fatal(err)
				}
				mc.Recycle(f)
			}
			if watched != (seen > 0) {
				b.Fatalf("filter ran %d times", seen)
			}
		})
	}
}
