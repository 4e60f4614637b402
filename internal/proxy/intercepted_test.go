package proxy

import (
	"bufio"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/auth/authtest"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/forwarding"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

// modernProtocol is the version the Go-level intercepted tests speak: 1.21
// (configuration phase, NBT disconnects, velocity forwarding v4).
const modernProtocol = mc.Protocol(767)

// seen is what an intercepted test backend learned about one login.
type seen struct {
	host      string // the handshake's server address (BungeeCord fields included)
	name      string // login start
	forwarded *forwarding.Forwarded
	velocity  error // the velocity check's failure, if any
}

// interceptBackend is an offline-mode server written with mc.Conn: it reads the
// proxy's handshake and login start, optionally compresses, asks for velocity
// forwarding and verifies it, then either refuses the login with kick or lets the
// player in and greets them with a configuration-state Disconnect naming what it
// learned (so the client test reads the relayed packet).
type interceptBackend struct {
	addr     string
	velocity *forwarding.Velocity // nil: no velocity query
	kick     string               // refuse every login with this text
	mu       sync.Mutex
	logins   []seen
}

func startInterceptBackend(t *testing.T, secret []byte, kick string) *interceptBackend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &interceptBackend{addr: ln.Addr().String(), kick: kick}
	if secret != nil {
		if b.velocity, err = forwarding.NewVelocity(secret); err != nil {
			t.Fatal(err)
		}
	}
	z, _ := mc.NewZlib(-1)
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				b.serve(c, z)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return b
}

func (b *interceptBackend) serve(c net.Conn, z *mc.Zlib) {
	conn := mc.NewConn(bufio.NewReader(c), c, z)
	f, err := conn.ReadFrame()
	if err != nil {
		return
	}
	hs, _, err := mc.ReadHandshake(bufio.NewReader(strings.NewReader(string(f.Raw))))
	if err != nil {
		return
	}
	p := mc.Protocol(hs.ProtocolVersion)
	reg, ok := mc.RegistryFor(p)
	if !ok {
		return
	}
	ls, _, err := mc.ReadLoginStart(bufio.NewReader(mustFrame(conn)), int32(p))
	if err != nil {
		return
	}
	s := seen{host: hs.ServerAddress, name: ls.Name}
	// Recorded before the last answer is written, so a test that read the answer
	// finds the record.
	record := func() { b.mu.Lock(); b.logins = append(b.logins, s); b.mu.Unlock() }
	write := func(st mc.State, t mc.PacketType, payload []byte) {
		id, _ := reg.ID(st, mc.Clientbound, t)
		_ = conn.WritePacket(id, payload)
	}
	write(mc.LoginState, mc.PacketSetCompression, mc.SetCompression{Threshold: 64}.AppendPayload(nil))
	_ = conn.SetCompression(64)
	if b.velocity != nil {
		write(mc.LoginState, mc.PacketLoginPluginRequest, mc.LoginPluginRequest{MessageID: 7, Channel: forwarding.VelocityChannel, Data: forwarding.RequestPayload(forwarding.VelocityMaxVersion)}.AppendPayload(nil))
		f, err := conn.ReadFrame()
		if err != nil {
			return
		}
		resp, err := mc.DecodeLoginPluginResponse(f.Payload)
		if err != nil || resp.MessageID != 7 || !resp.Successful {
			s.velocity = fmt.Errorf("no velocity answer: %+v %v", resp, err)
		} else if fw, err := b.velocity.Verify(resp.Data, forwarding.VelocityMaxVersion); err != nil {
			s.velocity = err
		} else {
			s.forwarded = &fw
		}
		if s.velocity != nil {
			record()
			d, _ := mc.DisconnectText("Unable to verify player details").AppendPayload(nil, p, mc.LoginState)
			write(mc.LoginState, mc.PacketDisconnect, d)
			return
		}
	}
	if b.kick != "" {
		record()
		d, _ := mc.DisconnectText(b.kick).AppendPayload(nil, p, mc.LoginState)
		write(mc.LoginState, mc.PacketDisconnect, d)
		return
	}
	id := auth.OfflineUUID(ls.Name)
	if s.forwarded != nil {
		id = s.forwarded.Profile.ID
	}
	write(mc.LoginState, mc.PacketLoginSuccess, mc.LoginSuccess{UUID: id, Name: ls.Name}.AppendPayload(nil, p))
	state := mc.PlayState
	if p.AtLeast(mc.V1_20_2) {
		if f, err := conn.ReadFrame(); err != nil || f.ID != 0x03 {
			return
		}
		state = mc.ConfigState
	}
	greet := "welcome " + ls.Name
	if s.forwarded != nil {
		greet += fmt.Sprintf(" uuid=%s ip=%s v%d props=%d", s.forwarded.Profile.ID, s.forwarded.Addr, s.forwarded.Version, len(s.forwarded.Profile.Properties))
	}
	record()
	d, _ := mc.DisconnectText(greet).AppendPayload(nil, p, state)
	write(state, mc.PacketDisconnect, d)
}

func mustFrame(c *mc.Conn) *strings.Reader {
	f, err := c.ReadFrame()
	if err != nil {
		return strings.NewReader("")
	}
	return strings.NewReader(string(f.Raw))
}

func (b *interceptBackend) seen() []seen {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]seen(nil), b.logins...)
}

// goClient is a Minecraft client written with mc.Conn, able to misbehave on
// purpose: the Go side of the client_only tests.
type goClient struct {
	acct      *authtest.Account // join the session server with this account (nil: never join)
	ss        *authtest.Server
	badSecret bool // encrypt one secret, join with another
	malformed bool // send a truncated encryption response
	// record keeps the encryption response sent and its secret; replay sends a
	// recorded one again instead of making its own (and joins nothing).
	record, replay *recorded
}

type recorded struct{ resp, secret []byte }

// login runs a login through the proxy and returns the text of the Disconnect
// that ended it (the proxy's kick, or the backend's greeting relayed) and the
// profile Login Success named.
func (g goClient) login(t *testing.T, addr, host, name string, p mc.Protocol) (string, mc.LoginSuccess, error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return "", mc.LoginSuccess{}, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	reg, _ := mc.RegistryFor(p)
	z, _ := mc.NewZlib(-1)
	conn := mc.NewConn(bufio.NewReader(c), c, z)
	_ = conn.WritePacket(0, mc.Handshake{ProtocolVersion: int32(p), ServerAddress: host, ServerPort: 25565, NextState: mc.StateLogin}.AppendPayload(nil))
	_ = conn.WritePacket(0, mc.LoginStart{Name: name, HasUUID: true}.AppendPayload(nil, p))
	state := mc.LoginState
	var success mc.LoginSuccess
	for {
		f, err := conn.ReadFrame()
		if err != nil {
			return "", success, err
		}
		typ, _ := reg.Type(state, mc.Clientbound, f.ID)
		switch typ {
		case mc.PacketEncryptionRequest:
			req, err := mc.DecodeEncryptionRequest(f.Payload, p)
			if err != nil {
				return "", success, err
			}
			resp, secret, err := g.encryptionResponse(req)
			if err != nil {
				return "", success, err
			}
			id, _ := reg.ID(mc.LoginState, mc.Serverbound, mc.PacketEncryptionResponse)
			_ = conn.WritePacket(id, resp)
			if !g.malformed {
				if err := conn.EnableEncryption(secret); err != nil {
					return "", success, err
				}
			}
		case mc.PacketSetCompression:
			sc, _ := mc.DecodeSetCompression(f.Payload)
			_ = conn.SetCompression(int(sc.Threshold))
		case mc.PacketLoginSuccess:
			if success, err = mc.DecodeLoginSuccess(f.Payload, p); err != nil {
				return "", success, err
			}
			state = mc.PlayState
			if p.AtLeast(mc.V1_20_2) {
				id, _ := reg.ID(mc.LoginState, mc.Serverbound, mc.PacketLoginAcknowledged)
				_ = conn.WritePacket(id, nil)
				state = mc.ConfigState
			}
		case mc.PacketDisconnect:
			d, err := mc.DecodeDisconnect(f.Payload, p, state)
			if err != nil {
				return "", success, err
			}
			return d.Text(), success, nil
		default:
			return "", success, fmt.Errorf("unexpected packet 0x%02x in %s", f.ID, state)
		}
	}
}

func (g goClient) encryptionResponse(req mc.EncryptionRequest) ([]byte, []byte, error) {
	if g.replay != nil {
		return g.replay.resp, g.replay.secret, nil
	}
	pub, err := x509.ParsePKIXPublicKey(req.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	key := pub.(*rsa.PublicKey)
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	joinSecret := secret
	if g.badSecret {
		joinSecret = make([]byte, 16)
		_, _ = rand.Read(joinSecret)
	}
	if g.acct != nil {
		if err := g.ss.ClientJoin(*g.acct, auth.ServerIDHash(req.ServerID, joinSecret, req.PublicKey)); err != nil {
			return nil, nil, err
		}
	}
	encSecret, _ := rsa.EncryptPKCS1v15(rand.Reader, key, secret)
	encToken, _ := rsa.EncryptPKCS1v15(rand.Reader, key, req.VerifyToken)
	resp := mc.EncryptionResponse{SharedSecret: encSecret, VerifyToken: encToken}.AppendPayload(nil, modernProtocol)
	if g.malformed {
		resp = resp[:len(resp)/2]
	}
	if g.record != nil {
		*g.record = recorded{resp: resp, secret: secret}
	}
	return resp, secret, nil
}

func sha1Sum(s string) []byte {
	h := sha1.Sum([]byte(s))
	return h[:]
}

func mustB64(t *testing.T, s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func interceptedServer(id string, mode config.ProxyMode, addrs ...string) *config.Server {
	s := newServer(id, []string{id + ".test"}, addrs...)
	s.ProxyMode = mode
	return s
}

// client_only: every way authentication can fail gets vanilla's kick text, never a
// hang; the happy path reaches the backend with the session server's identity.
func TestClientOnlyAuthentication(t *testing.T) {
	ss := authtest.New(t)
	acct := ss.AddAccount("Notch")
	b := startInterceptBackend(t, nil, "")
	tp := startProxy(t, func(c *config.Config) {
		c.Auth.SessionServer = ss.URL
		c.Auth.Timeout = config.Duration(300 * time.Millisecond)
	}, interceptedServer("auth", config.ModeClientOnly, b.addr))

	var first recorded
	got, success, err := goClient{acct: &acct, ss: ss, record: &first}.login(t, tp.addr, "auth.test", "notch", modernProtocol)
	if err != nil || got != "welcome Notch" {
		t.Fatalf("authenticated login: %q, %v; want the backend's greeting relayed", got, err)
	}
	if auth.UUID(success.UUID) != acct.ID || success.Name != "Notch" {
		t.Fatalf("login success named %s %q; want the session server's %s Notch", auth.UUID(success.UUID), success.Name, acct.ID)
	}

	// Someone who recorded that login's bytes sends its Encryption Response on
	// a connection of their own. The session server still holds the join
	// (hasJoined may be asked more than once), so only the login's own
	// serverId tells the two apart. (The recorded secret lets the test read
	// the kick; an eavesdropper would not have it.)
	if got, _, err := (goClient{ss: ss, replay: &first}).login(t, tp.addr, "auth.test", "Notch", modernProtocol); err != nil || got != auth.KickFailedVerify {
		t.Fatalf("replayed encryption response: got %q, %v; want the kick %q", got, err, auth.KickFailedVerify)
	}

	cases := []struct {
		name   string
		client goClient
		mode   authtest.Mode
		want   string
	}{
		{"wrong shared secret", goClient{acct: &acct, ss: ss, badSecret: true}, authtest.Normal, auth.KickFailedVerify},
		{"never joined", goClient{ss: ss}, authtest.Normal, auth.KickFailedVerify},
		{"session server down", goClient{acct: &acct, ss: ss}, authtest.Unavailable, auth.KickServersDown},
		{"session server slow", goClient{acct: &acct, ss: ss}, authtest.Hang, auth.KickServersDown},
		{"session server garbage", goClient{acct: &acct, ss: ss}, authtest.Garbage, auth.KickServersDown},
		{"malformed encryption response", goClient{acct: &acct, ss: ss, malformed: true}, authtest.Normal, auth.KickFailedVerify},
	}
	for _, tc := range cases {
		ss.SetMode(tc.mode)
		got, _, err := tc.client.login(t, tp.addr, "auth.test", "Notch", modernProtocol)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want the kick %q", tc.name, got, err, tc.want)
		}
	}
	ss.SetMode(authtest.Normal)
	if n := len(b.seen()); n != 1 {
		t.Fatalf("backend saw %d logins; only the authenticated one may reach it", n)
	}
}

// Velocity modern forwarding: the backend verifies the HMAC and learns the
// player's real IP, Mojang UUID, name and signed skin; a backend holding another
// secret refuses the player, who reads its words.
func TestVelocityForwarding(t *testing.T) {
	ss := authtest.New(t)
	acct := ss.AddAccount("Jeb")
	secretFile := filepath.Join(t.TempDir(), "forwarding.secret")
	if err := os.WriteFile(secretFile, []byte("s3cret-of-the-network\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := startInterceptBackend(t, []byte("s3cret-of-the-network"), "")
	wrong := startInterceptBackend(t, []byte("another-secret"), "")
	s1 := interceptedServer("vel", config.ModeClientOnly, good.addr)
	s2 := interceptedServer("wrong", config.ModeClientOnly, wrong.addr)
	mode := forwarding.ModeVelocity
	s1.ForwardingMode, s2.ForwardingMode = &mode, &mode
	tp := startProxy(t, func(c *config.Config) {
		c.Auth.SessionServer = ss.URL
		c.Forwarding.SecretFile = secretFile
	}, s1, s2)

	got, _, err := goClient{acct: &acct, ss: ss}.login(t, tp.addr, "vel.test", "Jeb", modernProtocol)
	want := fmt.Sprintf("welcome Jeb uuid=%s ip=127.0.0.1 v4 props=1", acct.ID)
	if err != nil || got != want {
		t.Fatalf("velocity login: %q, %v; want %q", got, err, want)
	}
	fw := good.seen()[0].forwarded
	if fw.Profile.Name != "Jeb" || len(fw.Profile.Properties) != 1 {
		t.Fatalf("forwarded profile %+v; want the session server's with its skin", fw.Profile)
	}
	// The skin reaches the backend exactly as the session server signed it.
	tex := fw.Profile.Properties[0]
	if err := rsa.VerifyPKCS1v15(ss.SigningKey(), crypto.SHA1, sha1Sum(tex.Value), mustB64(t, tex.Signature)); tex.Name != "textures" || err != nil {
		t.Fatalf("forwarded textures property %q does not verify against the session server's key: %v", tex.Name, err)
	}

	got, _, err = goClient{acct: &acct, ss: ss}.login(t, tp.addr, "wrong.test", "Jeb", modernProtocol)
	if err != nil || got != "Unable to verify player details" {
		t.Fatalf("velocity with the wrong secret: %q, %v; want the backend's refusal", got, err)
	}
	if v := wrong.seen()[0].velocity; !errors.Is(v, forwarding.ErrBadSignature) {
		t.Fatalf("the backend with another secret must see a bad signature, saw %v", v)
	}

	// A pre-1.13 client cannot take part in velocity forwarding: a clear kick.
	got, _, err = goClient{}.login(t, tp.addr, "vel.test", "Old", mc.Protocol(340))
	if err != nil || got != forwarding.KickVelocityTooOld {
		t.Fatalf("1.12.2 client on a velocity server: %q, %v", got, err)
	}
}

// A backend whose velocity forwarding is not set up lets the player in without
// asking who they are, and would take them as the proxy's address with an
// offline UUID: the proxy treats it as a failed address (Velocity refuses it
// too), tries the next one, and says why in the login's failure line.
func TestVelocityForwardingNotSetUpOnTheBackend(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "forwarding.secret")
	if err := os.WriteFile(secretFile, []byte("s3cret-of-the-network\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unset := startInterceptBackend(t, nil, "")
	good := startInterceptBackend(t, []byte("s3cret-of-the-network"), "")
	s1 := interceptedServer("lobby", config.ModeOffline, unset.addr, good.addr)
	s2 := interceptedServer("alone", config.ModeOffline, unset.addr)
	mode := forwarding.ModeVelocity
	s1.ForwardingMode, s2.ForwardingMode = &mode, &mode
	var logs testutil.SyncBuffer
	tp := startProxyOpts(t, func(c *config.Config) { c.Forwarding.SecretFile = secretFile },
		Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}, s1, s2)

	got, _, err := goClient{}.login(t, tp.addr, "lobby.test", "Alex", modernProtocol)
	if err != nil || !strings.HasPrefix(got, "welcome Alex uuid=") {
		t.Fatalf("first address unset, second set up: %q, %v; want the second's greeting", got, err)
	}
	v, _ := tp.Server("lobby", time.Now())
	if v.Backends[0].LastFailure.IsZero() || !v.Backends[1].LastFailure.IsZero() {
		t.Fatalf("only the unset address failed: %+v", v.Backends)
	}

	got, _, err = goClient{}.login(t, tp.addr, "alone.test", "Alex", modernProtocol)
	if err != nil || got != "unreachable" {
		t.Fatalf("only an unset address: %q, %v; want the server's disconnect message", got, err)
	}
	if !strings.Contains(logs.String(), "did not ask for velocity forwarding") {
		t.Fatalf("the login's failure line does not say why:\n%s", logs.String())
	}
}

// BungeeCord and BungeeGuard forwarding put the player's IP, undashed UUID and
// properties (and the token) in the handshake's host field, byte for byte as
// BungeeCord writes them.
func TestBungeeForwardingHandshake(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "forwarding.secret")
	b := startInterceptBackend(t, nil, "")
	bungee := interceptedServer("bungee", config.ModeOffline, b.addr)
	guard := interceptedServer("guard", config.ModeOffline, b.addr)
	m1, m2 := forwarding.ModeBungeeCord, forwarding.ModeBungeeGuard
	bungee.ForwardingMode, guard.ForwardingMode = &m1, &m2
	tp := startProxy(t, func(c *config.Config) { c.Forwarding.SecretFile = secretFile }, bungee, guard)
	for _, host := range []string{"bungee.test", "guard.test"} {
		if got, _, err := (goClient{}).login(t, tp.addr, host, "Steve", modernProtocol); err != nil || got != "welcome Steve" {
			t.Fatalf("%s: %q, %v", host, got, err)
		}
	}
	token, err := os.ReadFile(secretFile)
	if err != nil {
		t.Fatalf("the bungeeguard token file was not created: %v", err)
	}
	if fi, _ := os.Stat(secretFile); fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file mode %v, want 0600", fi.Mode().Perm())
	}
	id := auth.OfflineUUID("Steve").Undashed()
	want := []string{
		"bungee.test\x00127.0.0.1\x00" + id,
		"guard.test\x00127.0.0.1\x00" + id + "\x00" + `[{"name":"bungeeguard-token","value":"` + strings.TrimSpace(string(token)) + `"}]`,
	}
	logins := b.seen()
	for i, w := range want {
		if logins[i].host != w {
			t.Errorf("handshake host %d:\n got %q\nwant %q", i, logins[i].host, w)
		}
	}
	parsed, err := forwarding.ParseBungeeHost(logins[1].host)
	if err != nil || parsed.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("BungeeGuard host does not parse back: %+v %v", parsed, err)
	}
}

// A backend's "server is full" login kick passes an intercepted player to the next
// replica, as it does for passthrough; another kick (a whitelist) reaches the
// player and the address stays healthy.
func TestInterceptedFullFailoverAndBackendKick(t *testing.T) {
	full := startInterceptBackend(t, nil, "The server is full!")
	room := startInterceptBackend(t, nil, "")
	white := startInterceptBackend(t, nil, "You are not white-listed on this server!")
	tp := startProxy(t, nil,
		interceptedServer("lobby", config.ModeOffline, full.addr, room.addr),
		interceptedServer("wl", config.ModeOffline, white.addr))
	if got, _, err := (goClient{}).login(t, tp.addr, "lobby.test", "Alex", modernProtocol); err != nil || got != "welcome Alex" {
		t.Fatalf("full first replica: %q, %v; want the second replica's greeting", got, err)
	}
	if got, _, err := (goClient{}).login(t, tp.addr, "wl.test", "Alex", modernProtocol); err != nil || got != "You are not white-listed on this server!" {
		t.Fatalf("whitelist kick: %q, %v", got, err)
	}
	v, _ := tp.Server("wl", time.Now())
	if st := v.Backends[0]; st.Health != "healthy" || !st.LastFailure.IsZero() {
		t.Fatalf("a backend that refused a player by name is not a failed backend: %+v", st)
	}
}

// Pre-1.7 clients and protocol numbers the proxy does not know cannot be
// intercepted: each is told which versions work.
func TestInterceptedRefusesUnknownVersions(t *testing.T) {
	b := startInterceptBackend(t, nil, "")
	tp := startProxy(t, nil, interceptedServer("v", config.ModeOffline, b.addr))
	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Write(mc.Handshake{ProtocolVersion: 99999, ServerAddress: "v.test", ServerPort: 25565, NextState: mc.StateLogin}.Encode())
	_, _ = c.Write(mc.LoginStart{Name: "Future"}.Encode(99999))
	f, err := mc.ReadFrame(bufio.NewReader(c), mc.MaxFrameSize)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := mc.ParseLoginDisconnect(f)
	if !strings.Contains(text, "supports Minecraft 1.7.2 to") {
		t.Fatalf("unknown protocol: %q", text)
	}
	c2, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if got, err := legacyLoginOn(c2, "v.test", "Old"); err != nil || !strings.Contains(got, "1.7.2 or newer") {
		t.Fatalf("legacy login on an intercepted server: %q, %v", got, err)
	}
	if len(b.seen()) != 0 {
		t.Fatal("a refused version reached the backend")
	}
}
