package handlers

import (
	"context"
	"testing"

	"github.com/infrarust-go/infrarust"
)

func TestBlocklistAndFallback(t *testing.T) {
	r := infrarust.NewRegistry()
	Register(r, Config{Blocked: []string{"Griefer"}, Fallback: "limbo"})
	ctx := context.Background()

	cases := []struct {
		name  string
		event infrarust.Event
		want  infrarust.Result
	}{
		{"blocked player", &infrarust.Login{Profile: infrarust.Profile{Name: "griefer"}},
			infrarust.Result{Action: infrarust.Deny, Reason: "§cYou are not allowed on this network", By: "blocklist"}},
		{"other player", &infrarust.Login{Profile: infrarust.Profile{Name: "alice"}}, infrarust.Result{}},
		{"server down", &infrarust.KickedFromServer{Server: "survival", Cause: infrarust.CauseUnreachable},
			infrarust.Result{Action: infrarust.Redirect, Server: "limbo", By: "fallback"}},
		{"fallback down", &infrarust.KickedFromServer{Server: "limbo", Cause: infrarust.CauseUnreachable}, infrarust.Result{}},
		{"kicked by the server", &infrarust.KickedFromServer{Server: "survival", Cause: infrarust.CauseKicked}, infrarust.Result{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got infrarust.Result
			switch e := c.event.(type) {
			case *infrarust.Login:
				got = infrarust.Fire(ctx, r, e)
			case *infrarust.KickedFromServer:
				got = infrarust.Fire(ctx, r, e)
			}
			if got != c.want {
				t.Errorf("result = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestDiscordCommand(t *testing.T) {
	r := infrarust.NewRegistry()
	Register(r, Config{Discord: "https://discord.gg/example"})
	p := &infrarust.FakePlayer{Username: "alice", On: "lobby"}
	if !infrarust.RunCommand(context.Background(), r, p, "discord") {
		t.Fatal("/discord was not taken")
	}
	if len(p.Told) != 1 || p.Told[0] != "§9Join us on Discord: §fhttps://discord.gg/example" {
		t.Fatalf("told %q", p.Told)
	}
	if infrarust.RunCommand(context.Background(), r, p, "spawn") {
		t.Fatal("a command that is not ours was taken")
	}
}

func TestChannelBlock(t *testing.T) {
	r := infrarust.NewRegistry()
	Register(r, Config{BlockedChannels: []string{"wdl:init"}})
	typ, ok := infrarust.PacketNamed("plugin_message")
	if !ok {
		t.Fatal("no plugin_message packet")
	}
	msg := func(channel string) *infrarust.Packet {
		payload := append([]byte{byte(len(channel))}, channel...)
		return &infrarust.Packet{Direction: infrarust.Serverbound, Type: typ, Payload: append(payload, 1, 2, 3)}
	}
	blocked, other := msg("wdl:init"), msg("minecraft:brand")
	infrarust.FilterPacket(r, blocked)
	infrarust.FilterPacket(r, other)
	if !blocked.Dropped || other.Dropped {
		t.Fatalf("dropped: wdl:init %v, minecraft:brand %v; want true, false", blocked.Dropped, other.Dropped)
	}
	if _, ok := channelOf([]byte{0x05, 'a'}); ok {
		t.Fatal("a truncated channel was read")
	}
}
