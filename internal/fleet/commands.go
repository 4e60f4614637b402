package fleet

import "context"

// In-game commands across the fleet: /find and /glist read the players the
// other proxies published; a /send or /kick of a player on another proxy is
// published for that proxy to carry out (KindCommand, never stored, never
// waited for: the player is told it was asked).

// Command asks proxy to, for action "send", move player to arg's server, or,
// for "kick", disconnect them with arg. It never blocks.
func (f *Fleet) Command(proxy, action, player, arg string) {
	e := Entry{Kind: KindCommand, Player: player, To: proxy, Action: action, Arg: arg}
	select {
	case f.claims <- e:
	default:
		f.log.Warn("fleet: a command for another proxy was dropped (too many at once)", "to", proxy, "action", action, "player", player)
	}
}

// onCommand carries out a command meant for this proxy.
func (f *Fleet) onCommand(e Entry) {
	if e.To != f.id {
		return
	}
	if err := f.opts.Local.RunCommand(e.Action, e.Player, e.Arg, e.V.Proxy); err != nil {
		f.log.Info("fleet command not carried out", "change", e.describe(), "from", e.V.Proxy, "err", err)
		return
	}
	f.log.Info("fleet command carried out", "change", e.describe(), "from", e.V.Proxy)
}

// RemotePlayers lists the players of the other live proxies (Redis: commands
// only, never the login path).
func (f *Fleet) RemotePlayers(ctx context.Context) ([]Player, error) {
	all, err := f.Players(ctx, "")
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, p := range all {
		if p.Proxy != f.id {
			out = append(out, p)
		}
	}
	return out, nil
}
