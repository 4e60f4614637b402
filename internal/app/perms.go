package app

import (
	"context"
	"time"

	"github.com/infrarust-go/infrarust/internal/perms"
	"github.com/infrarust-go/infrarust/internal/proxy"
)

// The roles changed at run time (docs/commands.md#roles): in the fleet's
// Redis with [fleet], so every proxy shares them and a pod that goes takes
// nothing with it; in <data_dir>/permissions.json otherwise. A change made
// through this proxy's API applies here as soon as it is stored; one made
// through another proxy arrives by the store's Follow.

// appliedPerms is the store as the admin API sees it: a stored change is put
// in force on this proxy before the API answers.
type appliedPerms struct {
	perms.Store
	proxy *proxy.Proxy
}

func (s appliedPerms) Update(ctx context.Context, c perms.Change) (perms.Doc, bool, error) {
	d, changed, err := s.Store.Update(ctx, c)
	if err == nil && changed {
		s.proxy.SetStoredPermissions(d)
	}
	return d, changed, err
}

// openPermissions opens the store (the fleet's, or the file) and, for the
// file, puts it in force at once; the fleet's is followed once the fleet runs.
func (a *App) openPermissions() error {
	if a.fleet != nil {
		a.perms = a.fleet.PermissionStore()
		return nil
	}
	f, err := perms.OpenFile(a.cfg.Web.DataDir)
	if err != nil {
		return err
	}
	a.perms = f
	d, _ := f.Load(context.Background())
	a.proxy.SetStoredPermissions(d)
	return nil
}

// followPermissions keeps the fleet's stored roles in force until ctx ends,
// after putting this proxy's admins.json (from before groups) into them.
func (a *App) followPermissions(ctx context.Context) {
	r, ok := a.perms.(*perms.Redis)
	if !ok {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.importLegacyAdmins(ctx, r)
	}()
	r.Follow(ctx, a.proxy.SetStoredPermissions, func(err error) {
		a.fleet.RefusedPermissions(err)
	})
	<-done
}

// importLegacyAdmins adds the entries of <data_dir>/admins.json to the
// fleet's admins group once Redis takes them, then sets the file aside.
func (a *App) importLegacyAdmins(ctx context.Context, r *perms.Redis) {
	list, err := perms.LegacyAdmins(a.cfg.Web.DataDir)
	if err != nil {
		a.log.Warn("the admins of before roles were not imported", "err", err)
		return
	}
	for len(list) > 0 {
		var failed error
		for _, e := range list {
			c, err := (perms.Change{Op: perms.OpAdd, Group: perms.Admins, Value: e}).Check()
			if err != nil {
				continue
			}
			if d, _, err := r.Update(ctx, c); err != nil {
				failed = err
				break
			} else {
				a.proxy.SetStoredPermissions(d)
			}
		}
		if failed == nil {
			_ = perms.MarkLegacyImported(a.cfg.Web.DataDir)
			a.log.Info("the admins of admins.json are now the fleet's admins group", "count", len(list))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
}
