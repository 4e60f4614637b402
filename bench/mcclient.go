package bench

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/auth/authtest"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// clientProtocol is the version the bench client speaks: 1.21 (767), with the
// configuration state after Login Success, like today's clients.
const clientProtocol = mc.Protocol(protocol)

// identity is who a bench client logs in as: a name, and for client_only the
// account it joins the stand-in session server with.
type identity struct {
	name    string
	acct    *authtest.Account
	joinURL string       // the stand-in's join endpoint
	hc      *http.Client // shared keep-alive client for the joins
}

// mcClient is a logged-in Minecraft client: login goes through mc.Conn; the
// workloads then write pre-built batches and count frames directly, with
// encryption (when the proxy asked for it) below the framing.
type mcClient struct {
	nc        *net.TCPConn
	cr        *cryptReader
	cw        *cryptWriter
	br        *bufio.Reader
	conn      *mc.Conn
	threshold int
}

// loginMC runs a vanilla-like login to addr with host in the handshake:
// handshake and Login Start, then whatever the server asks — Encryption
// Request (RSA, the join call on the session server, AES/CFB8 from then on),
// Set Compression — until Login Success, which it acknowledges; then
// configuration, the backend's Join Game and its "ready", so a completed login
// proves the backend took the player and the proxy relays play packets.
func loginMC(addr, host string, id identity) (*mcClient, error) {
	nc, err := dial(addr)
	if err != nil {
		return nil, err
	}
	c := &mcClient{nc: nc, cr: &cryptReader{r: nc}, cw: &cryptWriter{w: nc}, threshold: -1}
	c.br = bufio.NewReaderSize(c.cr, 4096)
	c.conn = mc.NewConn(c.br, c.cw, clientZlib)
	if err := c.login(host, id); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

func (c *mcClient) login(host string, id identity) error {
	_ = c.nc.SetDeadline(time.Now().Add(ioTimeout))
	reg, _ := mc.RegistryFor(clientProtocol)
	hs := mc.Handshake{ProtocolVersion: protocol, ServerAddress: host, ServerPort: 25565, NextState: mc.StateLogin}
	if err := c.conn.WritePacket(0, hs.AppendPayload(nil)); err != nil {
		return err
	}
	start := mc.LoginStart{Name: id.name, HasUUID: true}
	if id.acct != nil {
		start.UUID = id.acct.ID
	}
	lsID, _ := reg.ID(mc.LoginState, mc.Serverbound, mc.PacketLoginStart)
	if err := c.conn.WritePacket(lsID, start.AppendPayload(nil, clientProtocol)); err != nil {
		return err
	}
	for {
		f, err := c.conn.ReadFrame()
		if err != nil {
			return fmt.Errorf("login: %w", err)
		}
		t, _ := reg.Type(mc.LoginState, mc.Clientbound, f.ID)
		switch t {
		case mc.PacketEncryptionRequest:
			if err := c.encrypt(reg, f.Payload, id); err != nil {
				return err
			}
		case mc.PacketSetCompression:
			sc, err := mc.DecodeSetCompression(f.Payload)
			if err != nil {
				return err
			}
			c.threshold = int(sc.Threshold)
			if err := c.conn.SetCompression(c.threshold); err != nil {
				return err
			}
		case mc.PacketLoginSuccess:
			ack, _ := reg.ID(mc.LoginState, mc.Serverbound, mc.PacketLoginAcknowledged)
			if err := c.conn.WritePacket(ack, nil); err != nil {
				return err
			}
			// Configuration then play, as a vanilla client: acknowledge the
			// backend's Finish Configuration, then wait for its Join Game.
			finish, _ := reg.ID(mc.ConfigState, mc.Clientbound, mc.PacketFinishConfiguration)
			finished, _ := reg.ID(mc.ConfigState, mc.Serverbound, mc.PacketFinishConfiguration)
			join, _ := reg.ID(mc.PlayState, mc.Clientbound, mc.PacketJoinGame)
			if err := c.awaitPacket(mc.ConfigState, finish); err != nil {
				return fmt.Errorf("configuration: %w", err)
			}
			if err := c.conn.WritePacket(finished, nil); err != nil {
				return err
			}
			if err := c.awaitPacket(mc.PlayState, join); err != nil {
				return fmt.Errorf("join: %w", err)
			}
			if err := c.awaitPacket(mc.PlayState, idCount); err != nil {
				return fmt.Errorf("ready: %w", err)
			}
			_ = c.nc.SetDeadline(time.Time{})
			return nil
		case mc.PacketDisconnect:
			d, err := mc.DecodeDisconnect(f.Payload, clientProtocol, mc.LoginState)
			if err != nil {
				return err
			}
			return fmt.Errorf("kicked during login: %s", d.Text())
		default:
			return fmt.Errorf("login: unexpected packet 0x%02x", f.ID)
		}
	}
}

// awaitPacket reads frames of state until one with id (see readUntil); a
// Disconnect is an error with its reason.
func (c *mcClient) awaitPacket(state mc.State, id int32) error {
	_, err := readUntil(c.conn, id, func(f mc.Frame) error { return kicked(f, state) })
	return err
}

// kicked is the error of a frame of state that is a Disconnect (its reason),
// or nil.
func kicked(f mc.Frame, state mc.State) error {
	reg, _ := mc.RegistryFor(clientProtocol)
	if kick, _ := reg.ID(state, mc.Clientbound, mc.PacketDisconnect); f.ID != kick {
		return nil
	}
	if d, err := mc.DecodeDisconnect(f.Payload, clientProtocol, state); err == nil {
		return fmt.Errorf("kicked: %s", d.Text())
	}
	return fmt.Errorf("kicked")
}

// encrypt answers an Encryption Request as a vanilla client does: a fresh
// shared secret, the join call on the session server, the secret and token
// RSA-encrypted with the server's key, and AES/CFB8 on from the next byte.
func (c *mcClient) encrypt(reg *mc.Registry, payload []byte, id identity) error {
	if id.acct == nil {
		return fmt.Errorf("the server asked for encryption; this client has no account")
	}
	req, err := mc.DecodeEncryptionRequest(payload, clientProtocol)
	if err != nil {
		return err
	}
	pub, err := x509.ParsePKIXPublicKey(req.PublicKey)
	if err != nil {
		return fmt.Errorf("server key: %w", err)
	}
	key, ok := pub.(*rsa.PublicKey)
	if !ok {
		return fmt.Errorf("server key is %T, not RSA", pub)
	}
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	if err := id.join(auth.ServerIDHash(req.ServerID, secret, req.PublicKey)); err != nil {
		return err
	}
	encSecret, err := rsa.EncryptPKCS1v15(rand.Reader, key, secret)
	if err != nil {
		return err
	}
	encToken, err := rsa.EncryptPKCS1v15(rand.Reader, key, req.VerifyToken)
	if err != nil {
		return err
	}
	respID, _ := reg.ID(mc.LoginState, mc.Serverbound, mc.PacketEncryptionResponse)
	resp := mc.EncryptionResponse{SharedSecret: encSecret, VerifyToken: encToken}
	if err := c.conn.WritePacket(respID, resp.AppendPayload(nil, clientProtocol)); err != nil {
		return err
	}
	// The server sends nothing between its request and our response, so no
	// byte read so far needs decrypting.
	if c.br.Buffered() != 0 {
		return fmt.Errorf("%d bytes arrived before encryption started", c.br.Buffered())
	}
	if c.cr.dec, err = mc.NewCFB8(secret, true); err != nil {
		return err
	}
	c.cw.enc, err = mc.NewCFB8(secret, false)
	return err
}

// join is the client's POST to the session server's join endpoint.
func (id identity) join(serverHash string) error {
	body, _ := json.Marshal(map[string]string{
		"accessToken":     id.acct.AccessToken,
		"selectedProfile": id.acct.ID.Undashed(),
		"serverId":        serverHash,
	})
	resp, err := id.hc.Post(id.joinURL, "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("join: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("join refused: HTTP %d", resp.StatusCode)
	}
	return nil
}

// command tells the backend what the session does next (see cmdSink etc.)
// and waits for its go-ahead, sending it again every 250 ms without one: a
// full proxy may drop what a player sends while it still takes them to the
// server (Gate, right after the join); the backend ignores the copies.
func (c *mcClient) command(cmd byte) error {
	for attempt := 1; ; attempt++ {
		if err := c.conn.WritePacket(idCommand, []byte{cmd}); err != nil {
			return err
		}
		_ = c.nc.SetReadDeadline(time.Now().Add(250 * time.Millisecond))
		err := c.awaitPacket(mc.PlayState, idCount)
		if err == nil {
			return c.nc.SetReadDeadline(time.Time{})
		}
		if ne, ok := errors.AsType[net.Error](err); !ok || !ne.Timeout() || attempt == 40 {
			return fmt.Errorf("command: %w", err)
		}
	}
}

// sendFor writes the client's batch until d has passed, then the end marker,
// and returns the packet bytes the backend confirms it received.
func (c *mcClient) sendFor(d time.Duration, rate float64) (int64, error) {
	if err := c.command(cmdSink); err != nil {
		return 0, err
	}
	b := batchFor(c.threshold)
	burst := b.burst()
	p := pacer{start: time.Now(), rate: rate, per: b.packetBytes}
	end := p.start.Add(d)
	_ = c.nc.SetDeadline(end.Add(ioTimeout))
	for time.Now().Before(end) {
		k := p.next()
		if _, err := c.cw.Write(burst[:k*len(b.wire)]); err != nil {
			return 0, err
		}
		p.wrote(k)
	}
	sent := p.sent
	if err := c.conn.WritePacket(idEnd, nil); err != nil {
		return 0, err
	}
	// The socket buffers can still hold megabytes the backend has to decode
	// (slowly with -race and --verify): allow it far more than one I/O step.
	_ = c.nc.SetReadDeadline(time.Now().Add(6 * ioTimeout))
	f, err := c.conn.ReadFrame()
	if err != nil {
		return 0, fmt.Errorf("sink count: %w", err)
	}
	if f.ID != idCount {
		return 0, fmt.Errorf("sink count: packet 0x%02x", f.ID)
	}
	frames, n, bad, err := parseCount(f.Payload)
	if err != nil {
		return 0, err
	}
	if want := sent * int64(b.frames); frames != want || n != sent*b.packetBytes || bad != 0 {
		return 0, fmt.Errorf("backend received %d frames / %d packet bytes (%d wrong), sent %d / %d", frames, n, bad, want, sent*b.packetBytes)
	}
	return n, nil
}

// receiveFor counts the packet bytes the backend streams for d; verify decodes
// and checks every packet instead of skipping it.
func (c *mcClient) receiveFor(d time.Duration, verify bool) (int64, error) {
	if err := c.command(cmdSource); err != nil {
		return 0, err
	}
	end := time.Now().Add(d)
	_ = c.nc.SetReadDeadline(end.Add(ioTimeout))
	var total int64
	if verify {
		for i := 0; time.Now().Before(end); i++ {
			f, err := c.conn.ReadFrame()
			if err != nil {
				return total, err
			}
			if !checkPacket(i, f.ID, f.Payload) {
				return total, fmt.Errorf("packet %d arrived altered (id 0x%02x, %d bytes)", i, f.ID, len(f.Payload))
			}
			total += int64(mc.VarIntSize(f.ID) + len(f.Payload))
		}
		return total, nil
	}
	big := bufio.NewReaderSize(c.br, 64<<10)
	for time.Now().Before(end) {
		n, _, err := skipFrame(big, c.threshold)
		if err != nil {
			return total, err
		}
		total += int64(n)
	}
	return total, nil
}

func (c *mcClient) Close() error { return c.nc.Close() }
