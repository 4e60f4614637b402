package config

import (
	"strings"
	"testing"
)

// Every problem of [commands], [permissions], [messages] and [events] is
// reported at its own key, once: a name that is not a command name, an alias that
// takes another command's name, an empty admin, a JSON message that is not JSON.
func TestCommandsTablesAreChecked(t *testing.T) {
	t.Setenv(APIKeyEnv, "")
	path := writeTree(t, `[commands.server]
name = "hub"
aliases = ["lobby", "glist", "lobby"]

[commands.kick]
name = "bad name"

[permissions]
admins = [""]
player_commands = ["server", "x y"]

[messages]
broadcast = '{"text": "broken'
find_found = "{player} is on {server}"

[events]
transport_filter_timeout = "0s"
`, map[string]string{"a.toml": "domains = [\"a\"]\n"})
	_, err := Load(path, true)
	if err == nil {
		t.Fatal("loaded")
	}
	want := []string{
		`infrarust.toml:3: commands.server.aliases[1]: /glist is already the glist command's name`,
		`infrarust.toml:3: commands.server.aliases[2]: /lobby is listed twice for the server command`,
		`infrarust.toml:6: commands.kick.name: "bad name" is not a command name`,
		`infrarust.toml:9: permissions.admins[0]: is empty`,
		`infrarust.toml:10: permissions.player_commands[1]: "x y" is not a command name`,
		`infrarust.toml:13: messages.broadcast: starts like a JSON text component but is not JSON`,
		`infrarust.toml:17: events.transport_filter_timeout: must be more than 0`,
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error lacks %q:\n%s", w, msg)
		}
	}
	if n := strings.Count(msg, "\n") + 1; n != len(want) {
		t.Errorf("%d errors reported, want %d (a placeholder at the start of a legacy message is no JSON):\n%s", n, len(want), msg)
	}
}

func TestDefaultCommandsAreVelocitys(t *testing.T) {
	c := Default()
	var labels []string
	for _, n := range BuiltinCommands {
		o, _ := c.Commands.Builtin(n)
		if o.Enabled == (n == "hub") { // /hub is off: a backend's own /hub is not shadowed
			t.Errorf("%s: enabled %v by default", n, o.Enabled)
		}
		labels = append(labels, o.Label(n))
	}
	if got := strings.Join(labels, " "); got != "server glist find send kick broadcast infrarust hub" {
		t.Errorf("labels %q", got)
	}
	if !c.Permissions.IsPlayerCommand("SERVER") || c.Permissions.IsPlayerCommand("send") {
		t.Error("players get server, glist and find; send is for admins")
	}
	if IsJSONMessage("{player} left") || !IsJSONMessage(`{"text":"x"}`) || !IsJSONMessage(`[{"text":"x"}]`) || IsJSONMessage("[Broadcast] hi") {
		t.Error("IsJSONMessage misreads a legacy message with a placeholder or brackets")
	}
}
