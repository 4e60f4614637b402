package bungeechannel

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/config"
)

// fakeProxy records what the Handler asked of it.
type fakeProxy struct {
	players []Player
	servers []Server
	calls   []string
	fail    error // returned by every action
}

func (f *fakeProxy) Player(name string) (Player, bool) {
	for _, p := range f.players {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return Player{}, false
}

func (f *fakeProxy) Players(server string) []Player {
	var out []Player
	for _, p := range f.players {
		if server == "" || p.Server == server {
			out = append(out, p)
		}
	}
	return out
}

// Count counts without building a list, as a real proxy does from its counters.
func (f *fakeProxy) Count(server string) int {
	n := 0
	for _, p := range f.players {
		if server == "" || p.Server == server {
			n++
		}
	}
	return n
}

func (f *fakeProxy) Servers() []Server { return f.servers }

func (f *fakeProxy) act(format string, a ...any) error {
	f.calls = append(f.calls, fmt.Sprintf(format, a...))
	return f.fail
}

func (f *fakeProxy) Send(_ context.Context, player, server string) error {
	return f.act("send %s %s", player, server)
}
func (f *fakeProxy) Kick(player, reason string, raw bool) error {
	return f.act("kick %s raw=%v %s", player, raw, reason)
}
func (f *fakeProxy) Message(player, text string, raw bool) error {
	return f.act("message %s raw=%v %s", player, raw, text)
}
func (f *fakeProxy) ForwardTo(server string, payload []byte) error {
	if len(f.Players(server)) == 0 {
		f.calls = append(f.calls, "nobody on "+server)
		return ErrNoPlayers
	}
	return f.act("forward %s % x", server, payload)
}
func (f *fakeProxy) ForwardToPlayer(player string, payload []byte) error {
	return f.act("forward-to-player %s % x", player, payload)
}

func network() *fakeProxy {
	return &fakeProxy{
		players: []Player{
			{Name: "Notch", UUID: "069a79f4-44e9-4726-a5be-fca90e38aaf5", Server: "lobby", Addr: netip.MustParseAddrPort("[::ffff:203.0.113.7]:54321")},
			{Name: "jeb_", UUID: "853c80ef-3c37-49fd-aa49-938b674adae6", Server: "survival", Addr: netip.MustParseAddrPort("[2001:db8::1%eth0]:25565")},
			{Name: "Dinnerbone", UUID: "61699b2ed3274a019f1e0ea8c3f06bc6", Server: "lobby", Addr: netip.MustParseAddrPort("198.51.100.2:60000")},
		},
		servers: []Server{{ID: "lobby", Addr: "10.0.0.10:25565"}, {ID: "survival", Addr: "10.0.0.11:40000"}, {ID: "creative", Addr: "[2001:db8::7]:25566"}},
	}
}

// allowAll turns every permission on, so each case tests the operation itself.
func allowAll() config.ChannelPermissions {
	var p config.ChannelPermissions
	v := reflect.ValueOf(&p).Elem()
	for i := range v.NumField() {
		v.Field(i).SetBool(true)
	}
	return p
}

// notch is the player whose backend (lobby) sends the requests.
var notch = Player{Name: "Notch", UUID: "069a79f4-44e9-4726-a5be-fca90e38aaf5", Server: "lobby", Addr: netip.MustParseAddrPort("[::ffff:203.0.113.7]:54321")}

func TestHandleEverySubcommand(t *testing.T) {
	fwd := "\x00\x09MyChannel\x00\x02\xAB\xCD" // what Forward delivers
	cases := []struct {
		name  string
		req   string
		reply string   // hand-built expected reply, "" for none
		calls []string // what the proxy was asked to do
		err   error    // wrapped by Handle's error
	}{
		{name: "Connect moves the asking player", req: u("Connect") + u("survival"), calls: []string{"send Notch survival"}},
		{name: "Connect names servers case-insensitively", req: u("Connect") + u("SURVIVAL"), calls: []string{"send Notch survival"}},
		{name: "Connect to an unknown server", req: u("Connect") + u("nowhere"), err: ErrUnknownServer},
		{name: "ConnectOther", req: u("ConnectOther") + u("JEB_") + u("lobby"), calls: []string{"send jeb_ lobby"}},
		{name: "ConnectOther an offline player", req: u("ConnectOther") + u("Herobrine") + u("lobby"), err: ErrUnknownPlayer},
		{name: "IP unmaps an IPv4 client", req: u("IP"), reply: u("IP") + u("203.0.113.7") + "\x00\x00\xD4\x31"},
		{name: "IPOther without the zone", req: u("IPOther") + u("jeb_"), reply: u("IPOther") + u("jeb_") + u("2001:db8::1") + "\x00\x00\x63\xDD"},
		{name: "IPOther offline", req: u("IPOther") + u("Herobrine"), err: ErrUnknownPlayer},
		{name: "PlayerCount ALL", req: u("PlayerCount") + u("ALL"), reply: u("PlayerCount") + u("ALL") + "\x00\x00\x00\x03"},
		{name: "PlayerCount of a server", req: u("PlayerCount") + u("Lobby"), reply: u("PlayerCount") + u("lobby") + "\x00\x00\x00\x02"},
		{name: "PlayerCount of an empty server", req: u("PlayerCount") + u("creative"), reply: u("PlayerCount") + u("creative") + "\x00\x00\x00\x00"},
		{name: "PlayerCount of an unknown server is not answered", req: u("PlayerCount") + u("nowhere"), err: ErrUnknownServer},
		{name: "PlayerList ALL", req: u("PlayerList") + u("ALL"), reply: u("PlayerList") + u("ALL") + u("Notch, jeb_, Dinnerbone")},
		{name: "PlayerList of a server", req: u("PlayerList") + u("lobby"), reply: u("PlayerList") + u("lobby") + u("Notch, Dinnerbone")},
		{name: "PlayerList of an empty server", req: u("PlayerList") + u("creative"), reply: u("PlayerList") + u("creative") + u("")},
		{name: "GetServers", req: u("GetServers"), reply: u("GetServers") + u("lobby, survival, creative")},
		{name: "GetServer is the asking backend's", req: u("GetServer"), reply: u("GetServer") + u("lobby")},
		{name: "GetPlayerServer", req: u("GetPlayerServer") + u("JEB_"), reply: u("GetPlayerServer") + u("JEB_") + u("survival")},
		{name: "GetPlayerServer of an offline player answers empty", req: u("GetPlayerServer") + u("Herobrine"), reply: u("GetPlayerServer") + u("Herobrine") + u("")},
		{name: "UUID without dashes", req: u("UUID"), reply: u("UUID") + u("069a79f444e94726a5befca90e38aaf5")},
		{name: "UUIDOther with the real name", req: u("UUIDOther") + u("dinnerbone"), reply: u("UUIDOther") + u("Dinnerbone") + u("61699b2ed3274a019f1e0ea8c3f06bc6")},
		{name: "UUIDOther offline", req: u("UUIDOther") + u("Herobrine"), err: ErrUnknownPlayer},
		{name: "ServerIP", req: u("ServerIP") + u("survival"), reply: u("ServerIP") + u("survival") + u("10.0.0.11") + "\x9C\x40"},
		{name: "ServerIP IPv6", req: u("ServerIP") + u("creative"), reply: u("ServerIP") + u("creative") + u("2001:db8::7") + "\x63\xDE"},
		{name: "ServerIP unknown", req: u("ServerIP") + u("nowhere"), err: ErrUnknownServer},
		{name: "Message a player", req: u("Message") + u("jeb_") + u("hi"), calls: []string{"message jeb_ raw=false hi"}},
		{name: "Message ALL", req: u("Message") + u("ALL") + u("hi"), calls: []string{"message Notch raw=false hi", "message jeb_ raw=false hi", "message Dinnerbone raw=false hi"}},
		{name: "Message offline", req: u("Message") + u("Herobrine") + u("hi"), err: ErrUnknownPlayer},
		{name: "MessageRaw", req: u("MessageRaw") + u("jeb_") + u(`{"text":"hi"}`), calls: []string{`message jeb_ raw=true {"text":"hi"}`}},
		{name: "MessageRaw with broken JSON", req: u("MessageRaw") + u("jeb_") + u(`{"text":`), err: ErrMalformed},
		{name: "KickPlayer", req: u("KickPlayer") + u("jeb_") + u("Bye"), calls: []string{"kick jeb_ raw=false Bye"}},
		{name: "KickPlayer offline", req: u("KickPlayer") + u("Herobrine") + u("Bye"), err: ErrUnknownPlayer},
		{name: "KickPlayerRaw", req: u("KickPlayerRaw") + u("jeb_") + u(`"Bye"`), calls: []string{`kick jeb_ raw=true "Bye"`}},
		{name: "KickPlayerRaw with broken JSON", req: u("KickPlayerRaw") + u("jeb_") + u(`Bye`), err: ErrMalformed},
		{name: "Forward to a server", req: u("Forward") + u("survival") + fwd, calls: []string{"forward survival " + hexs(fwd)}},
		{name: "Forward to its own server by name", req: u("Forward") + u("lobby") + fwd, calls: []string{"forward lobby " + hexs(fwd)}},
		{name: "Forward ALL skips the asking server and empty ones", req: u("Forward") + u("ALL") + fwd, calls: []string{"forward survival " + hexs(fwd), "nobody on creative"}},
		{name: "Forward ONLINE", req: u("Forward") + u("ONLINE") + fwd, calls: []string{"forward survival " + hexs(fwd), "nobody on creative"}},
		{name: "Forward to an empty server is dropped", req: u("Forward") + u("creative") + fwd, calls: []string{"nobody on creative"}, err: ErrNoPlayers},
		{name: "Forward to an unknown server", req: u("Forward") + u("nowhere") + fwd, err: ErrUnknownServer},
		{name: "ForwardToPlayer", req: u("ForwardToPlayer") + u("JEB_") + fwd, calls: []string{"forward-to-player jeb_ " + hexs(fwd)}},
		{name: "ForwardToPlayer offline", req: u("ForwardToPlayer") + u("Herobrine") + fwd, err: ErrUnknownPlayer},
		{name: "unknown subchannel", req: u("Teleport") + u("x"), err: ErrUnknownSubchannel},
		{name: "malformed", req: u("Connect") + "\x00\x09surv", err: ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			px := network()
			h := Handler{Proxy: px, Permissions: allowAll()}
			op, reply, err := h.Handle(context.Background(), notch, []byte(c.req))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if string(reply) != c.reply {
				t.Fatalf("reply = % x\nwant    % x", reply, c.reply)
			}
			if !reflect.DeepEqual(px.calls, c.calls) {
				t.Fatalf("proxy calls = %q, want %q", px.calls, c.calls)
			}
			if wantOp := ParseOp(subOf(c.req)); op != wantOp {
				t.Fatalf("op = %s, want %s", op, wantOp)
			}
		})
	}
}

func hexs(s string) string { return fmt.Sprintf("% x", []byte(s)) }

func subOf(req string) string {
	n := int(req[0])<<8 | int(req[1])
	return req[2 : 2+n]
}

// The proxy's own failure reaches the caller, wrapped with the operation; a
// broadcast goes on to the other players.
func TestHandleReportsProxyErrors(t *testing.T) {
	boom := errors.New("backend gone")
	px := network()
	px.fail = boom
	h := Handler{Proxy: px, Permissions: allowAll()}
	_, _, err := h.Handle(context.Background(), notch, []byte(u("Connect")+u("survival")))
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "Connect") {
		t.Fatalf("err = %v", err)
	}
	_, _, err = h.Handle(context.Background(), notch, []byte(u("Message")+u("ALL")+u("hi")))
	if !errors.Is(err, boom) || len(px.calls) != 1+3 {
		t.Fatalf("err = %v after %d calls; every player must be tried", err, len(px.calls))
	}
}

// Each operation is refused exactly when its own [plugin_messaging.bungeecord_permissions]
// key is off: the key names match the config's toml tags, and turning one off
// touches nothing else.
func TestHandleDeniedByItsOwnKey(t *testing.T) {
	tags := map[string]int{}
	pt := reflect.TypeFor[config.ChannelPermissions]()
	for i := range pt.NumField() {
		tags[pt.Field(i).Tag.Get("toml")] = i
	}
	reqs := map[Op]string{}
	for _, c := range requestCases {
		reqs[c.want.Op] = c.wire
	}
	for _, op := range Ops() {
		field, ok := tags[op.Key()]
		if !ok {
			t.Fatalf("%s: key %q is not a [plugin_messaging.bungeecord_permissions] key", op, op.Key())
		}
		perms := allowAll()
		reflect.ValueOf(&perms).Elem().Field(field).SetBool(false)
		for _, other := range Ops() {
			if Allowed(perms, other) != (other != op) {
				t.Errorf("with %s off, Allowed(%s) = %v", op.Key(), other, Allowed(perms, other))
			}
		}
		px := network()
		h := Handler{Proxy: px, Permissions: perms}
		gotOp, reply, err := h.Handle(context.Background(), notch, []byte(reqs[op]))
		if !errors.Is(err, ErrDenied) || gotOp != op || reply != nil || len(px.calls) != 0 {
			t.Errorf("%s denied: op %s, reply %x, calls %q, err %v", op, gotOp, reply, px.calls, err)
		}
		if err != nil && !strings.Contains(err.Error(), op.Key()) {
			t.Errorf("%s: the error must name the key to turn on: %v", op, err)
		}
	}
	if len(tags) != len(Ops()) {
		t.Errorf("%d permission keys for %d operations", len(tags), len(Ops()))
	}
}

// With the shipped defaults, the writes that reach other players are refused and
// the reads are answered.
func TestHandleDefaults(t *testing.T) {
	h := Handler{Proxy: network(), Permissions: config.DefaultChannelPermissions()}
	for _, c := range requestCases {
		_, _, err := h.Handle(context.Background(), notch, []byte(c.wire))
		denied := errors.Is(err, ErrDenied)
		switch c.want.Op {
		case OpConnectOther, OpMessage, OpMessageRaw, OpKickPlayer, OpKickPlayerRaw:
			if !denied {
				t.Errorf("%s allowed by default (%v)", c.want.Op, err)
			}
		default:
			if denied {
				t.Errorf("%s denied by default", c.want.Op)
			}
		}
	}
	var zero Handler
	if _, _, err := zero.Handle(context.Background(), notch, []byte(u("GetServers"))); !errors.Is(err, ErrDenied) {
		t.Errorf("a zero Handler must refuse: %v", err)
	}
}

func TestChannelNames(t *testing.T) {
	cases := []struct {
		name string
		want bool
	}{
		{"BungeeCord", true}, {"bungeecord:main", true},
		{"bungeecord", false}, {"BungeeCord:main", false}, {"minecraft:brand", false}, {"", false},
	}
	for _, c := range cases {
		if IsChannel(c.name) != c.want {
			t.Errorf("IsChannel(%q) = %v", c.name, !c.want)
		}
	}
	if ChannelFor(340) != "BungeeCord" || ChannelFor(393) != "bungeecord:main" || ChannelFor(47) != "BungeeCord" || ChannelFor(774) != "bungeecord:main" {
		t.Error("1.12.2 and older use BungeeCord; 1.13 and newer bungeecord:main")
	}
}
