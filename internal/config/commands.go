package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// Commands is [commands]: the proxy's own in-game commands on intercepted
// servers (docs/commands.md). Each built-in can be renamed, given aliases or
// turned off; the names are Velocity's.
type Commands struct {
	// Enabled turns the whole layer off: every command then goes to the backend.
	Enabled   bool           `toml:"enabled"`
	Server    CommandOptions `toml:"server"`
	Glist     CommandOptions `toml:"glist"`
	Find      CommandOptions `toml:"find"`
	Send      CommandOptions `toml:"send"`
	Kick      CommandOptions `toml:"kick"`
	Broadcast CommandOptions `toml:"broadcast"`
	Infrarust CommandOptions `toml:"infrarust"`
	// Hub is /hub (alias /lobby): to the lobby of the player's network. Off by
	// default, so a backend's own /hub is not shadowed.
	Hub HubOptions `toml:"hub"`
}

// HubOptions is [commands.hub]: a built-in's entry and the lobbies.
type HubOptions struct {
	Enabled bool     `toml:"enabled"`
	Name    string   `toml:"name"`
	Aliases []string `toml:"aliases"`
	// Servers are the lobbies: the first of them on the player's network
	// (none: the first fallback_servers entry of the server he is on).
	Servers []string `toml:"servers"`
}

// CommandOptions is one built-in command's entry.
type CommandOptions struct {
	Enabled bool `toml:"enabled"`
	// Name replaces the label players type ("" keeps the built-in name).
	Name    string   `toml:"name"`
	Aliases []string `toml:"aliases"`
}

// BuiltinCommands are the built-in commands' canonical names, in [commands] order.
var BuiltinCommands = []string{"server", "glist", "find", "send", "kick", "broadcast", "infrarust", "hub"}

// Builtin returns the entry of a built-in by canonical name.
func (c Commands) Builtin(name string) (CommandOptions, bool) {
	v := reflect.ValueOf(c)
	for i := range v.NumField() {
		if tag := v.Type().Field(i).Tag.Get("toml"); tag == name {
			switch o := v.Field(i).Interface().(type) {
			case CommandOptions:
				return o, true
			case HubOptions:
				return CommandOptions{Enabled: o.Enabled, Name: o.Name, Aliases: o.Aliases}, true
			}
			return CommandOptions{}, false
		}
	}
	return CommandOptions{}, false
}

// Label is what players type for the built-in called canonical.
func (o CommandOptions) Label(canonical string) string {
	if o.Name != "" {
		return strings.ToLower(o.Name)
	}
	return canonical
}

func defaultCommands() Commands {
	on := CommandOptions{Enabled: true}
	return Commands{
		Enabled: true, Server: on, Glist: on, Find: on, Send: on, Kick: on, Broadcast: on,
		Infrarust: CommandOptions{Enabled: true, Aliases: []string{"ir"}},
		Hub:       HubOptions{Aliases: []string{"lobby"}},
	}
}

// Permissions is [permissions]: who may use which proxy command.
type Permissions struct {
	// Admins may use every command: UUIDs (dashed or not) or names. An admin is
	// recognised only on a client_only (Mojang-authenticated) login, unless
	// TrustOfflineAdmins.
	Admins []string `toml:"admins"`
	// PlayerCommands are the built-ins (canonical names) and plugin commands
	// everyone may use; the rest are for admins.
	PlayerCommands []string `toml:"player_commands"`
	// TrustOfflineAdmins recognises admins on offline logins too, where anyone can
	// type any name: only for networks whose offline logins are protected otherwise.
	TrustOfflineAdmins bool `toml:"trust_offline_admins"`
	// Groups are the roles ([permissions.groups.<name>]): "admins" has every
	// permission, "default" is everyone (without it, PlayerCommands are the
	// default group's), and any other is its members' (docs/commands.md#roles).
	Groups map[string]PermissionGroup `toml:"groups"`
}

// PermissionGroup is one role: permissions (infrarust.command.<name>, a
// trailing * matches everything under it), the players in it (names or
// UUIDs; recognised like admins), and the servers where it applies (none:
// everywhere).
type PermissionGroup struct {
	Permissions []string `toml:"permissions" json:"permissions,omitempty"`
	Members     []string `toml:"members" json:"members,omitempty"`
	Servers     []string `toml:"servers" json:"servers,omitempty"`
}

// ValidGroupName checks a group's name: lower-case letters, digits, - and _,
// 1 to 32 of them.
func ValidGroupName(name string) error {
	if name == "" || len(name) > 32 || strings.ContainsFunc(name, notNamePart) {
		return fmt.Errorf("%q is not a group name (lower-case letters, digits, - and _, at most 32)", name)
	}
	return nil
}

// ValidPermission checks a permission entry: dot-separated parts of
// lower-case letters, digits, - and _, the last of which may be "*" (alone,
// "*" is every permission).
func ValidPermission(p string) error {
	if len(p) > 128 {
		return fmt.Errorf("a permission is at most 128 characters")
	}
	if p == "*" {
		return nil
	}
	parts := strings.Split(p, ".")
	for i, part := range parts {
		if part == "*" && i == len(parts)-1 && i > 0 {
			continue
		}
		if part == "" || strings.ContainsFunc(part, notNamePart) {
			return fmt.Errorf("%q is not a permission (like infrarust.command.kick or infrarust.command.*)", p)
		}
	}
	return nil
}

func notNamePart(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_')
}

func defaultPermissions() Permissions {
	return Permissions{PlayerCommands: []string{"server", "glist", "find", "hub"}}
}

// Messages is [messages]: what the proxy's commands tell players. Each is legacy
// § text or a JSON text component (starting with '{' or '['); {placeholders}
// are filled in.
type Messages struct {
	ServerCurrent   string `toml:"server_current"`
	ServerList      string `toml:"server_list"`
	ServerUnknown   string `toml:"server_unknown"`
	ServerAlready   string `toml:"server_already"`
	ServerMoving    string `toml:"server_moving"`
	MoveFailed      string `toml:"move_failed"`
	MoveNeedsMojang string `toml:"move_needs_mojang"`
	GlistServer     string `toml:"glist_server"`
	GlistTotal      string `toml:"glist_total"`
	FindFound       string `toml:"find_found"`
	FindMissing     string `toml:"find_missing"`
	SendDone        string `toml:"send_done"`
	KickDone        string `toml:"kick_done"`
	KickReason      string `toml:"kick_reason"`
	Broadcast       string `toml:"broadcast"`
	Usage           string `toml:"usage"`
	CommandBusy     string `toml:"command_busy"`
	CommandFailed   string `toml:"command_failed"`
	ReloadDone      string `toml:"reload_done"`
	HubNone         string `toml:"hub_none"`
	PlayerNotOnline string `toml:"player_not_online"`
	Shutdown        string `toml:"shutdown"`

	// The auth limbo's texts ([auth_limbo], docs/offline-networks.md).
	AuthTitle             string `toml:"auth_title"`
	AuthRegister          string `toml:"auth_register"`
	AuthLogin             string `toml:"auth_login"`
	AuthRegistered        string `toml:"auth_registered"`
	AuthLoggedIn          string `toml:"auth_logged_in"`
	AuthPasswordChanged   string `toml:"auth_password_changed"`
	AuthWrongPassword     string `toml:"auth_wrong_password"`
	AuthPasswordsDiffer   string `toml:"auth_passwords_differ"`
	AuthPasswordShort     string `toml:"auth_password_short"`
	AuthPasswordLong      string `toml:"auth_password_long"`
	AuthNotRegistered     string `toml:"auth_not_registered"`
	AuthAlreadyRegistered string `toml:"auth_already_registered"`
	AuthUsage             string `toml:"auth_usage"`
	AuthUnavailable       string `toml:"auth_unavailable"`
	AuthTimeout           string `toml:"auth_timeout"`
	AuthTooManyAttempts   string `toml:"auth_too_many_attempts"`
	AuthWaiting           string `toml:"auth_waiting"`
	AuthPremiumRefused    string `toml:"auth_premium_refused"`
	AuthNoAccount         string `toml:"auth_no_account"`
	AuthWrongOldPassword  string `toml:"auth_wrong_old_password"`
	AuthUnregistered      string `toml:"auth_unregistered"`
	AuthCoolingDown       string `toml:"auth_cooling_down"`
	AuthRegistrationLimit string `toml:"auth_registration_limit"`
	AuthNotLoggedIn       string `toml:"auth_not_logged_in"`

	// The bot verification's texts ([verify]).
	VerifyTitle    string `toml:"verify_title"`
	VerifySubtitle string `toml:"verify_subtitle"`
	VerifyFailed   string `toml:"verify_failed"`
	VerifyBusy     string `toml:"verify_busy"`
	VerifyVersion  string `toml:"verify_version"`
}

// DefaultMessages is [messages] when the file says nothing.
func DefaultMessages() Messages {
	return Messages{
		ServerCurrent:   "§eYou are on §a{server}§e.",
		ServerList:      "§eServers: ",
		ServerUnknown:   "§cThere is no server called {server}.",
		ServerAlready:   "§cYou are already on {server}.",
		ServerMoving:    "§7Connecting you to {server}…",
		MoveFailed:      "§cYou could not be moved to {server}: {reason}",
		MoveNeedsMojang: "{server} needs a Minecraft account signed in with Mojang: join it through its own address",
		GlistServer:     "§a[{server}] §e({count})§r: {players}",
		GlistTotal:      "§eThere are §a{count}§e players online.",
		FindFound:       "§e{player} is on §a{server}§e.",
		FindMissing:     "§c{player} is not online.",
		SendDone:        "§aSent {count} of {total} to {server}.",
		KickDone:        "§aKicked {player}.",
		KickReason:      "Kicked by an operator",
		Broadcast:       "§6[Broadcast]§r {message}",
		Usage:           "§cUsage: /{command} {usage}",
		CommandBusy:     "§cYour last command is still running.",
		CommandFailed:   "§c{reason}",
		ReloadDone:      "§aConfiguration reloaded.",
		HubNone:         "§cThere is no lobby to send you to.",
		PlayerNotOnline: "§c{player} is not online.",
		Shutdown:        "Proxy restarting, reconnect in a moment",

		AuthTitle:             "§6Welcome, {player}",
		AuthRegister:          "§ePlease register: §a/register <password> <password>",
		AuthLogin:             "§ePlease log in: §a/login <password>",
		AuthRegistered:        "§aRegistered. Welcome!",
		AuthLoggedIn:          "§aLogged in.",
		AuthPasswordChanged:   "§aPassword changed.",
		AuthWrongPassword:     "§cWrong password. Attempts left: {left}.",
		AuthPasswordsDiffer:   "§cThe two passwords are not the same.",
		AuthPasswordShort:     "§cA password needs at least {min} characters.",
		AuthPasswordLong:      "§cA password may have at most {max} characters.",
		AuthNotRegistered:     "§cThis name has no account yet: §a/register <password> <password>",
		AuthAlreadyRegistered: "§cThis name is registered: §a/login <password>",
		AuthUsage:             "§cUsage: {usage}",
		AuthUnavailable:       "§cLogin is unavailable right now; try again in a moment.",
		AuthTimeout:           "You took too long to log in.",
		AuthTooManyAttempts:   "Too many wrong passwords.",
		AuthWaiting:           "§7Connecting you to {server}…",
		AuthNoAccount:         "§cYou have no password account.",
		AuthWrongOldPassword:  "§cThat is not your password.",
		AuthUnregistered:      "§aYour account is deleted; you will register again at your next login.",
		AuthCoolingDown:       "§cToo many wrong passwords for this account: try again in {wait}.",
		AuthRegistrationLimit: "§cToo many accounts were registered from your address; try again later.",
		AuthNotLoggedIn:       "§cLog in to your account first: join a server that asks for your password.",
		VerifyTitle:           "§6Checking your connection",
		VerifySubtitle:        "§7One moment…",
		VerifyFailed:          "Bot verification failed ({reason}). Reconnect to try again.",
		VerifyBusy:            "Too many players are joining right now; try again in a moment.",
		VerifyVersion:         "This server is verifying new players; join with Minecraft 1.8 to 26.1.",
		AuthPremiumRefused:    "{name} belongs to a premium Minecraft account: log in with that account, or pick another name.",
	}
}

// MessagePlaceholder finds {name} in a message.
var MessagePlaceholder = regexp.MustCompile(`\{[a-z_]+\}`)

func (c *Config) validateCommands(r *report) {
	// Names first, then aliases: an alias that collides with a command's name is
	// the alias's fault, wherever it is written.
	labels := map[string]string{}
	claim := func(path, label, owner, what string) {
		label = strings.ToLower(label)
		switch other, dup := labels[label]; {
		case !validCommandLabel(label):
			r.check(path, "%q is not a command name (letters, digits, - _ . only, at most 32)", label)
		case dup && other == owner:
			r.check(path, "/%s is listed twice for the %s command", label, owner)
		case dup:
			r.check(path, "/%s is already the %s command's %s; pick another", label, other, what)
		default:
			labels[label] = owner
		}
	}
	for _, name := range BuiltinCommands {
		if o, _ := c.Commands.Builtin(name); o.Enabled {
			claim("commands."+name+".name", o.Label(name), name, "name")
		}
	}
	for _, name := range BuiltinCommands {
		if o, _ := c.Commands.Builtin(name); o.Enabled {
			for i, a := range o.Aliases {
				claim(indexPath("commands."+name+".aliases", i), a, name, "name or alias")
			}
		}
	}
	for i, name := range c.Permissions.PlayerCommands {
		if !validCommandLabel(strings.ToLower(name)) {
			r.check(indexPath("permissions.player_commands", i), "%q is not a command name", name)
		}
	}
	for i, a := range c.Permissions.Admins {
		if strings.TrimSpace(a) == "" {
			r.check(indexPath("permissions.admins", i), "is empty; write a UUID or a player name")
		}
	}
	for name, g := range c.Permissions.Groups {
		path := "permissions.groups." + name
		if err := ValidGroupName(name); err != nil {
			r.check(path, "%v", err)
		}
		for i, p := range g.Permissions {
			if err := ValidPermission(strings.ToLower(strings.TrimSpace(p))); err != nil {
				r.check(indexPath(path+".permissions", i), "%v", err)
			}
		}
		for i, m := range g.Members {
			if strings.TrimSpace(m) == "" {
				r.check(indexPath(path+".members", i), "is empty; write a UUID or a player name")
			}
		}
		if (name == "admins" || name == "default") && len(g.Servers) > 0 {
			r.check(path+".servers", "the %s group applies everywhere; make another group for some servers", name)
		}
		if name == "default" && len(g.Members) > 0 {
			r.check(path+".members", "everyone is in the default group; members would mean nothing")
		}
	}
	v := reflect.ValueOf(&c.Messages).Elem()
	for i := range v.NumField() {
		s := v.Field(i).String()
		if t := strings.TrimSpace(s); IsJSONMessage(t) {
			if !json.Valid([]byte(t)) {
				r.check("messages."+v.Type().Field(i).Tag.Get("toml"), "starts like a JSON text component but is not JSON")
			}
		}
	}
}

// IsJSONMessage reports whether a [messages] entry is a JSON text component
// rather than legacy text: it starts like a JSON object or array of them.
func IsJSONMessage(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, `{"`) || strings.HasPrefix(s, `[{`) || strings.HasPrefix(s, `["`)
}

func validCommandLabel(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	})
}

// IsPlayerCommand reports whether everyone may use the command called name.
func (p Permissions) IsPlayerCommand(name string) bool {
	return slices.ContainsFunc(p.PlayerCommands, func(s string) bool { return strings.EqualFold(s, name) })
}

// String names the commands layer for logs.
func (c Commands) String() string {
	var on []string
	for _, n := range BuiltinCommands {
		if o, _ := c.Builtin(n); o.Enabled {
			on = append(on, o.Label(n))
		}
	}
	return fmt.Sprintf("commands %v", on)
}
