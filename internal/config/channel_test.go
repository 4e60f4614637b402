package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestChannelPermissionsLoad(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		enabled bool
		change  func(*ChannelPermissions) // applied to the defaults
		wantErr string
	}{
		{name: "defaults", src: "", enabled: true},
		{name: "channel off", src: "[forwarding]\nbungeecord_channel = false\n"},
		{
			name: "one write allowed, one read refused", enabled: true,
			src:    "[forwarding]\nmode = \"velocity\"\n[forwarding.channel_permissions]\nconnect_other = true\nip_other = false\n",
			change: func(p *ChannelPermissions) { p.ConnectOther, p.IPOther = true, false },
		},
		{
			name: "inline table", enabled: true,
			src:    "[forwarding]\nchannel_permissions = { kick_player = true }\n",
			change: func(p *ChannelPermissions) { p.KickPlayer = true },
		},
		{name: "unknown operation", src: "[forwarding.channel_permissions]\nteleport = true\n", wantErr: "forwarding.channel_permissions.teleport"},
		{name: "not a bool", src: "[forwarding.channel_permissions]\nconnect = \"yes\"\n", wantErr: "f.toml:2: forwarding.channel_permissions.connect: expected"},
		{name: "channel not a bool", src: "[forwarding]\nbungeecord_channel = 1\n", wantErr: "forwarding.bungeecord_channel"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(APIKeyEnv, "")
			cfg, err := Parse([]byte(c.src), "f.toml")
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := DefaultChannelPermissions()
			if c.change != nil {
				c.change(&want)
			}
			if cfg.Forwarding.BungeeCordChannel != c.enabled {
				t.Errorf("bungeecord_channel = %v, want %v", cfg.Forwarding.BungeeCordChannel, c.enabled)
			}
			if cfg.Forwarding.ChannelPermissions != want {
				t.Errorf("channel_permissions = %+v, want %+v", cfg.Forwarding.ChannelPermissions, want)
			}
		})
	}
}

// The defaults are the Rust Infrarust's: exactly the five operations that act on
// other players are off.
func TestDefaultChannelPermissionsOffAreTheWriteOperations(t *testing.T) {
	v := reflect.ValueOf(DefaultChannelPermissions())
	var off []string
	for i := range v.NumField() {
		if !v.Field(i).Bool() {
			off = append(off, v.Type().Field(i).Tag.Get("toml"))
		}
	}
	want := []string{"connect_other", "message", "message_raw", "kick_player", "kick_player_raw"}
	if !reflect.DeepEqual(off, want) {
		t.Fatalf("off by default: %v, want %v", off, want)
	}
	if v.NumField() != 18 {
		t.Fatalf("%d permissions, want the 18 BungeeCord operations", v.NumField())
	}
}
