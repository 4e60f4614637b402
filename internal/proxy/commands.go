package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/infrarust-go/infrarust/internal/command"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/player"
)

// The proxy's in-game commands (docs/commands.md): the built-ins Velocity's
// players know, each renamable in [commands], plus the plugins' commands. A
// command line of the proxy never reaches the backend; any other goes on
// untouched, as does a proxy command the player may not use.

// permPrefix + a command's canonical name is the permission it needs.
const permPrefix = "infrarust.command."

// buildCommands makes the command set of a configuration: the enabled
// built-ins under their configured labels, then the plugins' commands.
func (p *commander) buildCommands(cfg *config.Config) (*command.Set, error) {
	if !cfg.Commands.Enabled {
		return nil, nil
	}
	var cmds []*command.Command
	for _, c := range p.builtinCommands() {
		canonical := c.Name
		o, _ := cfg.Commands.Builtin(canonical)
		if !o.Enabled {
			continue
		}
		c.Name = o.Label(canonical)
		c.Aliases = o.Aliases
		cmds = append(cmds, c)
	}
	if cfg.UsesAuthLimbo() {
		cmds = append(cmds, p.checks.accountCommands()...)
	}
	if d := p.opts.Hooks; d != nil {
		cmds = append(cmds, d.Commands()...)
	}
	return command.NewSet(cmds...)
}

// sourcePlayer is the online player behind a command's source.
func sourcePlayer(inv command.Invocation) *onlinePlayer {
	if h, ok := inv.Source.(*handle); ok {
		return h.pl
	}
	return nil
}

// builtinCommands are the built-ins under their canonical names.
func (p *commander) builtinCommands() []*command.Command {
	return []*command.Command{
		{
			Name: "server", Permission: permPrefix + "server", Usage: "[server]",
			Description: "where you are, or move to another server of your network",
			Args:        []command.Arg{{Name: "server", Optional: true}},
			Run:         p.cmdServer,
			Complete: func(inv command.Invocation) []string {
				return p.openServers(sourcePlayer(inv))
			},
		},
		{
			Name: "glist", Permission: permPrefix + "glist", Usage: "[server|all]",
			Description: "players online, per server",
			Args:        []command.Arg{{Name: "server", Optional: true}},
			Run:         p.cmdGlist,
			Complete: func(inv command.Invocation) []string {
				return append(p.serversOf(scopeOf(inv), nil), "all")
			},
		},
		{
			Name: "find", Permission: permPrefix + "find", Usage: "<player>",
			Description: "which server a player is on",
			Args:        []command.Arg{{Name: "player"}},
			Run:         p.cmdFind,
			Complete:    func(inv command.Invocation) []string { return p.playerNames(scopeOf(inv)) },
		},
		{
			Name: "send", Permission: permPrefix + "send", Usage: "<player|all|current> <server>",
			Description: "move players to a server",
			Args:        []command.Arg{{Name: "player"}, {Name: "server"}},
			Run:         p.cmdSend,
			Complete: func(inv command.Invocation) []string {
				if len(inv.Args) <= 1 {
					return append(p.playerNames(scopeOf(inv)), "all", "current")
				}
				return p.networkServers(sourcePlayer(inv))
			},
		},
		{
			Name: "kick", Permission: permPrefix + "kick", Usage: "<player> [reason]",
			Description: "disconnect a player",
			Args:        []command.Arg{{Name: "player"}, {Name: "reason", Greedy: true, Optional: true}},
			Run:         p.cmdKick,
			Complete:    func(inv command.Invocation) []string { return p.playerNames(scopeOf(inv)) },
		},
		{
			Name: "broadcast", Permission: permPrefix + "broadcast", Usage: "<message>",
			Description: "a message to every player",
			Args:        []command.Arg{{Name: "message", Greedy: true}},
			Run:         p.cmdBroadcast,
		},
		{
			Name: "hub", Permission: permPrefix + "hub", Usage: "",
			Description: "to the lobby of your network",
			Run:         p.cmdHub,
		},
		{
			Name: "infrarust", Permission: permPrefix + "infrarust", Usage: "<version|reload|help>",
			Description: "the proxy's version, a configuration reload, this help",
			Args:        []command.Arg{{Name: "action", Optional: true}},
			Run:         p.cmdInfrarust,
			Complete:    func(command.Invocation) []string { return []string{"version", "reload", "help"} },
		},
	}
}

// Networks are how tenants share a proxy: a command sees and acts on the
// servers and players of its source's network only (the network of the
// server he is on), completions included. A source that is no player (a
// plugin's) sees no network but the default one.

// scopeOf is the network a command's source is on.
func scopeOf(inv command.Invocation) string {
	if pl := sourcePlayer(inv); pl != nil {
		if srv, _ := pl.where(); srv != nil {
			return srv.cfg.Network
		}
	}
	return ""
}

// inScope reports that server id is a server of network.
func (p *commander) inScope(id, network string) bool {
	srv := p.state.Load().servers[id]
	return srv != nil && srv.cfg.Network == network
}

// networkServers are the intercepted servers of pl's network, sorted: where
// /server and /send may take a player.
func (p *commander) networkServers(pl *onlinePlayer) []string {
	if pl == nil {
		return nil
	}
	cur, _ := pl.where()
	if cur == nil {
		return nil
	}
	return p.serversOf(cur.cfg.Network, interceptedFamily)
}

// openServers are the servers /server lists for pl, and completes: those of
// his network whose rules let him in now, and the one he is on.
func (p *commander) openServers(pl *onlinePlayer) []string {
	if pl == nil {
		return nil
	}
	cur, _ := pl.where()
	st := p.state.Load()
	var open []string
	for _, id := range p.networkServers(pl) {
		t := st.servers[id]
		if t == nil || (id != cur.id && p.moves.admitTo(pl.entrant(), t, pass{}) != nil) {
			continue
		}
		open = append(open, id)
	}
	return open
}

// serversOf are the servers of network that keep takes (nil: every one),
// sorted; every server of it is what /glist counts.
func (p *commander) serversOf(network string, keep family) []string {
	var out []string
	for id, srv := range p.state.Load().servers {
		if srv.cfg.Network == network && (keep == nil || keep(srv)) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// scopedPlayers are this proxy's players on servers of network.
func (p *commander) scopedPlayers(network string) []*onlinePlayer {
	var out []*onlinePlayer
	for _, pl := range p.roster.all() {
		if srv, _ := pl.where(); srv != nil && srv.cfg.Network == network {
			out = append(out, pl)
		}
	}
	return out
}

// playerNames are the names of network's players, sorted.
func (p *commander) playerNames(network string) []string {
	var out []string
	for _, pl := range p.scopedPlayers(network) {
		out = append(out, pl.name)
	}
	slices.Sort(out)
	return out
}

// scopedPlayer is the online player called name on a server of network
// (ErrUnknownPlayer for one on another network: he is not there for this
// source).
func (p *commander) scopedPlayer(name, network string) (*onlinePlayer, error) {
	pl, err := p.players.player(name)
	if err != nil {
		return nil, err
	}
	if srv, _ := pl.where(); srv == nil || srv.cfg.Network != network {
		return nil, fmt.Errorf("%w %q", ErrUnknownPlayer, name)
	}
	return pl, nil
}

func (p *commander) cmdServer(ctx context.Context, inv command.Invocation) error {
	pl := sourcePlayer(inv)
	if pl == nil {
		return errors.New("only a player can use this command")
	}
	m := p.msgs()
	cur, _ := pl.where()
	if len(inv.Args) == 0 {
		inv.Source.Tell(fill(m.ServerCurrent, "server", cur.id))
		if open := p.openServers(pl); len(open) > 0 {
			inv.Source.Tell(string(serverList(fill(m.ServerList), open, cur.id, mc.Protocol(inv.Source.Protocol()))))
		}
		return nil
	}
	if len(inv.Args) > 1 {
		return command.ErrUsage
	}
	target := inv.Args[0]
	st := p.state.Load()
	t := st.servers[target]
	if t == nil || !slices.Contains(p.networkServers(pl), target) {
		inv.Source.Tell(fill(m.ServerUnknown, "server", target))
		return nil
	}
	p.moveSelf(ctx, inv.Source, target)
	return nil
}

// moveSelf moves the command's own player to target, telling him how it goes.
func (p *commander) moveSelf(ctx context.Context, me command.Source, target string) {
	m := p.msgs()
	if me.Server() == target {
		me.Tell(fill(m.ServerAlready, "server", target))
		return
	}
	me.Tell(fill(m.ServerMoving, "server", target))
	switch res := me.Connect(ctx, target); res.Status {
	case player.AlreadyThere:
		me.Tell(fill(m.ServerAlready, "server", target))
	case player.Refused, player.Failed:
		me.Tell(fill(m.MoveFailed, "server", res.Server, "reason", res.Reason))
	}
}

// cmdHub sends the player to his network's lobby: the first [commands.hub]
// servers entry on his network, else the first fallback of the server he is
// on (Velocity's try list is where networks name their lobby).
func (p *commander) cmdHub(ctx context.Context, inv command.Invocation) error {
	pl := sourcePlayer(inv)
	if pl == nil {
		return errors.New("only a player can use this command")
	}
	if len(inv.Args) > 0 {
		return command.ErrUsage
	}
	target := p.hubOf(pl)
	if target == "" {
		inv.Source.Tell(p.msgs().HubNone)
		return nil
	}
	p.moveSelf(ctx, inv.Source, target)
	return nil
}

// hubOf is pl's lobby ("" when his network has none).
func (p *commander) hubOf(pl *onlinePlayer) string {
	cur, _ := pl.where()
	candidates := p.state.Load().cfg.Commands.Hub.Servers
	if len(candidates) == 0 && cur != nil {
		candidates = cur.cfg.FallbackServers
	}
	mine := p.networkServers(pl)
	for _, id := range candidates {
		if slices.Contains(mine, id) {
			return id
		}
	}
	return ""
}

// serverList is the clickable list /server shows: each server runs /server <id>.
// 1.21.5 renamed the click and hover fields (click_event, command).
func serverList(prefix string, ids []string, current string, proto mc.Protocol) json.RawMessage {
	type obj = map[string]any
	extra := []any{obj{"text": prefix}}
	for i, id := range ids {
		if i > 0 {
			extra = append(extra, obj{"text": ", ", "color": "gray"})
		}
		e := obj{"text": id, "color": "green"}
		if id == current {
			e["color"] = "gold"
		}
		hover := obj{"text": "Click to join " + id}
		if proto.AtLeast(mc.V1_21_5) {
			e["click_event"] = obj{"action": "run_command", "command": "/server " + id}
			e["hover_event"] = obj{"action": "show_text", "value": hover}
		} else {
			e["clickEvent"] = obj{"action": "run_command", "value": "/server " + id}
			e["hoverEvent"] = obj{"action": "show_text", "value": hover}
		}
		extra = append(extra, e)
	}
	js, _ := json.Marshal(obj{"text": "", "extra": extra})
	return js
}

func (p *commander) cmdGlist(ctx context.Context, inv command.Invocation) error {
	m := p.msgs()
	if len(inv.Args) > 1 {
		return command.ErrUsage
	}
	which := ""
	if len(inv.Args) == 1 {
		which = inv.Args[0]
	}
	network := scopeOf(inv)
	if which != "" && which != "all" && !p.inScope(which, network) {
		inv.Source.Tell(fill(m.ServerUnknown, "server", which))
		return nil
	}
	byServer := map[string][]string{}
	for _, pl := range p.scopedPlayers(network) {
		srv, _ := pl.where()
		byServer[srv.id] = append(byServer[srv.id], pl.name)
	}
	if d := p.opts.Directory; d != nil && which != "" {
		if list, err := d.RemotePlayers(ctx); err == nil {
			for _, rp := range list {
				if p.inScope(rp.Server, network) {
					byServer[rp.Server] = append(byServer[rp.Server], rp.Name)
				}
			}
		}
	}
	total := 0
	for _, id := range p.serversOf(network, nil) {
		names := byServer[id]
		count := len(names)
		if f := p.opts.Fleet; f != nil && (which == "" || p.opts.Directory == nil) {
			count += f.RemoteOnline(id)
		}
		total += count
		if (which != "" && which != "all" && which != id) || count == 0 {
			continue
		}
		shown := ""
		if which != "" {
			slices.Sort(names)
			shown = strings.Join(names, ", ")
			if extra := count - len(names); extra > 0 {
				shown += fmt.Sprintf(" (+%d on other proxies)", extra)
			}
		}
		inv.Source.Tell(fill(m.GlistServer, "server", id, "count", strconv.Itoa(count), "players", shown))
	}
	if which == "" || which == "all" {
		inv.Source.Tell(fill(m.GlistTotal, "count", strconv.Itoa(total)))
	}
	return nil
}

func (p *commander) cmdFind(ctx context.Context, inv command.Invocation) error {
	if len(inv.Args) != 1 {
		return command.ErrUsage
	}
	m := p.msgs()
	network := scopeOf(inv)
	pl, err := p.scopedPlayer(inv.Args[0], network)
	if err != nil {
		if rp, ok := p.remotePlayer(ctx, inv.Args[0], network); ok {
			inv.Source.Tell(fill(m.FindFound, "player", rp.Name, "server", rp.Server))
			return nil
		}
		inv.Source.Tell(fill(m.FindMissing, "player", inv.Args[0]))
		return nil
	}
	srv, _ := pl.where()
	inv.Source.Tell(fill(m.FindFound, "player", pl.name, "server", srv.id))
	return nil
}

// remotePlayer finds a player of network on another proxy of the fleet
// (exact name first, then any case).
func (p *commander) remotePlayer(ctx context.Context, name, network string) (RemotePlayer, bool) {
	d := p.opts.Directory
	if d == nil {
		return RemotePlayer{}, false
	}
	list, err := d.RemotePlayers(ctx)
	if err != nil {
		p.log.Debug("fleet players unavailable for a command", "err", err)
		return RemotePlayer{}, false
	}
	var folded []RemotePlayer
	for _, rp := range list {
		if !p.inScope(rp.Server, network) {
			continue
		}
		if rp.Name == name {
			return rp, true
		}
		if strings.EqualFold(rp.Name, name) {
			folded = append(folded, rp)
		}
	}
	if len(folded) == 1 {
		return folded[0], true
	}
	return RemotePlayer{}, false
}

func (p *commander) cmdSend(ctx context.Context, inv command.Invocation) error {
	if len(inv.Args) != 2 {
		return command.ErrUsage
	}
	m := p.msgs()
	who, target := inv.Args[0], inv.Args[1]
	network := scopeOf(inv)
	if !p.inScope(target, network) {
		inv.Source.Tell(fill(m.ServerUnknown, "server", target))
		return nil
	}
	var players []*onlinePlayer
	switch who {
	case "all":
		players = p.scopedPlayers(network)
	case "current":
		here := inv.Source.Server()
		for _, pl := range p.scopedPlayers(network) {
			if srv, _ := pl.where(); srv.id == here {
				players = append(players, pl)
			}
		}
	default:
		pl, err := p.scopedPlayer(who, network)
		if err != nil {
			if rp, ok := p.remotePlayer(ctx, who, network); ok {
				p.opts.Directory.Command(rp.Proxy, "send", rp.Name, target)
				inv.Source.Tell(fill(m.SendDone, "count", "1", "total", "1", "server", target) + " §7(through " + rp.Proxy + ")")
				return nil
			}
			inv.Source.Tell(fill(m.PlayerNotOnline, "player", who))
			return nil
		}
		players = []*onlinePlayer{pl}
	}
	sent, tried := 0, 0
	var last player.ConnectResult
	for _, pl := range players {
		if srv, _ := pl.where(); srv != nil && srv.id == target {
			continue
		}
		tried++
		them := p.players.handleOf(pl, whySend)
		res := them.Connect(ctx, target)
		if !res.OK() {
			last = res
			_ = them.Tell(fill(m.MoveFailed, "server", res.Server, "reason", res.Reason))
			continue
		}
		sent++
	}
	inv.Source.Tell(fill(m.SendDone, "count", strconv.Itoa(sent), "total", strconv.Itoa(tried), "server", target))
	if tried == 1 && last.Status != 0 {
		inv.Source.Tell(fill(m.MoveFailed, "server", last.Server, "reason", last.Reason))
	}
	return nil
}

func (p *commander) cmdKick(ctx context.Context, inv command.Invocation) error {
	if len(inv.Args) < 1 {
		return command.ErrUsage
	}
	m := p.msgs()
	reason := m.KickReason
	if len(inv.Args) == 2 {
		reason = inv.Args[1]
	}
	network := scopeOf(inv)
	pl, err := p.scopedPlayer(inv.Args[0], network)
	if err != nil {
		if rp, ok := p.remotePlayer(ctx, inv.Args[0], network); ok {
			p.opts.Directory.Command(rp.Proxy, "kick", rp.Name, reason)
			p.log.Info("player kick passed to another proxy", "player", rp.Name, "proxy", rp.Proxy, "by", inv.Source.Name())
			inv.Source.Tell(fill(m.KickDone, "player", rp.Name))
			return nil
		}
		inv.Source.Tell(fill(m.PlayerNotOnline, "player", inv.Args[0]))
		return nil
	}
	p.log.Info("player kicked by a command", "player", pl.name, "by", inv.Source.Name(), "reason", reason)
	p.players.handleOf(pl, "").Kick(reason)
	inv.Source.Tell(fill(m.KickDone, "player", pl.name))
	return nil
}

func (p *commander) cmdBroadcast(ctx context.Context, inv command.Invocation) error {
	if len(inv.Args) != 1 {
		return command.ErrUsage
	}
	text := fill(p.msgs().Broadcast, "message", inv.Args[0])
	network := scopeOf(inv)
	p.log.Info("broadcast", "by", inv.Source.Name(), "network", network, "message", inv.Args[0])
	for _, pl := range p.scopedPlayers(network) {
		p.players.tell(pl, text)
	}
	return nil
}

func (p *commander) cmdInfrarust(ctx context.Context, inv command.Invocation) error {
	action := "version"
	if len(inv.Args) > 0 {
		action = strings.ToLower(inv.Args[0])
	}
	switch action {
	case "version":
		v := p.opts.Version
		if v == "" {
			v = "(development build)"
		}
		inv.Source.Tell("§eInfrarust " + v)
	case "reload":
		if p.opts.Reload == nil {
			return errors.New("this proxy cannot reload its configuration from the game")
		}
		if err := p.opts.Reload(); err != nil {
			return fmt.Errorf("reload failed: %w", err)
		}
		inv.Source.Tell(p.msgs().ReloadDone)
	case "help":
		set := p.state.Load().commands
		for _, c := range set.Commands() {
			if c.Allowed(inv.Source) {
				inv.Source.Tell(fmt.Sprintf("§e/%s %s§7 — %s", c.Name, c.Usage, c.Description))
			}
		}
	default:
		return command.ErrUsage
	}
	return nil
}
