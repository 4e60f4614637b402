package proxy

import (
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
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
// server needs one, or takes it as given (INFRARUST_FORWARDING_SECRET); a
// missing-and-uncreatable or empty file is an error, never a silent "none".
func (in *interception) loadSecret(given, path string) (created bool, err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.secret != nil {
		return false, nil
	}
	secret := []byte(given)
	if given == "" {
		if secret, created, err = forwarding.LoadOrCreateSecret(path); err != nil {
			return false, err
		}
	}
	v, err := forwarding.NewVelocity(secret)
	if err != nil {
		return false, err
	}
	in.secret, in.velocity = secret, v
	return created, nil
}

func (in *interception) forwardingSecret() ([]byte, *forwarding.Velocity) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.secret, in.velocity
}

// prepareForwarding loads the secret when a server of cfg needs one.
func (p *Proxy) prepareForwarding(cfg *config.Config) error {
	if !cfg.NeedsForwardingSecret() {
		return nil
	}
	path := cfg.Forwarding.SecretFile
	if path == "" { // a configuration not from config.Load (tests, embedding)
		path = filepath.Join(cfg.Web.DataDir, config.DefaultSecretName)
	}
	created, err := p.icpt.loadSecret(cfg.Forwarding.Secret, path)
	if err != nil {
		return fmt.Errorf("forwarding needs its secret: %w (set [forwarding] secret_file to a readable file, make %s writable, or set %s or %s_FILE)",
			err, filepath.Dir(path), config.ForwardingSecretEnv, config.ForwardingSecretEnv)
	}
	if created {
		p.log.Warn("created the forwarding secret; copy it to your backends (Paper: proxies.velocity.secret in config/paper-global.yml; BungeeGuard: allowed-tokens)", "file", path)
	}
	return nil
}

// intercepted is the handler of offline and client_only servers: the proxy
// finishes the player's login itself (authenticating with Mojang for
// client_only), then logs in to a backend it picks with the player's identity
// forwarded, and relays frames between the two.
type intercepted struct{}

func (intercepted) serveLogin(p *Proxy, cn *conn) {
	srv, cfg := cn.srv, cn.st.cfg
	if cn.legacy != notLegacy {
		p.refused(cn, refuse("protocol", "legacy login for intercepted server "+srv.id, "This server needs Minecraft 1.7.2 or newer"))
		return
	}
	proto := mc.Protocol(cn.protocol)
	reg, ok := mc.RegistryFor(proto)
	if !ok {
		oldest, newest := mc.OldestProtocol.Names(), mc.NewestProtocol.Names()
		p.refused(cn, refuse("protocol", fmt.Sprintf("protocol %d", cn.protocol),
			fmt.Sprintf("This server supports Minecraft %s to %s", oldest[0], newest[len(newest)-1])))
		return
	}
	fwd := cfg.EffectiveForwarding(srv.cfg)
	if fwd == forwarding.ModeVelocity {
		if err := forwarding.CheckVelocityClient(cn.protocol); err != nil {
			p.refused(cn, refuse("protocol", err.Error(), forwarding.KickVelocityTooOld))
			return
		}
	}
	client := &session.Client{
		Conn: frameConn(cn.br, cn.c, p.icpt.zlib), Registry: reg, Protocol: proto,
		Start: cn.login, Addr: cn.ip, State: mc.LoginState,
	}
	client.Conn.SetReadLimit(mc.MaxFrameSize)
	end := func(o metrics.LoginOutcome, reason, detail, text string) {
		p.loginOutcome(cn, o)
		p.rejected.Add(1)
		p.met.ConnRejected(reason)
		p.loginFailed(cn, reason, detail)
		_ = cn.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_ = client.Kick(text)
	}

	// The player's login: each client read gets the handshake budget again.
	_ = cn.c.SetReadDeadline(time.Now().Add(cfg.HandshakeTimeout.D()))
	profile := session.OfflineProfile(cn.player)
	if srv.cfg.ProxyMode == config.ModeClientOnly {
		keys, err := p.icpt.keyPair()
		if err != nil {
			end(metrics.LoginFailed, "auth", "no RSA key: "+err.Error(), auth.KickServersDown)
			return
		}
		a := session.Authenticator{Keys: keys, Sessions: p.icpt.sessions, SendIP: p.icpt.sendIP}
		endSpan := cn.ev.trace.Auth()
		profile, err = a.Authenticate(cn.ev.ctx, client)
		endSpan(err)
		if err != nil {
			end(metrics.LoginFailed, "auth", err.Error(), auth.KickMessage(err))
			return
		}
	} else {
		proof, premium, kick, err := p.provePremium(cn, client, srv)
		if err != nil {
			end(metrics.LoginFailed, "auth", "premium name: "+err.Error(), kick)
			return
		}
		if proof == provenPremium {
			profile, cn.premium = premium, true
		}
	}
	// Handlers may change the profile; bans and the backends see the final one.
	if p.opts.Hooks.Wants(hooks.KindGameProfileRequest) {
		gpr := hooks.GameProfileRequest{Connection: cn.ev.conn, Server: srv.id, Profile: hooks.ProfileFromAuth(profile), OnlineMode: srv.cfg.ProxyMode == config.ModeClientOnly || cn.premium}
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
		return
	}
	// Whether the name is proven yet on a password server decides what its
	// claim may do (an impostor must not replace the real player's session).
	if err := p.checkRemembered(cn, srv); err != nil {
		end(metrics.LoginFailed, "auth", "auth limbo: "+err.Error(), err.Error())
		return
	}
	// One player, one session: by the final identity, before any backend sees it.
	if err := p.claimIdentity(cn); err != nil {
		end(metrics.LoginFailed, "duplicate", err.Error(), kickAlreadyOnline)
		return
	}
	target, text, ok := p.acceptLogin(cn, interceptedFamily)
	if !ok {
		end(metrics.LoginFailed, "hook", "Login denied", text)
		return
	}
	if err := client.FinishLogin(profile, cfg.CompressionThreshold); err != nil {
		p.log.Debug("client login did not finish", "player", profile.Name, "client", cn.client, "err", err)
		return
	}
	// From here on the client is in the configuration or play state; kicks are
	// written for that state. Its Login Acknowledged is read once the backend's
	// login is done (both answers come during one wait).
	pl := newPlayer(cn, p.now())
	var first *session.Backend
	var stay *session.Stay // the player waits in the limbo first
	for round := 0; ; round++ {
		if target, text, ok = p.preConnect(cn, target, "", interceptedFamily); !ok {
			end(metrics.LoginFailed, "hook", "ServerPreConnect denied", text)
			return
		}
		cn.srv = target
		// Verification and the password login come before everything else of
		// the server: no rule, wake or queue lets in a bot or a player who has
		// not proved their name.
		login, err := p.gateStay(cn, pl, target)
		if err != nil {
			end(metrics.LoginFailed, "gate", "limbo gate: "+err.Error(), err.Error())
			return
		}
		if login != nil {
			stay = login
			break
		}
		if r := p.admitTo(cn.entrant(), target, pass{}); r != nil {
			if stay = p.refusedStay(cn, target, r); stay != nil {
				break
			}
			end(refusalOutcome(r), r.rule, "refused by "+target.id, r.text)
			return
		}
		if stay = p.loginStay(cn, target); stay != nil {
			break
		}
		o, cause, msg, err := p.interceptedConnect(cn, &first)
		if err == nil {
			break
		}
		var full *fullError
		if errors.As(err, &full) && target.cfg.HasLimbo(config.LimboQueue) && limboCovers(cn.protocol) {
			stay = p.queueStay(cn, target)
			break
		}
		next, kickText := p.kickedFrom(cn, cn.srv, cause, msg, interceptedFamily)
		if next == nil || round >= maxRedirects {
			end(o, "backend", err.Error(), kickText)
			return
		}
		target = next
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
	pl.mu.Lock()
	pl.srv, pl.mode = cn.srv, cn.srv.cfg.ProxyMode
	pl.mu.Unlock()
	address := "limbo"
	if first != nil {
		address = first.Address
		p.connected(cn, cn.srv, first.Address, "")
	}
	_ = cn.c.SetDeadline(time.Time{})
	setKeepalive(cn.c, cfg.Keepalive)
	// The client's reader now belongs to its mc.Conn for the session's life: lent
	// out while the player sends nothing, given back when the session is over.
	cn.br = nil
	lendBuffers(client.Conn, cn.c)
	// The PermissionsSetup event comes for every player, commands or not.
	perm := p.permissionsFor(pl)
	policy := cn.st.policy
	if policy.Filter != nil {
		pl.cmds = p.newPlayerCommands(pl, perm)
	}
	pl.sess = session.New(client, cn.c, policy, pl)
	cn.claim.bind(pl.disconnect) // a newer login of this player meanwhile ends it at once
	// The session owns the connection from here and finishes it: while the
	// player and the server are silent it holds no goroutine (session.Start).
	leave := p.welcome(cn, pl, address)
	cn.detached = true
	done := func(up, down int64) {
		p.ending(func() {
			client.Conn.Release()
			leave(up, down)
			p.finish(cn)
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

// interceptedConnect wakes cn.srv and logs the player in to one of its
// addresses. On failure it says how the login ended, the event's cause and the
// text the player would read.
func (p *Proxy) interceptedConnect(cn *conn, first **session.Backend) (metrics.LoginOutcome, string, string, error) {
	if err := p.wake(cn); err != nil {
		return metrics.LoginServerStarting, hooks.CauseStartFailed, err.Error(), err
	}
	b, outcome, err := p.joinBackend(cn, cn.srv, &cn.lease, nil, true)
	switch {
	case errors.Is(err, errVelocityTooOld):
		return metrics.LoginFailed, hooks.CauseUnreachable, forwarding.KickVelocityTooOld, err
	case err != nil:
		o, msg := noBackend(cn.srv, err)
		return o, hooks.CauseUnreachable, msg, err
	case outcome.Kick != "":
		// The backend took the connection and refused the player (whitelist, a ban
		// of its own): the player reads its words; the address is healthy.
		return metrics.LoginBackendRefused, hooks.CauseKicked, outcome.Kick, errors.New("refused by the backend: " + outcome.Kick)
	}
	*first = b
	return "", "", "", nil
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
func (p *Proxy) joinBackend(cn *conn, srv *server, lease *balance.Lease, avoid []string, ackLater bool) (*session.Backend, session.Outcome, error) {
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
func (p *Proxy) backendHandshake(cn *conn, srv *server, fwd forwarding.Mode) mc.Handshake {
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
