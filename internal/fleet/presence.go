package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Heartbeats and players: every heartbeat_interval each proxy writes what changed
// in its players hash (one HSET per arrival, one HDEL per departure, batched in
// one pipeline), marks itself alive at Redis's time and reads the fleet view.
// Nothing here runs on a player's path.

// Player is one session as the fleet lists it; its JSON is the admin API's player
// with the proxy it is on.
type Player struct {
	Name       string    `json:"name"`
	UUID       string    `json:"uuid,omitempty"`
	Server     string    `json:"server"`
	Address    string    `json:"address"`
	ClientIP   string    `json:"client_ip"`
	Protocol   int32     `json:"protocol"`
	Version    string    `json:"version,omitempty"`
	ProxyMode  string    `json:"proxy_mode"`
	Since      time.Time `json:"since"`
	Switchable bool      `json:"switchable"`
	// Proxy is the fleet id of the proxy the player is connected through.
	Proxy string `json:"proxy"`
}

// sessionKey identifies a session in a players hash: a name may briefly have two
// sessions (a reconnect racing the old one's end).
func (p Player) sessionKey() string {
	return strings.ToLower(p.Name) + "|" + p.ClientIP + "|" + strconv.FormatInt(p.Since.UnixNano(), 36)
}

// playerPlace is what a player entry's seal is made for: its proxy's hash and
// its field there.
func playerPlace(proxy, field string) string { return "players:" + proxy + "|" + field }

// ProxyInfo is what a proxy says about itself at every heartbeat.
type ProxyInfo struct {
	ID        string    `json:"id"`
	Address   string    `json:"address"`
	Admin     string    `json:"admin,omitempty"`
	Version   string    `json:"version"`
	StartedAt time.Time `json:"started_at"`
	Players   int       `json:"players"`
	// Servers counts its players per server, for the fleet-wide counts.
	Servers map[string]int `json:"servers,omitempty"`
}

// ProxyStatus is one proxy in the fleet view.
type ProxyStatus struct {
	ProxyInfo
	// LastHeartbeat is when Redis last heard from it (Redis's clock).
	LastHeartbeat time.Time `json:"last_heartbeat"`
	// HeartbeatAgeSecs is how long ago that was, when the view was read.
	HeartbeatAgeSecs float64 `json:"heartbeat_age_secs"`
	// Live is false once heartbeat_timeout passed without a heartbeat: its players
	// are no longer counted, and it is forgotten an hour later.
	Live bool `json:"live"`
	// Self marks the proxy answering.
	Self bool `json:"self"`
}

// maxPlayersPerProxy bounds what is read from one proxy's hash, so a corrupt or
// foreign key cannot make the admin API build an unbounded answer.
const maxPlayersPerProxy = 200_000

// heartbeat publishes this proxy's players (what changed since the last one) and
// description, and marks it alive.
func (f *Fleet) heartbeat(ctx context.Context) error {
	local := f.opts.Local.Players()
	cur := make(map[string]string, len(local))
	counts := map[string]int{}
	for _, p := range local {
		p.Proxy = f.id
		b, _ := json.Marshal(p)
		k := p.sessionKey()
		cur[k] = f.seal.Seal(playerPlace(f.id, k), string(b))
		counts[p.Server]++
	}
	f.stMu.Lock()
	info := ProxyInfo{ID: f.id, Address: f.proxyAddr, Admin: f.adminAddr, Version: f.opts.Version,
		StartedAt: f.opts.StartedAt, Players: len(local), Servers: counts}
	f.stMu.Unlock()
	infoJSON, _ := json.Marshal(info)
	infoSealed := f.seal.Seal(f.k.proxy(f.id), string(infoJSON))
	pk := f.k.players(f.id)

	cctx, cancel := f.callCtx(ctx)
	defer cancel()
	pipe := f.rdb.Pipeline()
	var set []any
	for k, v := range cur {
		if f.published[k] != v {
			set = append(set, k, v)
		}
	}
	var gone []string
	for k := range f.published {
		if _, ok := cur[k]; !ok {
			gone = append(gone, k)
		}
	}
	if len(set) > 0 {
		pipe.HSet(cctx, pk, set...)
	}
	if len(gone) > 0 {
		pipe.HDel(cctx, pk, gone...)
	}
	hb := heartbeatScript.Eval(cctx, pipe, []string{f.k.proxies(), f.k.proxy(f.id), pk},
		f.id, infoSealed, f.cfg.HeartbeatTimeout.D().Milliseconds(), lostRetention.Milliseconds())
	if _, err := pipe.Exec(cctx); err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	f.published = cur
	res, err := hb.Int64Slice()
	if err != nil || len(res) != 2 {
		return fmt.Errorf("heartbeat: unexpected answer %v (%v)", hb.Val(), err)
	}
	if int(res[1]) == len(cur) {
		return nil
	}
	// The hash is not what this proxy wrote: Redis restarted or the hash expired
	// during an outage. Write it whole.
	tx := f.rdb.TxPipeline()
	tx.Del(cctx, pk)
	if len(cur) > 0 {
		all := make([]any, 0, 2*len(cur))
		for k, v := range cur {
			all = append(all, k, v)
		}
		tx.HSet(cctx, pk, all...)
		tx.PExpire(cctx, pk, f.cfg.HeartbeatTimeout.D())
	}
	if _, err := tx.Exec(cctx); err != nil {
		f.published = map[string]string{} // next heartbeat writes everything
		return fmt.Errorf("heartbeat: rewrite players: %w", err)
	}
	return nil
}

// refreshView reads every proxy's last heartbeat and description, and the
// per-server player counts of the other live proxies.
func (f *Fleet) refreshView(ctx context.Context) error {
	cctx, cancel := f.callCtx(ctx)
	defer cancel()
	res, err := viewScript.Run(cctx, f.rdb, []string{f.k.proxies()}, lostRetention.Milliseconds()).Slice()
	if err != nil {
		return fmt.Errorf("fleet view: %w", err)
	}
	if len(res) != 2 {
		return fmt.Errorf("fleet view: unexpected answer %v", res)
	}
	nowMS, ok := res[0].(int64)
	pairs, ok2 := res[1].([]any)
	if !ok || !ok2 || len(pairs)%2 != 0 {
		return fmt.Errorf("fleet view: unexpected answer %v", res)
	}
	type seen struct {
		id string
		at int64
	}
	var list []seen
	for i := 0; i < len(pairs); i += 2 {
		id, _ := pairs[i].(string)
		score, _ := pairs[i+1].(string)
		at, err := strconv.ParseFloat(score, 64)
		if id == "" || err != nil {
			continue
		}
		if int64(at)-nowMS > maxFuture.Milliseconds() {
			// Redis stamps heartbeats with its own clock: one this far ahead was
			// written by something else, and would keep a proxy "live" for good.
			f.badEntry("heartbeat of "+id, fmt.Errorf("heartbeat %s ahead of Redis's clock", time.Duration(int64(at)-nowMS)*time.Millisecond))
			continue
		}
		list = append(list, seen{id, int64(at)})
	}
	infos := make([]any, len(list))
	if len(list) > 0 {
		names := make([]string, len(list))
		for i, s := range list {
			names[i] = f.k.proxy(s.id)
		}
		if infos, err = f.rdb.MGet(cctx, names...).Result(); err != nil {
			return fmt.Errorf("fleet view: %w", err)
		}
	}
	timeout := f.cfg.HeartbeatTimeout.D().Milliseconds()
	view := make([]ProxyStatus, 0, len(list))
	others := map[string]int{}
	for i, s := range list {
		st := ProxyStatus{ProxyInfo: ProxyInfo{ID: s.id}, LastHeartbeat: time.UnixMilli(s.at).UTC(),
			HeartbeatAgeSecs: float64(nowMS-s.at) / 1000, Live: nowMS-s.at <= timeout, Self: s.id == f.id}
		// A member is a heartbeat with a description signed by the fleet's
		// secret: an id that only heartbeats is listed, never trusted. A
		// description that is gone (expired) is no forgery: not counted.
		raw, _ := infos[i].(string)
		described := false
		if raw != "" && len(raw) <= maxEntryBytes {
			if v, ok := f.opened(f.k.proxy(s.id), f.k.proxy(s.id), raw); ok {
				var info ProxyInfo
				if json.Unmarshal([]byte(v), &info) == nil && info.ID == s.id {
					st.ProxyInfo, described = info, true
				}
			}
		}
		if f.seal.On() && !described {
			st.Live = false
		}
		if st.Live && !st.Self {
			for srv, n := range st.Servers {
				others[srv] += max(n, 0)
			}
		}
		view = append(view, st)
	}
	slices.SortFunc(view, func(a, b ProxyStatus) int { return strings.Compare(a.ID, b.ID) })
	f.stMu.Lock()
	f.view, f.viewAt = view, f.now()
	f.stMu.Unlock()
	f.others.Store(&others)
	return nil
}

// Status is the fleet as this proxy sees it, for GET /api/v1/fleet, `infrarust
// fleet status`, `top`'s header and the metrics.
type Status struct {
	ID    string `json:"id"`
	Redis string `json:"redis"` // the URL without its password
	// Connected says whether the last Redis call succeeded; Since is when that
	// last changed.
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since"`
	LastError string    `json:"last_error,omitempty"`
	// Pending counts changes made here that the fleet has not acknowledged.
	Pending int `json:"pending_changes"`
	// LiveProxies counts the live proxies, this one included.
	LiveProxies int `json:"live_proxies"`
	// Players counts the players on the live proxies (this one's as last published).
	Players int `json:"players"`
	// Proxies is every proxy heard from in the last hour, by id.
	Proxies []ProxyStatus `json:"proxies"`
	// ViewAt is when Proxies was read from Redis; old when Redis is unreachable.
	ViewAt time.Time `json:"view_at"`
}

// Status reads the fleet view this proxy holds; it never calls Redis.
func (f *Fleet) Status() Status {
	f.mu.Lock()
	pending := f.j.countPending()
	f.mu.Unlock()
	f.stMu.Lock()
	defer f.stMu.Unlock()
	st := Status{ID: f.id, Redis: f.url, Connected: f.connected, Since: f.since, LastError: f.lastErr,
		Pending: pending, Proxies: slices.Clone(f.view), ViewAt: f.viewAt}
	for _, p := range st.Proxies {
		if p.Live {
			st.LiveProxies++
			st.Players += p.Players
		}
	}
	if st.Proxies == nil {
		st.Proxies = []ProxyStatus{}
	}
	return st
}

func (f *Fleet) liveCount() int {
	f.stMu.Lock()
	defer f.stMu.Unlock()
	n := 0
	for _, p := range f.view {
		if p.Live {
			n++
		}
	}
	return n
}

// RemoteOnline is the number of players on server through the other live
// proxies, as of their last heartbeat. It reads memory only (no Redis call),
// for the status path.
func (f *Fleet) RemoteOnline(server string) int {
	return (*f.others.Load())[server]
}

// OnlineCount is the fleet-wide number of players on server: this proxy's own
// count now plus the other live proxies' as of their last heartbeat. It never
// calls Redis; with Redis unreachable the others' counts are the last known.
func (f *Fleet) OnlineCount(server string) int {
	local := 0
	if f.opts.LocalCount != nil {
		local = f.opts.LocalCount(server)
	} else {
		for _, p := range f.opts.Local.Players() {
			if p.Server == server {
				local++
			}
		}
	}
	return local + f.RemoteOnline(server)
}

// OtherPlayers is RemoteOnline under the name the server manager asks for it:
// players elsewhere in the fleet keep a server from its idle stop.
func (f *Fleet) OtherPlayers(server string) int { return f.RemoteOnline(server) }

// Players lists the players of the whole fleet (of one server, or "" for all):
// this proxy's as they are now, the other live proxies' as of their last
// heartbeat. It needs Redis: ErrUnreachable when it does not answer.
func (f *Fleet) Players(ctx context.Context, server string) ([]Player, error) {
	if down, why := f.down(); down {
		return nil, fmt.Errorf("%w: %s", ErrUnreachable, why)
	}
	var out []Player
	for _, p := range f.opts.Local.Players() {
		p.Proxy = f.id
		out = append(out, p)
	}
	f.stMu.Lock()
	var ids []string
	for _, p := range f.view {
		if p.Live && !p.Self {
			ids = append(ids, p.ID)
		}
	}
	f.stMu.Unlock()
	if len(ids) > 0 {
		cctx, cancel := f.callCtx(ctx)
		defer cancel()
		pipe := f.rdb.Pipeline()
		lens := make([]*redis.IntCmd, len(ids))
		for i, id := range ids {
			lens[i] = pipe.HLen(cctx, f.k.players(id))
		}
		if _, err := pipe.Exec(cctx); err != nil {
			return nil, fmt.Errorf("%w: %s", ErrUnreachable, f.explain(err))
		}
		pipe = f.rdb.Pipeline()
		hashes := make([]*redis.MapStringStringCmd, len(ids))
		for i, id := range ids {
			if lens[i].Val() <= maxPlayersPerProxy {
				hashes[i] = pipe.HGetAll(cctx, f.k.players(id))
			} else {
				f.log.Warn("a proxy's player list is too long to show; skipped", "proxy", id, "players", lens[i].Val())
			}
		}
		if _, err := pipe.Exec(cctx); err != nil && err != redis.Nil {
			return nil, fmt.Errorf("%w: %s", ErrUnreachable, f.explain(err))
		}
		for i, h := range hashes {
			if h == nil {
				continue
			}
			for _, k := range slices.Sorted(maps.Keys(h.Val())) {
				raw := h.Val()[k]
				if len(raw) > maxEntryBytes {
					continue
				}
				v, ok := f.opened(playerPlace(ids[i], k), f.k.players(ids[i])+" "+k, raw)
				var p Player
				if !ok || json.Unmarshal([]byte(v), &p) != nil {
					continue
				}
				p.Proxy = ids[i]
				out = append(out, p)
			}
		}
	}
	if server != "" {
		out = slices.DeleteFunc(out, func(p Player) bool { return p.Server != server })
	}
	slices.SortFunc(out, func(a, b Player) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), strings.Compare(a.Proxy, b.Proxy))
	})
	return out, nil
}
