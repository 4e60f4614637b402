package perms

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Op is what a Change does.
type Op string

// The changes operators make at run time.
const (
	OpCreate Op = "create" // a group (with its servers)
	OpDelete Op = "delete" // a stored group
	OpGrant  Op = "grant"  // a permission to a group
	OpRevoke Op = "revoke"
	OpAdd    Op = "add" // a member to a group
	OpRemove Op = "remove"
)

// Change is one edit of the stored permissions.
type Change struct {
	Op    Op     `json:"op"`
	Group string `json:"group"`
	// Value is the permission (grant, revoke) or the player (add, remove).
	Value string `json:"value,omitempty"`
	// Servers limit a created group to those servers (none: everywhere).
	Servers []string `json:"servers,omitempty"`
}

// ErrNotStored is a removal of what the store does not hold (it may be in
// the file: Apply says so).
var ErrNotStored = errors.New("not stored")

// Check validates c and returns it in stored form.
func (c Change) Check() (Change, error) {
	c.Group = strings.ToLower(strings.TrimSpace(c.Group))
	if err := ValidGroupName(c.Group); err != nil {
		return c, err
	}
	switch c.Op {
	case OpGrant, OpRevoke:
		c.Value = strings.ToLower(strings.TrimSpace(c.Value))
		if err := ValidPermission(c.Value); err != nil {
			return c, err
		}
		if c.Group == Admins {
			return c, errors.New(`the admins group has every permission already`)
		}
	case OpAdd, OpRemove:
		v, err := NormalizeMember(c.Value)
		if err != nil {
			return c, err
		}
		c.Value = v
		if c.Group == Default {
			return c, errors.New("everyone is in the default group")
		}
	case OpCreate:
		for _, s := range c.Servers {
			if s == "" || len(s) > 64 || strings.ContainsAny(s, " \t\n/") {
				return c, fmt.Errorf("%q is not a server id", s)
			}
		}
		if (c.Group == Admins || c.Group == Default) && len(c.Servers) > 0 {
			return c, fmt.Errorf("the %s group applies everywhere", c.Group)
		}
	case OpDelete:
	default:
		return c, fmt.Errorf("unknown change %q (create, delete, grant, revoke, add, remove)", c.Op)
	}
	return c, nil
}

// Apply makes the change in d (which it may modify) and reports whether it
// changed anything; c must have passed Check.
func (d *Doc) Apply(c Change) (bool, error) {
	if d.Groups == nil {
		d.Groups = map[string]Group{}
	}
	g, ok := d.Groups[c.Group]
	switch c.Op {
	case OpCreate:
		if ok && slices.Equal(g.Servers, c.Servers) {
			return false, nil
		}
		g.Servers = slices.Clone(c.Servers)
	case OpDelete:
		if !ok {
			return false, fmt.Errorf("group %s: %w", c.Group, ErrNotStored)
		}
		delete(d.Groups, c.Group)
		return true, nil
	case OpGrant, OpAdd:
		list := &g.Permissions
		if c.Op == OpAdd {
			list = &g.Members
		}
		if slices.Contains(*list, c.Value) {
			return false, nil
		}
		*list = append(*list, c.Value)
		slices.Sort(*list)
	case OpRevoke, OpRemove:
		list := &g.Permissions
		if c.Op == OpRemove {
			list = &g.Members
		}
		i := slices.Index(*list, c.Value)
		if i < 0 {
			return false, fmt.Errorf("%s in group %s: %w", c.Value, c.Group, ErrNotStored)
		}
		*list = slices.Delete(*list, i, i+1)
	}
	d.Groups[c.Group] = g
	return true, nil
}
