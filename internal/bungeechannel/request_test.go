package bungeechannel

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// requestCases cover every subcommand: the bytes a plugin writes, built by hand,
// and the Request they mean.
var requestCases = []struct {
	name string
	wire string
	want Request
}{
	{"Connect", u("Connect") + u("survival"), Request{Op: OpConnect, Server: "survival"}},
	{"ConnectOther", u("ConnectOther") + u("jeb_") + u("lobby"), Request{Op: OpConnectOther, Player: "jeb_", Server: "lobby"}},
	{"IP", u("IP"), Request{Op: OpIP}},
	{"IPOther", u("IPOther") + u("Notch"), Request{Op: OpIPOther, Player: "Notch"}},
	{"PlayerCount", u("PlayerCount") + u("ALL"), Request{Op: OpPlayerCount, Server: "ALL"}},
	{"PlayerList", u("PlayerList") + u("lobby"), Request{Op: OpPlayerList, Server: "lobby"}},
	{"GetServers", u("GetServers"), Request{Op: OpGetServers}},
	{"GetServer", u("GetServer"), Request{Op: OpGetServer}},
	{"GetPlayerServer", u("GetPlayerServer") + u("jeb_"), Request{Op: OpGetPlayerServer, Player: "jeb_"}},
	{"UUID", u("UUID"), Request{Op: OpUUID}},
	{"UUIDOther", u("UUIDOther") + u("Notch"), Request{Op: OpUUIDOther, Player: "Notch"}},
	{"ServerIP", u("ServerIP") + u("survival"), Request{Op: OpServerIP, Server: "survival"}},
	{"Message", u("Message") + u("ALL") + "\x00\x08\xC2\xA7aHello", Request{Op: OpMessage, Player: "ALL", Text: "§aHello"}},
	{"MessageRaw", u("MessageRaw") + u("Notch") + u(`{"text":"hi"}`), Request{Op: OpMessageRaw, Player: "Notch", Text: `{"text":"hi"}`}},
	{"KickPlayer", u("KickPlayer") + u("Notch") + u("Bye"), Request{Op: OpKickPlayer, Player: "Notch", Text: "Bye"}},
	{"KickPlayerRaw", u("KickPlayerRaw") + u("Notch") + u(`"Bye"`), Request{Op: OpKickPlayerRaw, Player: "Notch", Text: `"Bye"`}},
	{"Forward", u("Forward") + u("ONLINE") + u("MyChannel") + "\x00\x03\x00\xFF\x01", Request{Op: OpForward, Server: "ONLINE", Channel: "MyChannel", Data: []byte{0, 0xFF, 1}}},
	{"ForwardToPlayer", u("ForwardToPlayer") + u("Notch") + u("MyChannel") + "\x00\x00", Request{Op: OpForwardToPlayer, Player: "Notch", Channel: "MyChannel", Data: []byte{}}},
}

func TestDecodeRequestEverySubcommand(t *testing.T) {
	seen := map[Op]bool{}
	for _, c := range requestCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeRequest([]byte(c.wire))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			// Whatever follows the last field is ignored, as DataInputStream leaves it.
			if got, err := DecodeRequest([]byte(c.wire + "\x01trailing")); err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("with trailing bytes: %+v, %v", got, err)
			}
			// Encoding gives the plugin's bytes back.
			enc, err := c.want.AppendTo([]byte("p"))
			if err != nil || string(enc) != "p"+c.wire {
				t.Fatalf("AppendTo = % x, %v; want % x", enc, err, c.wire)
			}
			seen[c.want.Op] = true
		})
	}
	for _, op := range Ops() {
		if !seen[op] {
			t.Errorf("no request case for %s", op)
		}
	}
}

// Cutting any request short anywhere is an error wrapping ErrMalformed, never a
// panic and never a request with a field missing.
func TestDecodeRequestTruncated(t *testing.T) {
	for _, c := range requestCases {
		for n := range len(c.wire) {
			got, err := DecodeRequest([]byte(c.wire[:n]))
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("%s cut at %d/%d: %+v, %v; want ErrMalformed", c.name, n, len(c.wire), got, err)
			}
			fields := got
			fields.Op = OpUnknown
			if !reflect.DeepEqual(fields, Request{}) {
				t.Errorf("%s cut at %d: fields %+v came back with the error", c.name, n, got)
			}
		}
	}
}

func TestDecodeRequestRefuses(t *testing.T) {
	cases := []struct {
		name, wire string
		want       error
	}{
		{"unknown subchannel", u("Teleport") + u("x"), ErrUnknownSubchannel},
		{"case matters", u("connect") + u("lobby"), ErrUnknownSubchannel},
		{"empty subchannel", u(""), ErrUnknownSubchannel},
		{"negative forward length", u("Forward") + u("ALL") + u("c") + "\x80\x00", ErrMalformed},
		{"forward length past the end", u("Forward") + u("ALL") + u("c") + "\x00\x05ab", ErrMalformed},
		{"bad text", u("Message") + u("ALL") + "\x00\x01\xFF", ErrMalformed},
	}
	for _, c := range cases {
		if got, err := DecodeRequest([]byte(c.wire)); !errors.Is(err, c.want) {
			t.Errorf("%s: %+v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

func TestRequestAppendToRefuses(t *testing.T) {
	if _, err := (Request{}).AppendTo(nil); !errors.Is(err, ErrUnknownSubchannel) {
		t.Errorf("no op: %v", err)
	}
	big := Request{Op: OpForward, Server: "ALL", Channel: "c", Data: make([]byte, MaxForwardData+1)}
	if out, err := big.AppendTo([]byte("k")); !errors.Is(err, ErrTooLong) || string(out) != "k" {
		t.Errorf("oversized forward: %d bytes, %v", len(out), err)
	}
	fits := Request{Op: OpForward, Server: "ALL", Channel: "c", Data: make([]byte, MaxForwardData)}
	out, err := fits.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeRequest(out)
	if err != nil || !bytes.Equal(back.Data, fits.Data) {
		t.Fatalf("32767 bytes of data do not round-trip: %v", err)
	}
}

func TestForwardedRoundTrip(t *testing.T) {
	wire := u("MyChannel") + "\x00\x02\xAB\xCD"
	out, err := AppendForwarded(nil, "MyChannel", []byte{0xAB, 0xCD})
	if err != nil || string(out) != wire {
		t.Fatalf("AppendForwarded = % x, %v", out, err)
	}
	ch, data, err := DecodeForwarded(out)
	if err != nil || ch != "MyChannel" || !bytes.Equal(data, []byte{0xAB, 0xCD}) {
		t.Fatalf("DecodeForwarded = %q % x %v", ch, data, err)
	}
	if _, _, err := DecodeForwarded(out[:len(out)-1]); !errors.Is(err, ErrMalformed) {
		t.Fatalf("short forwarded message: %v", err)
	}
}

func TestOpNames(t *testing.T) {
	if len(Ops()) != 18 {
		t.Fatalf("%d ops, want BungeeCord's 18", len(Ops()))
	}
	for _, op := range Ops() {
		if ParseOp(op.String()) != op || op.Key() == "" {
			t.Errorf("%d: name %q key %q", op, op.String(), op.Key())
		}
	}
	if ParseOp("Nope") != OpUnknown || OpUnknown.String() != "unknown" || Op(200).String() != "unknown" || Op(200).Key() != "" {
		t.Error("unknown ops must stay unknown")
	}
}
