package limbo

import (
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// Commands typed in the limbo reach Commands.Run, in whichever packet the
// version sends them; chat that is not a command does not; 1.13+ clients get
// the declared tree.
func TestHoldCommands(t *testing.T) {
	for _, p := range []mc.Protocol{mc.V1_8, mc.V1_12_2, mc.V1_13, mc.V1_19_4, mc.V1_21_4} {
		lines := make(chan string, 4)
		cmds := &Commands{
			Tree: func(p mc.Protocol) (mc.CommandTree, error) {
				tree := mc.NewCommandTree(p)
				login := tree.AddLiteral(tree.Root, "login", false)
				_, err := tree.AddArgument(login, "password", mc.ArgWord, false, true)
				return tree, err
			},
			Run: func(line string) { lines <- line },
		}
		h := startHold(t, p, HoldOptions{Commands: cmds})
		if p.AtLeast(mc.V1_13) {
			f := h.client.nextOf(mc.PacketDeclareCommands)
			tree, err := mc.DecodeCommandTree(f.Payload, p)
			if err != nil {
				t.Fatalf("%v: the declared tree does not decode: %v", p, err)
			}
			if _, ok := tree.RootChild("login"); !ok {
				t.Fatalf("%v: no /login in the declared tree", p)
			}
		}
		h.answer(h.keepAlive())
		if p.AtLeast(mc.V1_19) {
			// The 1.19+ command packet: the line, then a timestamp, salt and
			// signatures the limbo does not need.
			h.client.send(mc.PacketChatCommand, append(mc.AppendString(nil, "login hunter22"), make([]byte, 20)...))
		} else {
			h.client.send(mc.PacketChatMessage, mc.AppendString(nil, "hello"))
			h.client.send(mc.PacketChatMessage, mc.AppendString(nil, "/login hunter22"))
		}
		select {
		case got := <-lines:
			if got != "login hunter22" {
				t.Fatalf("%v: Run(%q)", p, got)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%v: the typed command never reached Run", p)
		}
		select {
		case got := <-lines:
			t.Fatalf("%v: chat that is no command reached Run: %q", p, got)
		default:
		}
		h.cancel()
		h.answer(h.keepAlive())
		if err := h.result(); err != nil {
			t.Fatalf("%v: %v", p, err)
		}
	}
}

// A command packet that does not decode ends the hold as a protocol error,
// not a panic.
func TestHoldCommandsMalformed(t *testing.T) {
	h := startHold(t, mc.V1_21_4, HoldOptions{Commands: &Commands{Run: func(string) {}}})
	h.answer(h.keepAlive())
	h.client.send(mc.PacketChatCommand, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x0F})
	if err := h.result(); err == nil {
		t.Fatal("a malformed command packet was taken")
	}
}
