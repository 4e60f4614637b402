package bungeechannel

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// replyCases cover every subcommand that has an answer: the Reply and the bytes
// BungeeCord's DownstreamBridge writes for it, built by hand.
var replyCases = []struct {
	name string
	in   Reply
	wire string
}{
	{"IP", Reply{Op: OpIP, Host: "203.0.113.7", Port: 54321}, u("IP") + u("203.0.113.7") + "\x00\x00\xD4\x31"},
	{"IPOther", Reply{Op: OpIPOther, Player: "Notch", Host: "2001:db8::1", Port: 25565}, u("IPOther") + u("Notch") + u("2001:db8::1") + "\x00\x00\x63\xDD"},
	{"PlayerCount", Reply{Op: OpPlayerCount, Server: "ALL", Count: 70000}, u("PlayerCount") + u("ALL") + "\x00\x01\x11\x70"},
	{"PlayerList", Reply{Op: OpPlayerList, Server: "lobby", List: []string{"Notch", "jeb_"}}, u("PlayerList") + u("lobby") + u("Notch, jeb_")},
	{"GetServers", Reply{Op: OpGetServers, List: []string{"lobby", "survival"}}, u("GetServers") + u("lobby, survival")},
	{"GetServer", Reply{Op: OpGetServer, Server: "lobby"}, u("GetServer") + u("lobby")},
	{"GetPlayerServer", Reply{Op: OpGetPlayerServer, Player: "jeb_", Server: "survival"}, u("GetPlayerServer") + u("jeb_") + u("survival")},
	{"UUID", Reply{Op: OpUUID, UUID: "069a79f444e94726a5befca90e38aaf5"}, u("UUID") + u("069a79f444e94726a5befca90e38aaf5")},
	{"UUIDOther", Reply{Op: OpUUIDOther, Player: "jeb_", UUID: "853c80ef3c3749fdaa49938b674adae6"}, u("UUIDOther") + u("jeb_") + u("853c80ef3c3749fdaa49938b674adae6")},
	// The port is an unsigned short on the wire: 40000 is 0x9C40, not a negative number.
	{"ServerIP", Reply{Op: OpServerIP, Server: "survival", Host: "10.0.0.11", Port: 40000}, u("ServerIP") + u("survival") + u("10.0.0.11") + "\x9C\x40"},
}

func TestReplyEverySubcommand(t *testing.T) {
	seen := map[Op]bool{}
	for _, c := range replyCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.in.AppendTo([]byte("p"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "p"+c.wire {
				t.Fatalf("AppendTo = % x\nwant       % x", got[1:], c.wire)
			}
			back, err := DecodeReply([]byte(c.wire))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, c.in) {
				t.Fatalf("DecodeReply = %+v, want %+v", back, c.in)
			}
			for n := range len(c.wire) {
				if r, err := DecodeReply([]byte(c.wire[:n])); !errors.Is(err, ErrMalformed) {
					t.Fatalf("cut at %d: %+v, %v; want ErrMalformed", n, r, err)
				}
			}
			seen[c.in.Op] = true
		})
	}
	for _, op := range Ops() {
		if op.HasReply() != seen[op] {
			t.Errorf("%s: HasReply %v but reply case present %v", op, op.HasReply(), seen[op])
		}
	}
}

func TestReplyRefuses(t *testing.T) {
	cases := []struct {
		name string
		in   Reply
		want error
	}{
		{"a write has no reply", Reply{Op: OpConnect}, nil},
		{"forward has no reply", Reply{Op: OpForward}, nil},
		{"unknown", Reply{}, nil},
		{"port past 65535", Reply{Op: OpServerIP, Server: "s", Host: "h", Port: 65536}, nil},
		{"negative port", Reply{Op: OpIP, Host: "h", Port: -1}, nil},
		{"negative count", Reply{Op: OpPlayerCount, Server: "ALL", Count: -1}, nil},
		// 6 000 sixteen-character names do not fit one writeUTF: BungeeCord throws,
		// this says so.
		{"player list too long", Reply{Op: OpPlayerList, Server: "ALL", List: strings.Split(strings.Repeat("abcdefghijklmnop,", 6000), ",")}, ErrTooLong},
	}
	for _, c := range cases {
		out, err := c.in.AppendTo([]byte("k"))
		if err == nil || string(out) != "k" || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: %d bytes, %v; want an error (%v) and dst untouched", c.name, len(out), err, c.want)
		}
	}
}

func TestDecodeReplyRefuses(t *testing.T) {
	for _, wire := range []string{u("Connect") + u("lobby"), u("Nope"), ""} {
		if r, err := DecodeReply([]byte(wire)); !errors.Is(err, ErrMalformed) {
			t.Errorf("% x: %+v, %v", wire, r, err)
		}
	}
}
