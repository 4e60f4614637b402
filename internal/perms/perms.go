// Package perms decides who may use which proxy command: groups (roles) of
// permissions with their members, from [permissions] in infrarust.toml and
// from the stored changes operators make at run time (`infrarust perms`, the
// admin API), kept in <data_dir>/permissions.json or, with [fleet], in the
// fleet's Redis so every proxy shares them.
//
// A permission is infrarust.command.<name> (the built-ins' canonical names and
// the plugins' commands); "*" at the end of an entry matches every permission
// under it ("infrarust.command.*", "*"). Two groups are special: "admins" has
// every permission, and "default" applies to everyone. A group may be limited
// to some servers (LuckPerms' server context): its permissions then apply only
// while the member is on one of them.
package perms

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
)

const (
	// Admins is the group with every permission ([permissions] admins and
	// `infrarust perms op`).
	Admins = "admins"
	// Default is the group of everyone.
	Default = "default"
	// CommandPrefix starts the permission of a proxy command.
	CommandPrefix = "infrarust.command."
)

// Group is one group as written: in [permissions.groups.<name>] or stored.
type Group = config.PermissionGroup

// Doc is the stored permissions: the groups changed at run time. Version
// grows with every change, so a proxy never goes back to an older document.
type Doc struct {
	Version int64            `json:"version"`
	Groups  map[string]Group `json:"groups"`
}

// Clone is a deep copy of d.
func (d Doc) Clone() Doc {
	out := Doc{Version: d.Version, Groups: make(map[string]Group, len(d.Groups))}
	for n, g := range d.Groups {
		out.Groups[n] = cloneGroup(g)
	}
	return out
}

func cloneGroup(g Group) Group {
	return Group{Permissions: slices.Clone(g.Permissions), Members: slices.Clone(g.Members), Servers: slices.Clone(g.Servers)}
}

// ValidGroupName and ValidPermission check names as config check does.
var (
	ValidGroupName  = config.ValidGroupName
	ValidPermission = config.ValidPermission
)

// NormalizeMember checks a member entry (a UUID or a player name) and returns
// its stored form: a dashed lower-case UUID, or the name in lower case.
func NormalizeMember(entry string) (string, error) {
	entry = strings.TrimSpace(entry)
	if id, ok := bans.CanonicalUUID(entry); ok {
		return id, nil
	}
	if bans.ValidUsername(entry) != nil {
		return "", errors.New("the player is neither a UUID nor a name (1 to 16 letters, digits or _)")
	}
	return strings.ToLower(entry), nil
}

// Player is who asks: Trusted is whether his name and UUID are proven
// (Mojang vouched, or [permissions] trust_offline_admins), without which he is
// only in the default group.
type Player struct {
	Name, UUID string
	Trusted    bool
}

// Rules are the groups in force, compiled for the checks: built once per
// change, read by every command check.
type Rules struct {
	groups []rule // by name
	// byPerm indexes the groups that grant an exact permission; wide are
	// those with a wildcard (or every permission): what Allows looks at.
	byPerm map[string][]int
	wide   []int
}

type rule struct {
	name     string
	everyone bool
	all      bool            // every permission
	exact    map[string]bool // permissions
	prefixes []string        // "x.y." of "x.y.*"
	members  map[string]bool // normalised
	servers  []string        // empty: everywhere
}

// Compile merges the file's groups with the stored ones: a group in both has
// the permissions and members of both, and the file's servers. Entries that do
// not parse are left out (config check and the stores refuse them first).
func Compile(file map[string]Group, stored Doc) *Rules {
	names := map[string]bool{}
	for n := range file {
		names[n] = true
	}
	for n := range stored.Groups {
		names[n] = true
	}
	r := &Rules{byPerm: map[string][]int{}}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		f, s := file[n], stored.Groups[n]
		ru := rule{name: n, everyone: n == Default, all: n == Admins, exact: map[string]bool{}, members: map[string]bool{}}
		ru.servers = f.Servers
		if _, inFile := file[n]; !inFile {
			ru.servers = s.Servers
		}
		for _, p := range slices.Concat(f.Permissions, s.Permissions) {
			p = strings.ToLower(strings.TrimSpace(p))
			switch {
			case ValidPermission(p) != nil:
			case p == "*":
				ru.all = true
			case strings.HasSuffix(p, ".*"):
				ru.prefixes = append(ru.prefixes, strings.TrimSuffix(p, "*"))
			default:
				ru.exact[p] = true
			}
		}
		for _, m := range slices.Concat(f.Members, s.Members) {
			if nm, err := NormalizeMember(m); err == nil {
				ru.members[nm] = true
			}
		}
		for p := range ru.exact {
			r.byPerm[p] = append(r.byPerm[p], len(r.groups))
		}
		if ru.all || len(ru.prefixes) > 0 {
			r.wide = append(r.wide, len(r.groups))
		}
		r.groups = append(r.groups, ru)
	}
	return r
}

// member reports whether p is in ru (everyone is in default; the others need
// a trusted identity).
func (ru *rule) member(p Player) bool {
	if ru.everyone {
		return true
	}
	if !p.Trusted {
		return false
	}
	return ru.members[p.Name] || (p.UUID != "" && ru.members[p.UUID])
}

// lower is p with the name and UUID as members are stored.
func (p Player) lower() Player {
	p.Name, p.UUID = strings.ToLower(p.Name), strings.ToLower(p.UUID)
	return p
}

func (ru *rule) on(server string) bool {
	return len(ru.servers) == 0 || slices.Contains(ru.servers, server)
}

func (ru *rule) grants(perm string) bool {
	if ru.all || ru.exact[perm] {
		return true
	}
	for _, pre := range ru.prefixes {
		if strings.HasPrefix(perm, pre) {
			return true
		}
	}
	return false
}

// Allows reports whether p, on server ("" between servers), has perm.
func (r *Rules) Allows(p Player, server, perm string) bool {
	if r == nil {
		return false
	}
	perm, p = strings.ToLower(perm), p.lower()
	for _, list := range [2][]int{r.byPerm[perm], r.wide} {
		for _, i := range list {
			if g := &r.groups[i]; g.grants(perm) && g.on(server) && g.member(p) {
				return true
			}
		}
	}
	return false
}

// Admin reports whether p has every permission wherever he is.
func (r *Rules) Admin(p Player) bool {
	if r == nil {
		return false
	}
	p = p.lower()
	for i := range r.groups {
		g := &r.groups[i]
		if g.all && len(g.servers) == 0 && g.member(p) && !g.everyone {
			return true
		}
	}
	return false
}

// GroupsOf lists the groups p is in on server (default included).
func (r *Rules) GroupsOf(p Player, server string) []string {
	var out []string
	if r == nil {
		return out
	}
	p = p.lower()
	for i := range r.groups {
		if g := &r.groups[i]; g.on(server) && g.member(p) {
			out = append(out, g.name)
		}
	}
	return out
}

// FileGroups are the groups of [permissions] as they apply: the groups
// table, with [permissions] admins as members of "admins", and, when the
// file has no default group, player_commands as the default's permissions.
func FileGroups(p config.Permissions) map[string]Group {
	out := make(map[string]Group, len(p.Groups)+2)
	for n, g := range p.Groups {
		out[n] = cloneGroup(g)
	}
	if len(p.Admins) > 0 {
		g := out[Admins]
		g.Members = append(g.Members, p.Admins...)
		out[Admins] = g
	}
	if _, ok := p.Groups[Default]; !ok {
		g := Group{}
		for _, c := range p.PlayerCommands {
			g.Permissions = append(g.Permissions, CommandPrefix+strings.ToLower(c))
		}
		out[Default] = g
	}
	return out
}
