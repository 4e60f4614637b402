package proxy

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/perms"
	"github.com/infrarust-go/infrarust/internal/session"
)

// permissions are the roles in force: the file's [permissions] and the
// stored groups, compiled together whenever either changes.
type permissions struct {
	mu     sync.Mutex // orders recompiles
	stored perms.Doc
	rules  atomic.Pointer[perms.Rules]
}

// SetStoredPermissions puts the stored groups in force (the app calls it
// when the store changes, here or on another proxy of the fleet); the
// players whose commands change get their command list again at once.
// A document older than the one in force is ignored: two changes applied out
// of order (one through the API, the next from the fleet) end on the newer.
func (p *Proxy) SetStoredPermissions(d perms.Doc) {
	p.cmds.perms.mu.Lock()
	if d.Version < p.cmds.perms.stored.Version {
		p.cmds.perms.mu.Unlock()
		return
	}
	p.cmds.perms.stored = d.Clone()
	p.cmds.perms.mu.Unlock()
	p.cmds.recompilePermissions()
}

// recompilePermissions builds the rules of the configuration in force and the
// stored groups, and refreshes the online players' command lists.
func (p *commander) recompilePermissions() {
	p.perms.mu.Lock()
	cfg := p.state.Load().cfg // read under the lock: the last to compile sees the newest
	rules := perms.Compile(perms.FileGroups(cfg.Permissions), p.perms.stored)
	old := p.perms.rules.Swap(rules)
	p.perms.mu.Unlock()
	if old != nil {
		p.refreshCommandLists()
	}
}

// asker is pl as the permission rules see him: his groups count only when
// his identity is proven (Mojang vouched) or trust_offline_admins is on,
// since anyone can type any name on an offline login.
func (p *commander) asker(pl *onlinePlayer) perms.Player {
	trusted := pl.proven().mojang || p.state.Load().cfg.Permissions.TrustOfflineAdmins
	return perms.Player{Name: pl.name, UUID: pl.uuid, Trusted: trusted}
}

// allows is the proxy's permission check: pl's groups where he is now.
func (p *commander) allows(pl *onlinePlayer, perm string) bool {
	server := ""
	if srv, _ := pl.where(); srv != nil {
		server = srv.id
	}
	return p.perms.rules.Load().Allows(p.asker(pl), server, perm)
}

// isAdmin is whether pl has every permission everywhere: [permissions]
// admins, a stored op, a member of a group with "*". It is asked at every
// check, so a change takes effect at once.
func (p *commander) isAdmin(pl *onlinePlayer) bool {
	return p.perms.rules.Load().Admin(p.asker(pl))
}

// refreshCommandLists sends every online player whose commands changed his
// command list again (each on his own goroutine: one slow client does not
// hold the others').
func (p *commander) refreshCommandLists() {
	cmds := p.state.Load().commands
	if cmds == nil {
		return
	}
	for _, pl := range p.roster.all() {
		if pl.cmds != nil && pl.sess != nil {
			pl.cmds.scheduleRefresh()
		}
	}
}

// scheduleRefresh runs refreshTree on the player's own goroutine, at most one
// at a time: changes that come while it runs make it run once more, so a
// burst of changes costs each player one or two refreshes, not one each.
func (pc *playerCommands) scheduleRefresh() {
	pc.refreshDirty.Store(true)
	if !pc.refreshing.CompareAndSwap(false, true) {
		return
	}
	pc.p.goroutine(func() {
		for {
			for pc.refreshDirty.Swap(false) {
				pc.refreshTree()
			}
			pc.refreshing.Store(false)
			// A change between the last Swap and the Store above is not lost.
			if !pc.refreshDirty.Load() || !pc.refreshing.CompareAndSwap(false, true) {
				return
			}
		}
	})
}

// refreshTree sends the player the backend's last command tree with the
// proxy's commands merged as they are now, when the commands he may use
// changed since the last merge (a role, a reload, a move to a server where
// other roles apply).
func (pc *playerCommands) refreshTree() {
	cmds := pc.p.state.Load().commands
	if cmds == nil {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.lastTree == nil || !pc.pl.sess.Playing() {
		return // a new world is coming: its server sends a tree, merged then
	}
	if srv, _ := pc.pl.where(); srv == nil || srv.id != pc.treeFrom {
		return // the tree is another server's: the one he is on sends its own
	}
	visible := strings.Join(cmds.Labels(pc.src, ""), " ")
	if visible == pc.visible {
		return
	}
	proto := pc.pl.sess.Client().Protocol
	tree, err := mc.DecodeCommandTree(pc.lastTree, proto)
	if err != nil {
		return
	}
	if err := mergeCommands(&tree, cmds, pc.src); err != nil {
		return
	}
	payload, err := tree.AppendPayload(nil)
	if err != nil {
		return
	}
	// Sent with pc.mu held: a tree the backend sends meanwhile waits for it,
	// so the newer one always arrives last.
	if pc.pl.sess.SendToClient(mc.PacketDeclareCommands, payload) == nil {
		pc.visible = visible
		pc.p.log.Debug("command list sent again", "player", pc.pl.name, "commands", visible)
	}
}

// rememberTree keeps the backend's tree (before the merge) and what the
// merge shows, for refreshTree.
// The tree is the session's current backend's, which is set before its
// packets flow (the player's server moves later, when the move completes).
func (pc *playerCommands) rememberTree(s *session.Session, payload []byte, visible string) {
	from := ""
	if b := s.Current(); b != nil {
		from = b.Server
	}
	pc.mu.Lock()
	pc.lastTree = slices.Clone(payload)
	pc.visible = visible
	pc.treeFrom = from
	pc.mu.Unlock()
}
