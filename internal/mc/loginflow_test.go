package mc

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/Tnze/go-mc/bot"
	"github.com/Tnze/go-mc/chat"
)

// A third-party client (go-mc's bot, protocol 764 = 1.20.2) logs in to a
// server built from this package's pieces: handshake, login start, a login
// plugin query, compression switched on mid-stream, login success, login
// acknowledged, then configuration keep-alive and a disconnect. It checks
// our ids, layouts and framing against an implementation we did not write.
func TestLoginFlowWithGoMCClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	serverErr := make(chan error, 1)
	go func() { serverErr <- serveOneLogin(ln) }()

	client := bot.NewClient()
	client.Auth.Name = "Gopher"
	client.LoginPlugin = map[string]func([]byte) ([]byte, error){
		"infrarust:test": func(data []byte) ([]byte, error) { return append([]byte("echo:"), data...), nil },
	}
	joinErr := client.JoinServer(ln.Addr().String())

	if err := <-serverErr; err != nil {
		t.Fatalf("server side: %v", err)
	}
	var kicked bot.DisconnectErr
	if !errors.As(joinErr, &kicked) {
		t.Fatalf("go-mc should end in a configuration disconnect, got %v", joinErr)
	}
	if got := chat.Message(kicked).ClearString(); got != "configured, bye" {
		t.Fatalf("go-mc read the reason as %q", got)
	}
	if client.Name != "Gopher" || FormatUUID(client.UUID) != "069a79f4-44e9-4726-a5be-fca90e38aaf5" {
		t.Fatalf("go-mc read login success as %s %s", client.Name, FormatUUID(client.UUID))
	}
}

func serveOneLogin(ln net.Listener) error {
	nc, err := ln.Accept()
	if err != nil {
		return err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(nc)
	hs, _, err := ReadHandshake(br)
	if err != nil {
		return err
	}
	p := Protocol(hs.ProtocolVersion)
	if p != V1_20_2 || hs.NextState != StateLogin {
		return fmt.Errorf("handshake %+v", hs)
	}
	ls, _, err := ReadLoginStart(br, hs.ProtocolVersion)
	if err != nil || ls.Name != "Gopher" {
		return fmt.Errorf("login start %+v: %v", ls, err)
	}
	reg, _ := RegistryFor(p)
	id := func(s State, t PacketType) int32 {
		v, _ := reg.ID(s, Clientbound, t)
		return v
	}
	c := NewConn(br, nc, mustZlib())

	if err := c.WritePacket(id(LoginState, PacketLoginPluginRequest),
		LoginPluginRequest{MessageID: 42, Channel: "infrarust:test", Data: []byte("ping")}.AppendPayload(nil)); err != nil {
		return err
	}
	f, err := c.ReadFrame()
	if err != nil {
		return err
	}
	if t, _ := reg.Type(LoginState, Serverbound, f.ID); t != PacketLoginPluginResponse {
		return fmt.Errorf("expected a login plugin response, got id 0x%02X", f.ID)
	}
	resp, err := DecodeLoginPluginResponse(f.Payload)
	if err != nil || resp.MessageID != 42 || !resp.Successful || string(resp.Data) != "echo:ping" {
		return fmt.Errorf("plugin response %+v: %v", resp, err)
	}

	if err := c.WritePacket(id(LoginState, PacketSetCompression), SetCompression{Threshold: 64}.AppendPayload(nil)); err != nil {
		return err
	}
	if err := c.SetCompression(64); err != nil {
		return err
	}
	success := LoginSuccess{UUID: testUUID, Name: ls.Name, Properties: testProps}
	if err := c.WritePacket(id(LoginState, PacketLoginSuccess), success.AppendPayload(nil, p)); err != nil {
		return err
	}
	if f, err = c.ReadFrame(); err != nil {
		return err
	}
	if t, _ := reg.Type(LoginState, Serverbound, f.ID); t != PacketLoginAcknowledged || DecodeEmpty(f.Payload) != nil {
		return fmt.Errorf("expected login acknowledged, got id 0x%02X (%d bytes)", f.ID, len(f.Payload))
	}

	// Configuration: a keep-alive the client must echo, a plugin message
	// large enough to be compressed, then the kick.
	if err := c.WritePacket(id(ConfigState, PacketKeepAlive), KeepAlive{ID: 987654321}.AppendPayload(nil, p)); err != nil {
		return err
	}
	if f, err = c.ReadFrame(); err != nil {
		return err
	}
	if t, _ := reg.Type(ConfigState, Serverbound, f.ID); t != PacketKeepAlive {
		return fmt.Errorf("expected a keep-alive echo, got id 0x%02X", f.ID)
	}
	if ka, err := DecodeKeepAlive(f.Payload, p); err != nil || ka.ID != 987654321 {
		return fmt.Errorf("keep-alive echo %+v: %v", ka, err)
	}
	brand, _ := PluginMessage{Channel: "minecraft:brand", Data: make([]byte, 500)}.AppendPayload(nil, p)
	if err := c.WritePacket(id(ConfigState, PacketPluginMessage), brand); err != nil {
		return err
	}
	kick, err := DisconnectText("configured, bye").AppendPayload(nil, p, ConfigState)
	if err != nil {
		return err
	}
	return c.WritePacket(id(ConfigState, PacketDisconnect), kick)
}

func mustZlib() *Zlib {
	z, err := NewZlib(1)
	if err != nil {
		panic(err)
	}
	return z
}
