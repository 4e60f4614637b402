package session

import (
	"errors"
	"fmt"

	"github.com/infrarust-go/infrarust/internal/forwarding"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// BackendLogin is everything the proxy tells a backend to log a player in: the
// handshake it sends (host already rewritten by domain_rewrite, and carrying the
// BungeeCord fields when that forwarding is on), and who the player is.
type BackendLogin struct {
	Registry  *mc.Registry
	Handshake mc.Handshake
	Player    forwarding.Player
	// Velocity answers velocity:player_info; nil when the server does not use
	// velocity forwarding (the request is then refused like an unknown channel).
	Velocity *forwarding.Velocity
	// AckLater leaves a 1.20.2+ Login Acknowledged in conn's write batch
	// (mc.Conn.QueuePacket) instead of writing it: it goes out with the caller's
	// next write, the client's first configuration packets, one system call
	// fewer. The backend waits for it, so the caller writes or Flushes promptly.
	AckLater bool
}

// Outcome is how a backend answered a login that it did not fail.
type Outcome struct {
	// Kick is the text of a Disconnect the backend answered the login with
	// (whitelist, ban, full): the player is told; it says nothing about health.
	Kick string
}

// ErrOnlineModeBackend means the backend asked for encryption: it runs
// online-mode=true and cannot take players the proxy authenticated.
var ErrOnlineModeBackend = errors.New("the backend runs online-mode=true; set online-mode=false in its server.properties (the proxy authenticates players) and configure forwarding")

// ErrVelocityNotAsked means the server forwards with velocity but the backend
// let the player in without asking for the forwarded identity: its forwarding is
// not set up, and it would take the player as the proxy's address with an
// offline UUID. Velocity refuses such a backend the same way.
var ErrVelocityNotAsked = errors.New("the backend did not ask for velocity forwarding: enable it with this proxy's secret (Paper: proxies.velocity in config/paper-global.yml; Fabric/Forge: a velocity forwarding mod) or change the server's forwarding_mode")

// Run logs the player in to a backend on conn: handshake and Login Start out,
// then the backend's login packets until Login Success (acknowledged for
// 1.20.2+, after which the backend is in its configuration state) or a
// Disconnect. Compression follows the backend's Set Compression; Velocity's
// player-info query is answered with the signed identity; any other plugin query
// is declined as vanilla declines it. The caller sets the deadline on the
// underlying connection.
func (b BackendLogin) Run(conn *mc.Conn) (Outcome, error) {
	reg := b.Registry
	p := reg.Protocol()
	hsID, _ := reg.ID(mc.HandshakeState, mc.Serverbound, mc.PacketHandshake)
	start := mc.LoginStart{Name: b.Player.Profile.Name, UUID: b.Player.Profile.ID, HasUUID: true}
	lsID, _ := reg.ID(mc.LoginState, mc.Serverbound, mc.PacketLoginStart)
	// One write for both (a server reads a stream; TCP may join them anyway): a
	// system call fewer on every login and every switch. Both payloads are built
	// in one buffer, which holds a usual handshake and login start whole.
	var scratch [128]byte
	hs := b.Handshake.AppendPayload(scratch[:0])
	ls := start.AppendPayload(hs[len(hs):len(hs)], p)
	if err := conn.WritePackets(mc.OutPacket{ID: hsID, Payload: hs}, mc.OutPacket{ID: lsID, Payload: ls}); err != nil {
		return Outcome{}, err
	}
	forwarded := false
	for {
		f, err := conn.ReadFrame()
		if err != nil {
			return Outcome{}, fmt.Errorf("backend login: %w", err)
		}
		t, ok := reg.Type(mc.LoginState, mc.Clientbound, f.ID)
		if !ok {
			return Outcome{}, fmt.Errorf("backend login: unexpected packet 0x%02x", f.ID)
		}
		switch t {
		case mc.PacketSetCompression:
			sc, err := mc.DecodeSetCompression(f.Payload)
			if err != nil {
				return Outcome{}, err
			}
			if err := conn.SetCompression(int(sc.Threshold)); err != nil {
				return Outcome{}, err
			}
		case mc.PacketLoginPluginRequest:
			answered, err := b.answerQuery(conn, f.Payload)
			if err != nil {
				return Outcome{}, err
			}
			forwarded = forwarded || answered
		case mc.PacketDisconnect:
			d, err := mc.DecodeDisconnect(f.Payload, p, mc.LoginState)
			if err != nil {
				return Outcome{}, err
			}
			return Outcome{Kick: d.Text()}, nil
		case mc.PacketEncryptionRequest:
			return Outcome{}, ErrOnlineModeBackend
		case mc.PacketLoginSuccess:
			if b.Velocity != nil && !forwarded {
				return Outcome{}, ErrVelocityNotAsked
			}
			// What it names is not read: the client has had the proxy's own
			// Login Success, and the player is who the proxy forwarded.
			if p.AtLeast(mc.V1_20_2) {
				ackID, _ := reg.ID(mc.LoginState, mc.Serverbound, mc.PacketLoginAcknowledged)
				write := conn.WritePacket
				if b.AckLater {
					write = conn.QueuePacket
				}
				if err := write(ackID, nil); err != nil {
					return Outcome{}, err
				}
				// Its configuration phase: what every player of the server receives.
				conn.ShareHeads(true)
			}
			return Outcome{}, nil
		default:
			return Outcome{}, fmt.Errorf("backend login: unexpected %s packet", t)
		}
	}
}

// answerQuery answers a Login Plugin Request: Velocity's player-info query with
// the signed identity when velocity forwarding is on (and says it forwarded),
// every other one (or that one without velocity forwarding) with "not
// understood".
func (b BackendLogin) answerQuery(conn *mc.Conn, payload []byte) (forwarded bool, err error) {
	q, err := mc.DecodeLoginPluginRequest(payload)
	if err != nil {
		return false, err
	}
	resp := mc.LoginPluginResponse{MessageID: q.MessageID}
	if q.Channel == forwarding.VelocityChannel && b.Velocity != nil {
		data, _, err := b.Velocity.Response(q.Data, int32(b.Registry.Protocol()), b.Player)
		if err != nil {
			return false, err
		}
		resp.Successful, resp.Data = true, data
	}
	id, _ := b.Registry.ID(mc.LoginState, mc.Serverbound, mc.PacketLoginPluginResponse)
	return resp.Successful, conn.WritePacket(id, resp.AppendPayload(nil))
}
