package proxy

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/forwarding"
	"github.com/infrarust-go/infrarust/internal/hooks"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/metrics"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
	"github.com/infrarust-go/infrarust/internal/session"
)

// interception is what the intercepted modes share across connections: the
// zlib pools, the session server client, the proxy's RSA key (made on first use,
// so a proxy with only passthrough servers never pays for it) and the forwarding
// secret.
type interception struct {
	zlib     *mc.Zlib
	sessions *auth.SessionClient
	sendIP   bool

	keysOnce sync.Once
	keys     *auth.KeyPair
	keysErr  error

	mu       sync.Mutex // guards the secret, loaded when the first server needs it
	secret   []byte
	velocity *forwarding.Velocity
}

func newInterception(cfg *config.Config, dial func(ctx context.Context, network, address string) (net.Conn, error)) (*interception, error) {
	// BestSpeed: the proxy only deflates what it re-frames (a threshold differs
	// between the two sides) and its own packets; CPU matters more than bytes here.
	z, err := mc.NewZlib(zlib.BestSpeed)
	if err != nil {
		return nil, err
	}
	sc, err := auth.NewSessionClient(auth.SessionConfig{BaseURL: cfg.Auth.SessionServer, Timeout: cfg.Auth.Timeout.D(), Dial: dial})
	if err != nil {
		return nil, fmt.Errorf("[auth] session_server: %w", err)
	}
	return &interception{zlib: z, sessions: sc, sendIP: cfg.Auth.PreventProxyConnections}, nil
}

func (in *interception) keyPair() (*auth.KeyPair, error) {
	in.keysOnce.Do(func() { in.keys, in.keysErr = auth.GenerateKeyPair() })
	return in.keys, in.keysErr
}

// loadSecret reads (or creates, 0600) the forwarding secret the first time a
// configuration needs it, and reads it again at every reload, so a rotated
// secret (a new file, a new INFRARUST_FORWARDING_SECRET_FILE content) applies
// to the next logins; once there is a secret, a file that went away keeps it
// rather than making a new one the backends do not know.
func (in *interception) loadSecret(given, path string) (created, changed bool, err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	secret := []byte(given)
	switch {
	case given != "":
	case in.secret != nil:
		if secret, err = forwarding.ReadSecret(path); err != nil {
			return false, false, err
		}
	default:
		if secret, created, err = forwarding.LoadOrCreateSecret(path); err != nil {
			return false, false, err
		}
	}
	if in.secret != nil && bytes.Equal(in.secret, secret) {
		return false, false, nil
	}
	v, err := forwarding.NewVelocity(secret)
	if err != nil {
		return false, false, err
	}
	changed = in.secret != nil
	in.secret, in.velocity = secret, v
	return created, changed, nil
}

func (in *interception) forwardingSecret() ([]byte, *forwarding.Velocity) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.secret, in.velocity
}

// prepareForwarding loads the secret when a server of cfg needs one.
func (p *moves) prepareForwarding(cfg *config.Config) error {
	if !cfg.NeedsForwardingSecret() {
		return nil
	}
	path := cfg.Forwarding.SecretFile
	if path == "" { // a configuration not from config.Load (tests, embedding)
		path = filepath.Join(cfg.Web.DataDir, config.DefaultSecretName)
	}
	created, changed, err := p.icpt.loadSecret(cfg.Forwarding.Secret, path)
	if err != nil {
		return fmt.Errorf("forwarding needs its secret: %w (set [forwarding] secret_file to a readable file, make %s writable, or set %s or %s_FILE)",
			err, filepath.Dir(path), config.ForwardingSecretEnv, config.ForwardingSecretEnv)
	}
	if created {
		p.log.Warn("created the forwarding secret; copy it to your backends (Paper: proxies.velocity.secret in config/paper-global.yml; BungeeGuard: allowed-tokens)", "file", path)
	}
	if changed {
		p.log.Info("the forwarding secret changed; the next logins carry the new one", "file", path)
	}
	return nil
}

// intercepted is the handler of offline and client_only servers: the proxy
// finishes the player's login itself (authenticating with Mojang for
// client_only), then logs in to a backend it picks with the player's identity
// forwarded, and relays frames between the two.
type intercepted struct{}

func (intercepted) serveLogin(p *moves, cn *conn) {
	client, end, ok := p.loginClient(cn)
	if !ok {
		return
	}
	profile, ok := p.settleProfile(cn, client, end)
	if !ok {
		return
	}
	target, text, ok := p.players.acceptLogin(cn, interceptedFamily)
	if !ok {
		end(metrics.LoginFailed, "hook", "Login denied", text)
		return
	}
	cfg := cn.st.cfg
	if err := client.FinishLogin(profile, cfg.CompressionThreshold); err != nil {
		p.log.Debug("client login did not finish", "player", profile.Name, "client", cn.client, "err", err)
		return
	}
	// From here on the client is in the configuration or play state; kicks are
	// written for that state. Its Login Acknowledged is read once the backend's
	// login is done (both answers come during one wait).
	pl := newPlayer(cn, p.now())
	var first *session.Backend
	var stay *session.Stay
	down, ok := p.loginRounds(cn, target, loginMode{fam: interceptedFamily, holds: true, end: end,
		try: func(t *server) error {
			// The route (enter): its ServerPreConnect, requirements (the bot
			// check, the password login), rules, wake and backends decide, or
			// give the limbo stay he waits in first.
			b, st, err := p.enter(cn, nil, Move{who: pl, to: t, why: whyLogin}, true)
			first, stay = b, st
			return err
		}})
	if !ok {
		return
	}
	if down != nil {
		stay = down // a handler holds him in the limbo
	}
	_ = cn.c.SetReadDeadline(time.Now().Add(cfg.HandshakeTimeout.D())) // a wake may have taken long
	if err := client.Acknowledged(); err != nil {
		p.log.Debug("client login did not finish", "player", profile.Name, "client", cn.client, "err", err)
		if first != nil {
			first.Net.Close()
			first.Release()
		}
		return
	}
	// The backend's Login Acknowledged waits in its write batch (ackLater) for
	// the client's first configuration packets, which the session relays at
	// once when they are here already; when they are not, it goes alone now.
	if first != nil && !client.Conn.FrameBuffered() {
		if err := first.Conn.Flush(); err != nil {
			first.Net.Close() // the session's backend pump reports the loss
		}
	}
	p.startSession(cn, client, pl, first, stay)
}

// endLogin ends a login the proxy was finishing itself: counted, logged, and
// the client told text in its login state.
type endLogin = func(o metrics.LoginOutcome, reason, detail, text string)

// loginClient is the player's side of an intercepted login, once his version
// is one the proxy speaks (and, for velocity forwarding, one it can forward),
// with the end that tells him why his login failed.
func (p *moves) loginClient(cn *conn) (*session.Client, endLogin, bool) {
	srv, cfg := cn.srv, cn.st.cfg
	if cn.legacy != notLegacy {
		p.door.refused(cn, refuse("protocol", "legacy login for intercepted server "+srv.id, "This server needs Minecraft 1.7.2 or newer"))
		return nil, nil, false
	}
	proto := mc.Protocol(cn.protocol)
	reg, ok := mc.RegistryFor(proto)
	if !ok {
		oldest, newest := mc.OldestProtocol.Names(), mc.NewestProtocol.Names()
		p.door.refused(cn, refuse("protocol", fmt.Sprintf("protocol %d", cn.protocol),
			fmt.Sprintf("This server supports Minecraft %s to %s", oldest[0], newest[len(newest)-1])))
		return nil, nil, false
	}
	fwd := cfg.EffectiveForwarding(srv.cfg)
	if fwd == forwarding.ModeVelocity {
		if err := forwarding.CheckVelocityClient(cn.protocol); err != nil {
			p.door.refused(cn, refuse("protocol", err.Error(), forwarding.KickVelocityTooOld))
			return nil, nil, false
		}
	}
	client := &session.Client{
		Conn: frameConn(cn.br, cn.c, p.icpt.zlib), Registry: reg, Protocol: proto,
		Start: cn.login, Addr: cn.ip, State: mc.LoginState,
	}
	client.Conn.SetReadLimit(mc.MaxFrameSize)
	end := func(o metrics.LoginOutcome, reason, detail, text string) {
		p.door.loginOutcome(cn, o)
		p.door.rejected.Add(1)
		p.met.ConnRejected(reason)
		p.door.loginFailed(cn, reason, detail)
		_ = cn.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_ = client.Kick(text)
	}

	return client, end, true
}

// settleProfile finishes who the player is: authenticated with Mojang
// (client_only) or proven premium, changed by the GameProfileRequest
// handlers, held to the server's hard rules and to one session per player.
// false: the login ended (end told him why).
func (p *moves) settleProfile(cn *conn, client *session.Client, end endLogin) (auth.Profile, bool) {
	srv, cfg := cn.srv, cn.st.cfg
	// The player's login: each client read gets the handshake budget again.
	_ = cn.c.SetReadDeadline(time.Now().Add(cfg.HandshakeTimeout.D()))
	profile := session.OfflineProfile(cn.player)
	if srv.cfg.ProxyMode == config.ModeClientOnly {
		keys, err := p.icpt.keyPair()
		if err != nil {
			end(metrics.LoginFailed, "auth", "no RSA key: "+err.Error(), auth.KickServersDown)
			return auth.Profile{}, false
		}
		a := session.Authenticator{Keys: keys, Sessions: p.icpt.sessions, SendIP: p.icpt.sendIP}
		endSpan := cn.ev.trace.Auth()
		profile, err = a.Authenticate(cn.ev.ctx, client)
		endSpan(err)
		if err != nil {
			end(metrics.LoginFailed, "auth", err.Error(), auth.KickMessage(err))
			return auth.Profile{}, false
		}
		cn.proof.mojang = true
	} else {
		proof, premium, kick, err := p.checks.provePremium(cn, client, srv)
		if err != nil {
			end(metrics.LoginFailed, "auth", "premium name: "+err.Error(), kick)
			return auth.Profile{}, false
		}
		if proof == provenPremium {
			profile, cn.proof.mojang = premium, true
		}
	}
	// Handlers may change the profile; bans and the backends see the final one.
	if p.opts.Hooks.Wants(hooks.KindGameProfileRequest) {
		gpr := hooks.GameProfileRequest{Connection: cn.ev.conn, Server: srv.id, Profile: hooks.ProfileFromAuth(profile), OnlineMode: cn.proof.mojang}
		hooks.Fire(p.opts.Hooks, cn.ev.ctx, &gpr)
		if changed, err := gpr.Profile.Auth(); err == nil {
			profile = changed
		}
	}
	cn.player, cn.uuid, cn.profile = profile.Name, profile.ID.String(), profile
	cn.ev.trace.SetPlayer(profile.Name, cn.uuid)
	// The server's hard rules by the final profile, while the client can still be
	// told in its login state; the soft ones (maintenance, capacity) may hold it
	// in the limbo below.
	if r := p.admitTo(cn.entrant(), srv, pass{}); r != nil && r.hard() {
		end(refusalOutcome(r), r.rule, "refused by "+srv.id+": "+cn.player, r.text)
		return auth.Profile{}, false
	}
	// Whether the name is proven yet on a password server decides what its
	// claim may do (an impostor must not replace the real player's session).
	if err := p.checks.checkRemembered(cn, srv); err != nil {
		end(metrics.LoginFailed, "auth", "auth limbo: "+err.Error(), err.Error())
		return auth.Profile{}, false
	}
	// One player, one session: by the final identity, weighed by what the login
	// proved, before any backend sees it. A login that owes a /login claims
	// once it has logged in (strengthen), with what it proved then.
	if !cn.owes {
		if err := p.players.claimIdentity(cn); err != nil {
			end(metrics.LoginFailed, "duplicate", err.Error(), kickAlreadyOnline)
			return auth.Profile{}, false
		}
	}
	return profile, true
}

// startSession hands the logged-in player to his session: on first, or held
// in stay first. The session owns the connection from here and finishes it.
func (p *moves) startSession(cn *conn, client *session.Client, pl *onlinePlayer, first *session.Backend, stay *session.Stay) {
	cfg := cn.st.cfg
	pl.mu.Lock()
	pl.srv, pl.mode, pl.landed = cn.srv, cn.srv.cfg.ProxyMode, first != nil
	pl.mu.Unlock()
	address := "limbo"
	if first != nil {
		address = first.Address
		p.players.connected(cn, cn.srv, first.Address, "")
	}
	_ = cn.c.SetDeadline(time.Time{})
	setKeepalive(cn.c, cfg.Keepalive)
	// The client's reader now belongs to its mc.Conn for the session's life: lent
	// out while the player sends nothing, given back when the session is over.
	cn.br = nil
	lendBuffers(client.Conn, cn.c)
	// The PermissionsSetup event comes for every player, commands or not.
	perm := p.cmds.permissionsFor(pl)
	policy := cn.st.policy
	if policy.Filter != nil {
		pl.cmds = p.cmds.newPlayerCommands(pl, perm)
	}
	pl.sess = session.New(client, cn.c, policy, pl)
	cn.claim.bind(pl.disconnect) // a newer login of this player meanwhile ends it at once
	// The session owns the connection from here and finishes it: while the
	// player and the server are silent it holds no goroutine (session.Start).
	leave := p.players.welcome(cn, pl, address)
	cn.detached = true
	done := func(up, down int64) {
		p.door.ending(func() {
			client.Conn.Release()
			leave(up, down)
			p.door.finish(cn)
		})
	}
	// A limbo stay holds its goroutine, and so does a socket that cannot park:
	// those start on a fresh goroutine, so the stack the login grew is freed now.
	switch {
	case stay != nil:
		go pl.sess.StartInLimbo(*stay, done)
	case !parks(cn.c):
		go pl.sess.Start(first, done)
	default:
		// A socket that parks holds this goroutine only until the relay's first
		// park, and the goroutine ends there, its stack with it; a fresh one
		// would cost a start and, with a core idle, a thread woken to run it.
		pl.sess.Start(first, done)
	}
}

// tryNext is Velocity's "try" for a login: the next of tries (the routed
// server's fallback_servers) in routed's network that has not failed it, or
// nil. A backend's kick matching fallback_skip_kicks ends the login instead.
func tryNext(routed *server, fam family, tries *[]*server, failed []*server, err error) *server {
	if br, ok := errors.AsType[*backendRefused](err); ok && matchesAny(br.kick, lowerAll(routed.cfg.FallbackSkipKicks)) {
		return nil
	}
	for len(*tries) > 0 {
		t := (*tries)[0]
		*tries = (*tries)[1:]
		if t.cfg.Network == routed.cfg.Network && fam(t) && !slices.Contains(failed, t) {
			return t
		}
	}
	return nil
}

// loginFailure is how a login that found no backend on its server is counted,
// and the KickedFromServer cause its handlers see.
func loginFailure(err error) (metrics.LoginOutcome, string) {
	var (
		wf *wakeFailed
		br *backendRefused
		fe *fullError
	)
	switch {
	case errors.As(err, &wf):
		return metrics.LoginServerStarting, hooks.CauseStartFailed
	case errors.As(err, &br):
		return metrics.LoginBackendRefused, hooks.CauseKicked
	case errors.As(err, &fe):
		return metrics.LoginBackendRefused, hooks.CauseUnreachable
	case errors.Is(err, errVelocityTooOld):
		return metrics.LoginFailed, hooks.CauseUnreachable
	}
	return metrics.LoginNoBackend, hooks.CauseUnreachable
}

// errVelocityTooOld: the target server forwards with velocity and the client is
// older than 1.13.
var errVelocityTooOld = errors.New("velocity forwarding needs a 1.13+ client")

// joinBackend logs the player of cn in to one of srv's addresses (never those in
// avoid), with srv's forwarding, under lease. The backend it returns is in its
// configuration state (1.20.2+) or in play, ready for the session; an Outcome
// with a Kick means the backend refused the player by name (the connection is
// closed and the lease released then). With ackLater the backend's Login
// Acknowledged waits in its write batch for the caller's first write or Flush
// (session.BackendLogin.AckLater).
func (p *moves) joinBackend(cn *conn, srv *server, lease *balance.Lease, avoid []string, ackLater bool) (*session.Backend, session.Outcome, error) {
	fwd := cn.st.cfg.EffectiveForwarding(srv.cfg)
	if fwd == forwarding.ModeVelocity && forwarding.CheckVelocityClient(cn.protocol) != nil {
		return nil, session.Outcome{}, errVelocityTooOld
	}
	reg, _ := mc.RegistryFor(mc.Protocol(cn.protocol))
	login := session.BackendLogin{
		Registry:  reg,
		Handshake: p.backendHandshake(cn, srv, fwd),
		Player:    forwarding.Player{Addr: cn.ip, Profile: cn.profile},
		AckLater:  ackLater,
	}
	if fwd == forwarding.ModeVelocity {
		_, login.Velocity = p.icpt.forwardingSecret()
	}
	var conn *mc.Conn
	var outcome session.Outcome
	try := func(backend net.Conn, deadline time.Time) (string, error) {
		_ = backend.SetDeadline(deadline)
		if pre := preamble(srv, cn.client, backend); pre != nil {
			if _, err := backend.Write(pre); err != nil {
				return "", err
			}
		}
		// Never given back by anyone but its Conn: the backend's pump may still be
		// inside a read when the session leaves it. The Conn lends the buffer out
		// while the backend sends nothing and drops it to the collector at the end.
		conn = frameConn(mc.GetReader(backend), backend, p.icpt.zlib)
		lendBuffers(conn, backend)
		var err error
		if outcome, err = login.Run(conn); err != nil {
			return "", err
		}
		if outcome.Kick != "" && matchesAny(outcome.Kick, srv.full) {
			return outcome.Kick, nil
		}
		return "", nil
	}
	backend, err := p.connectTo(cn, srv, lease, avoid, try)
	if err != nil || outcome.Kick != "" {
		if err == nil {
			p.untrack(backend)
			backend.Close()
			lease.Release(p.now())
		}
		return nil, outcome, err
	}
	var once sync.Once
	return &session.Backend{
		Side:    session.Side{Conn: conn, Net: backend},
		Server:  srv.id,
		Address: lease.Address(),
		Release: func() {
			once.Do(func() {
				p.untrack(backend)
				backend.Close()
				lease.Release(p.now())
			})
		},
		Failed: func(reason string) { lease.Unresponsive(p.now(), reason) },
	}, outcome, nil
}

// backendHandshake is the handshake the backend receives: the client's protocol,
// the host per domain_rewrite (carrying the player's IP, UUID and skin for
// BungeeCord forwarding), and the login intent even for a transfer.
func (p *moves) backendHandshake(cn *conn, srv *server, fwd forwarding.Mode) mc.Handshake {
	profile := cn.profile
	host, port := backendHost(srv.cfg, cn.hs)
	hs := mc.Handshake{ProtocolVersion: cn.protocol, ServerAddress: host, ServerPort: port, NextState: mc.StateLogin}
	var h string
	var err error
	switch fwd {
	case forwarding.ModeBungeeCord:
		h, err = forwarding.BungeeCordHost(host, cn.ip, profile)
	case forwarding.ModeBungeeGuard:
		secret, _ := p.icpt.forwardingSecret()
		h, err = forwarding.BungeeGuardHost(host, cn.ip, profile, string(secret))
	default:
		return hs
	}
	if err != nil {
		// Only a profile too large for the field gets here; the backend then sees
		// no forwarding and refuses the player, which it reports in its own words.
		p.log.Warn("bungeecord forwarding field could not be built", "player", profile.Name, "err", err)
		return hs
	}
	hs.ServerAddress = h
	return hs
}
