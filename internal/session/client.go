// Package session is the intercepted side of the proxy: it finishes a player's
// login on the proxy (Mojang authentication for client_only, none for offline),
// logs in to a backend with the player's identity forwarded, and relays frames
// between the two. It speaks the protocol through internal/mc and holds no
// policy: which backend, which kick text and when to give up are the caller's.
package session

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// Client is the player's side of an intercepted session once its login start has
// been read: the framed connection and what the protocol version implies.
type Client struct {
	Conn     *mc.Conn
	Registry *mc.Registry
	Protocol mc.Protocol
	// Start is the player's Login Start (the name it claims, a 1.19–1.19.2 chat key).
	Start mc.LoginStart
	// Addr is the player's real IP (after PROXY protocol), for hasJoined's ip.
	Addr netip.Addr
	// State is where the client's protocol state machine is: login until
	// FinishLogin, then configuration (1.20.2+) or play.
	State mc.State
	// ackDue: FinishLogin wrote Login Success to a 1.20.2+ client and its Login
	// Acknowledged is still to be read (Acknowledged).
	ackDue bool
}

// ErrProtocol marks a client that broke the login exchange (a wrong packet, a
// token that does not match): it is told "Failed to verify username!" and closed.
var ErrProtocol = errors.New("session: client broke the login exchange")

// Authenticator is what client_only needs: the proxy's key pair (one per start)
// and the session server.
type Authenticator struct {
	Keys     *auth.KeyPair
	Sessions *auth.SessionClient
	// SendIP adds the client's IP to hasJoined (prevent_proxy_connections).
	SendIP bool
}

// OfflineProfile is the identity an offline-mode server gives a player: the name
// it claims and the UUID vanilla derives from it.
func OfflineProfile(name string) auth.Profile {
	return auth.Profile{ID: auth.OfflineUUID(name), Name: name}
}

// Authenticate runs the encryption exchange with the client and asks the session
// server whether this player joined with the shared secret: the profile it
// returns (UUID, name, skin properties) is the player's identity from now on.
// Encryption is on for the client from the moment the response is read. The
// caller bounds the client's reads with a deadline; ctx bounds hasJoined.
func (a *Authenticator) Authenticate(ctx context.Context, c *Client) (auth.Profile, error) {
	ch, err := auth.NewChallenge()
	if err != nil {
		return auth.Profile{}, err
	}
	req := mc.EncryptionRequest{ServerID: ch.ServerID, PublicKey: a.Keys.PublicKeyDER(), VerifyToken: ch.VerifyToken, ShouldAuthenticate: true}
	if err := c.write(mc.PacketEncryptionRequest, req.AppendPayload(nil, c.Protocol)); err != nil {
		return auth.Profile{}, err
	}
	f, err := c.Conn.ReadFrame()
	if err != nil {
		return auth.Profile{}, fmt.Errorf("reading the encryption response: %w", err)
	}
	if t, ok := c.Registry.Type(mc.LoginState, mc.Serverbound, f.ID); !ok || t != mc.PacketEncryptionResponse {
		return auth.Profile{}, fmt.Errorf("%w: packet 0x%02x where the encryption response belongs", ErrProtocol, f.ID)
	}
	resp, err := mc.DecodeEncryptionResponse(f.Payload, c.Protocol)
	if err != nil {
		return auth.Profile{}, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	// The verify token's answer (encrypted, or signed by a 1.19–1.19.2 chat
	// key) is not checked: the login's own serverId binds hasJoined to this
	// connection (auth.Challenge), and it saves an RSA decryption per login.
	secret, err := a.Keys.DecryptSharedSecret(resp.SharedSecret)
	if err != nil {
		return auth.Profile{}, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	if err := c.Conn.EnableEncryption(secret); err != nil {
		return auth.Profile{}, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	var ip netip.Addr
	if a.SendIP {
		ip = c.Addr
	}
	hash := auth.ServerIDHash(ch.ServerID, secret, a.Keys.PublicKeyDER())
	return a.Sessions.HasJoined(ctx, c.Start.Name, hash, ip)
}

// FinishLogin ends the client's login state as the given identity: compression
// from threshold on (-1: off), then Login Success. A 1.20.2+ client is in the
// configuration state from then on (its next packets are read in it, and a kick
// is written in it) and answers with Login Acknowledged, which Acknowledged
// reads: the proxy logs in to the backend meanwhile, so both answers are waited
// for once.
func (c *Client) FinishLogin(p auth.Profile, threshold int) error {
	// Both payloads are built in one buffer (one allocation, not one per field:
	// what is written escapes to the compressor).
	scratch := make([]byte, 0, 128)
	if threshold >= 0 && c.Protocol.AtLeast(mc.V1_8) {
		id, ok := c.Registry.ID(mc.LoginState, mc.Clientbound, mc.PacketSetCompression)
		if !ok {
			return fmt.Errorf("protocol %d has no %s packet", c.Protocol, mc.PacketSetCompression)
		}
		// Queued: it leaves with Login Success, in one write.
		sc := mc.SetCompression{Threshold: int32(threshold)}.AppendPayload(scratch)
		scratch = sc[len(sc):]
		if err := c.Conn.QueuePacket(id, sc); err != nil {
			return err
		}
		if err := c.Conn.SetCompression(threshold); err != nil {
			return err
		}
	}
	ok := mc.LoginSuccess{UUID: p.ID, Name: p.Name, Properties: mcProperties(p.Properties)}
	if err := c.write(mc.PacketLoginSuccess, ok.AppendPayload(scratch, c.Protocol)); err != nil {
		return err
	}
	if !c.Protocol.AtLeast(mc.V1_20_2) {
		c.State = mc.PlayState
		return nil
	}
	c.State, c.ackDue = mc.ConfigState, true
	return nil
}

// Acknowledged reads the Login Acknowledged FinishLogin left due, if any; it
// must come before anything else is read from the client.
func (c *Client) Acknowledged() error {
	if !c.ackDue {
		return nil
	}
	f, err := c.Conn.ReadFrame()
	if err != nil {
		return fmt.Errorf("waiting for login acknowledged: %w", err)
	}
	if t, ok := c.Registry.Type(mc.LoginState, mc.Serverbound, f.ID); !ok || t != mc.PacketLoginAcknowledged {
		return fmt.Errorf("%w: packet 0x%02x where login acknowledged belongs", ErrProtocol, f.ID)
	}
	c.ackDue = false
	return nil
}

// Kick tells the player why the session ends, in the packet their client's
// current state reads, and returns the write error.
func (c *Client) Kick(text string) error {
	return kick(c.Conn, c.Registry, c.State, text)
}

func kick(conn *mc.Conn, reg *mc.Registry, state mc.State, text string) error {
	id, ok := reg.ID(state, mc.Clientbound, mc.PacketDisconnect)
	if !ok {
		return fmt.Errorf("no disconnect packet in state %s", state)
	}
	payload, err := mc.DisconnectText(text).AppendPayload(nil, reg.Protocol(), state)
	if err != nil {
		return err
	}
	return conn.WritePacket(id, payload)
}

func (c *Client) write(t mc.PacketType, payload []byte) error {
	id, ok := c.Registry.ID(mc.LoginState, mc.Clientbound, t)
	if !ok {
		return fmt.Errorf("protocol %d has no %s packet", c.Protocol, t)
	}
	return c.Conn.WritePacket(id, payload)
}

func mcProperties(ps []auth.Property) []mc.Property {
	if len(ps) == 0 {
		return nil
	}
	out := make([]mc.Property, len(ps))
	for i, p := range ps {
		out[i] = mc.Property{Name: p.Name, Value: p.Value, Signature: p.Signature}
	}
	return out
}
