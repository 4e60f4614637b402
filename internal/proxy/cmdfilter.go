package proxy

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/infrarust-go/infrarust/internal/command"
	"github.com/infrarust-go/infrarust/internal/hooks"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/session"
)

// The session side of the commands: one session.Filter per configuration
// that takes the proxy's command lines out of each player's stream, answers
// completions of them, merges the proxy's commands into the backend's command
// tree, and runs the plugins' packet filters. A player's filter decodes only
// these packets; the rest of the stream is relayed as it came.

// playerCommands is one player's command state.
type playerCommands struct {
	p    *commander
	pl   *onlinePlayer
	src  *handle     // the player as his commands' source
	busy atomic.Bool // a command of this player is running
	// dead are the plugin filters (by index) that panicked: off for this session.
	dead []atomic.Bool

	mu            sync.Mutex
	legacyPending string // pre-1.13: the root completion the backend is answering
	treeWarned    bool
	// lastTree is the backend's last command tree as it sent it, and visible
	// the proxy commands merged into it then (perms.go: refreshTree).
	lastTree []byte
	visible  string
	treeFrom string // the server lastTree came from
	// refreshing and refreshDirty coalesce refreshes (scheduleRefresh).
	refreshing, refreshDirty atomic.Bool
}

// commandTypes are the packets the commands layer reads.
var (
	commandServerbound = []mc.PacketType{mc.PacketChatCommand, mc.PacketChatCommandSigned, mc.PacketChatMessage, mc.PacketTabCompleteRequest}
	commandClientbound = []mc.PacketType{mc.PacketDeclareCommands, mc.PacketTabCompleteResponse}
)

// sessionFilter is the filter of the sessions that start under st: the
// commands (when on) and the plugins' packet filters; nil when there is
// neither, so the relay reads no packet at all. The player's own state is
// their playerCommands (newPlayerCommands).
func (p *commander) sessionFilter(st *state) *session.Filter {
	var plugins []hooks.PacketFilter
	if d := p.opts.Hooks; d != nil {
		plugins = d.PacketFilters()
	}
	if st.commands == nil && len(plugins) == 0 {
		return nil
	}
	f := &session.Filter{}
	if st.commands != nil {
		// Shared, never written: a plugin's types below go to a copy (append
		// over a full slice).
		f.Serverbound, f.Clientbound = commandServerbound[:len(commandServerbound):len(commandServerbound)], commandClientbound[:len(commandClientbound):len(commandClientbound)]
	}
	for _, pf := range plugins {
		if pf.Direction == mc.Serverbound {
			f.Serverbound = append(f.Serverbound, pf.Types...)
		} else {
			f.Clientbound = append(f.Clientbound, pf.Types...)
		}
	}
	f.Packet = func(s *session.Session, pk *session.Packet) {
		pl := ownerOf(s)
		pc := pl.cmds
		if cmds := p.state.Load().commands; cmds != nil && pk.State == mc.PlayState {
			pc.packet(s, cmds, pk)
			if pk.Drop {
				return
			}
		}
		for i, pf := range plugins {
			if pf.Direction != pk.Direction || pc.dead[i].Load() || !containsType(pf.Types, pk.Type) {
				continue
			}
			if !p.runPacketFilter(pl, s, pf, pk) {
				pc.dead[i].Store(true)
			}
			if pk.Drop {
				return
			}
		}
	}
	return f
}

// newPlayerCommands is pl's command state, for a session under a filter; perm
// is a PermissionsSetup handler's check (nil: the proxy's own).
func (p *commander) newPlayerCommands(pl *onlinePlayer, perm func(string) bool) *playerCommands {
	pc := &playerCommands{p: p, pl: pl, src: &handle{p: p.players, pl: pl, perm: perm, why: whyCommand}}
	if n := len(p.opts.Hooks.PacketFilters()); n > 0 {
		pc.dead = make([]atomic.Bool, n)
	}
	return pc
}

func containsType(ts []mc.PacketType, t mc.PacketType) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// runPacketFilter calls one plugin filter; false when it panicked (it is then
// dropped for this session, and the packet goes on as it was).
func (p *commander) runPacketFilter(pl *onlinePlayer, s *session.Session, pf hooks.PacketFilter, pk *session.Packet) (ok bool) {
	srv, _ := pl.where()
	ctx := &hooks.PacketContext{
		Player: pl.name, UUID: pl.uuid, Protocol: pl.protocol, Direction: pk.Direction,
		State: pk.State, Type: pk.Type, Payload: pk.Payload,
		Send: func(d mc.Direction, t mc.PacketType, payload []byte) error {
			if d == mc.Clientbound {
				return s.SendToClient(t, payload)
			}
			return s.SendToServer(t, payload)
		},
	}
	if srv != nil {
		ctx.Server = srv.id
	}
	defer func() {
		if r := recover(); r != nil {
			ok = false
			p.log.Warn("packet filter panicked; it is off for this player's session", "filter", pf.Name, "player", pl.name, "panic", r)
		}
	}()
	pf.Fn(ctx)
	if ctx.Dropped {
		pk.Drop = true
	} else if ctx.Changed {
		pk.Replace(ctx.Payload)
	}
	return true
}

// packet handles one packet of the commands layer.
func (pc *playerCommands) packet(s *session.Session, cmds *command.Set, pk *session.Packet) {
	proto := s.Client().Protocol
	switch pk.Type {
	case mc.PacketChatCommand, mc.PacketChatCommandSigned, mc.PacketChatMessage:
		line, isCmd, err := mc.DecodeChatCommand(pk.Type, pk.Payload, proto)
		if err != nil || !isCmd {
			return
		}
		c, inv := cmds.Parse(pc.src, line)
		if c == nil {
			return // the backend's (or invisible to this player): untouched
		}
		pk.Drop = true
		// The backend counts the chat messages the client acknowledged with each
		// command; a command it never sees must not put that count out of step.
		if off, ok := mc.ChatCommandAckOffset(pk.Type, pk.Payload, proto); ok && off > 0 {
			if ack, err := (mc.ChatAck{Offset: off}).AppendPayload(nil, proto); err == nil {
				_ = s.SendToServer(mc.PacketChatAck, ack)
			}
		}
		pc.run(c, inv)
	case mc.PacketTabCompleteRequest:
		req, err := mc.DecodeTabCompleteRequest(pk.Payload, proto)
		if err != nil || !strings.HasPrefix(req.Text, "/") {
			return
		}
		line := req.Text[1:]
		start, matches, ok := cmds.Complete(pc.src, line)
		if !ok {
			if !proto.AtLeast(mc.V1_13) && !strings.Contains(line, " ") {
				pc.mu.Lock()
				pc.legacyPending = line
				pc.mu.Unlock()
			}
			return
		}
		pk.Drop = true
		resp := mc.TabCompleteResponse{TransactionID: req.TransactionID, Start: int32(start + 1), Length: int32(len(line) - start)}
		for _, m := range matches {
			resp.Matches = append(resp.Matches, mc.TabMatch{Text: m})
		}
		if payload, err := resp.AppendPayload(nil, proto); err == nil {
			_ = s.SendToClient(mc.PacketTabCompleteResponse, payload)
		}
	case mc.PacketTabCompleteResponse:
		pc.mu.Lock()
		prefix := pc.legacyPending
		pc.legacyPending = ""
		pc.mu.Unlock()
		if proto.AtLeast(mc.V1_13) || prefix == "" {
			return
		}
		resp, err := mc.DecodeTabCompleteResponse(pk.Payload, proto)
		if err != nil {
			return
		}
		have := map[string]bool{}
		for _, m := range resp.Matches {
			have[strings.ToLower(m.Text)] = true
		}
		added := false
		for _, label := range cmds.Labels(pc.src, prefix) {
			if !have["/"+label] {
				resp.Matches = append(resp.Matches, mc.TabMatch{Text: "/" + label})
				added = true
			}
		}
		if !added {
			return
		}
		if payload, err := resp.AppendPayload(nil, proto); err == nil {
			pk.Replace(payload)
		}
	case mc.PacketDeclareCommands:
		tree, err := mc.DecodeCommandTree(pk.Payload, proto)
		if err != nil {
			pc.warnTree(err)
			return
		}
		pc.rememberTree(s, pk.Payload, strings.Join(cmds.Labels(pc.src, ""), " "))
		if err := mergeCommands(&tree, cmds, pc.src); err != nil {
			pc.warnTree(err)
			return
		}
		if payload, err := tree.AppendPayload(nil); err == nil {
			pk.Replace(payload)
		} else {
			pc.warnTree(err)
		}
	}
}

// warnTree logs once per session that the backend's command tree could not be
// merged (a modded parser): proxy commands still work, without completion.
func (pc *playerCommands) warnTree(err error) {
	pc.mu.Lock()
	first := !pc.treeWarned
	pc.treeWarned = true
	pc.mu.Unlock()
	if first {
		srv, _ := pc.pl.where()
		id := ""
		if srv != nil {
			id = srv.id
		}
		pc.p.log.Info("the backend's command tree was relayed without the proxy's commands", "player", pc.pl.name, "server", id, "err", err)
	}
}

// mergeCommands puts src's commands into a backend's tree: each label replaces
// a backend command of the same name (the proxy's wins, as on Velocity).
func mergeCommands(tree *mc.CommandTree, cmds *command.Set, src command.Source) error {
	for _, c := range cmds.Commands() {
		if !c.Allowed(src) {
			continue
		}
		for _, label := range c.Labels() {
			tree.RemoveRootChild(label)
			parent := tree.AddLiteral(tree.Root, label, len(c.Args) == 0 || c.Args[0].Optional)
			for i, a := range c.Args {
				kind := mc.ArgWord
				if a.Greedy {
					kind = mc.ArgGreedy
				}
				last := i == len(c.Args)-1
				exec := last || c.Args[i+1].Optional
				id, err := tree.AddArgument(parent, a.Name, kind, c.Complete != nil && !a.Greedy, exec)
				if err != nil {
					return err
				}
				parent = id
			}
		}
	}
	return nil
}

// run carries out a command on its own goroutine (a move waits for the
// client, whose packets this player's relay goroutine reads), one at a time
// per player.
func (pc *playerCommands) run(c *command.Command, inv command.Invocation) {
	if !pc.busy.CompareAndSwap(false, true) {
		pc.src.Tell(pc.p.msgs().CommandBusy)
		return
	}
	pc.p.log.Debug("proxy command", "player", pc.pl.name, "command", inv.Label, "args", len(inv.Args))
	pc.p.goroutine(func() {
		defer pc.busy.Store(false)
		ctx, cancel := context.WithCancel(pc.p.ctx)
		defer cancel()
		go func() {
			select {
			case <-pc.pl.sess.Done():
				cancel()
			case <-ctx.Done():
			}
		}()
		m := pc.p.msgs()
		command.Run(ctx, c, inv,
			func(label, usage string) string { return fill(m.Usage, "command", label, "usage", usage) },
			func(err error) string { return fill(m.CommandFailed, "reason", err.Error()) })
	})
}

// permissionsFor fires PermissionsSetup for pl and returns the permission
// check its handlers leave (the proxy's own, allows, unless they replaced it);
// nil when no handler wants the event: allows is then called directly.
func (p *commander) permissionsFor(pl *onlinePlayer) func(string) bool {
	d := p.opts.Hooks
	if !d.Wants(hooks.KindPermissionsSetup) {
		return nil
	}
	perm := func(perm string) bool { return p.allows(pl, perm) }
	ev := hooks.PermissionsSetup{Connection: pl.origin.ev.conn, Profile: hooks.ProfileFromAuth(pl.origin.profile),
		OnlineMode: pl.proven().mojang, Admin: p.isAdmin(pl), Permission: perm}
	hooks.Fire(d, pl.origin.ev.ctx, &ev)
	if ev.Permission != nil {
		return ev.Permission
	}
	return nil
}
