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
		{name: "defaults: off", src: ""},
		{name: "on", src: "[plugin_messaging]\nbungeecord = true\n", enabled: true},
		{
			name: "one write allowed, one read refused", enabled: true,
			src:    "[plugin_messaging]\nbungeecord = true\n[plugin_messaging.bungeecord_permissions]\nconnect_other = true\nip_other = false\n",
			change: func(p *ChannelPermissions) { p.ConnectOther, p.IPOther = true, false },
		},
		{
			name:   "inline table",
			src:    "[plugin_messaging]\nbungeecord_permissions = { kick_player = true }\n",
			change: func(p *ChannelPermissions) { p.KickPlayer = true },
		},
		{
			name:   "subchannel names",
			src:    "[plugin_messaging.bungeecord_permissions]\nKickPlayer = true\nServerIP = false\n",
			change: func(p *ChannelPermissions) { p.KickPlayer, p.ServerIP = true, false },
		},
		{name: "unknown operation", src: "[plugin_messaging.bungeecord_permissions]\nteleport = true\n", wantErr: "plugin_messaging.bungeecord_permissions.teleport"},
		{name: "not a bool", src: "[plugin_messaging.bungeecord_permissions]\nconnect = \"yes\"\n", wantErr: "f.toml:2: plugin_messaging.bungeecord_permissions.connect: expected"},
		{name: "switch not a bool", src: "[plugin_messaging]\nbungeecord = 1\n", wantErr: "plugin_messaging.bungeecord"},
		{name: "old switch", src: "[forwarding]\nbungeecord_channel = true\n", wantErr: "forwarding.bungeecord_channel\"; it moved: set [plugin_messaging] bungeecord = true"},
		{name: "old permissions", src: "[forwarding.channel_permissions]\nconnect = true\n", wantErr: "it moved to [plugin_messaging.bungeecord_permissions]"},
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
			if cfg.PluginMessaging.BungeeCord != c.enabled {
				t.Errorf("bungeecord = %v, want %v", cfg.PluginMessaging.BungeeCord, c.enabled)
			}
			if cfg.PluginMessaging.BungeeCordPermissions != want {
				t.Errorf("bungeecord_permissions = %+v, want %+v", cfg.PluginMessaging.BungeeCordPermissions, want)
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

// bungeecord_channel is read where the proxy reads a server's packets.
func TestBungeeCordChannelNeedsInterceptedServer(t *testing.T) {
	global := Default()
	_, err := ParseServer([]byte("domains = [\"pt.test\"]\naddresses = [\"127.0.0.1:25565\"]\nbungeecord_channel = true\n"), "pt.toml", global)
	if err == nil || !strings.Contains(err.Error(), "pt.toml:3: bungeecord_channel") || !strings.Contains(err.Error(), "intercepted") {
		t.Fatalf("passthrough with bungeecord_channel: %v", err)
	}
	s, err := ParseServer([]byte("domains = [\"o.test\"]\naddresses = [\"127.0.0.1:25565\"]\nproxy_mode = \"offline\"\nbungeecord_channel = true\n"), "o.toml", global)
	if err != nil || !s.BungeeCordChannel {
		t.Fatalf("offline with bungeecord_channel: %+v, %v", s, err)
	}
}
