package proxy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/accounts"
	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/command"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/proxy/ratelimit"
	"github.com/infrarust-go/infrarust/internal/session"
)

// The auth limbo (limbo_handlers = ["auth"], offline servers): a player whose
// name is not remembered from their address waits in the limbo until they
// /register or /login, and no backend sees them before. docs/offline-networks.md.

// authLookup bounds the store reads of a login (is the name registered,
// remembered); a store that does not answer refuses the login.
const authLookup = 3 * time.Second

// authRemind is how often the player is told again what to type.
const authRemind = 10 * time.Second

// errAuthUnavailable: the account store did not answer; no one gets in unchecked.
var errAuthUnavailable = errors.New("auth: the account store is unavailable")

// authService is the password login of cfg over store, keeping the hasher of
// old (its bound on concurrent hashes) while the argon2 settings stay the same,
// and its guard's counts while the store stays.
func authService(cfg config.AuthLimbo, store accounts.Store, old *accounts.Service, now func() time.Time) *accounts.Service {
	params := accounts.Params{MemoryKiB: uint32(cfg.Argon2.MemoryKiB), Iterations: uint32(cfg.Argon2.Iterations), Parallelism: uint8(cfg.Argon2.Parallelism)}
	h := (*accounts.Hasher)(nil)
	if old != nil && old.Hasher.Params == params && old.Store == store && cfg.Argon2.MaxConcurrent == old.Hasher.Concurrency() {
		h = old.Hasher
	} else {
		h = accounts.NewHasher(params, cfg.Argon2.MaxConcurrent)
	}
	var counter accounts.Counter
	if old != nil && old.Store == store {
		counter = old.Guard.Counter
	} else if shared, ok := store.(interface{ Counter() accounts.Counter }); ok {
		counter = shared.Counter() // the fleet's: every proxy counts the same guesses
	} else {
		counter = &accounts.MemoryCounter{Now: now, Max: guardKeysMax}
	}
	return &accounts.Service{
		Store: store, Hasher: h, Now: now,
		Rules: accounts.Rules{MinLength: cfg.MinPasswordLength, MaxLength: cfg.MaxPasswordLength, Remember: cfg.Remember.D()},
		Guard: &accounts.Guard{
			Counter: counter, MaxFailures: cfg.MaxAttemptsPerAccount, Window: cfg.AttemptWindow.D(),
			MaxRegistrations: cfg.MaxRegistrationsPerIP, RegistrationWindow: cfg.RegistrationWindow.D(),
		},
	}
}

// guardKeysMax bounds the guesses and registrations a proxy on its own
// tracks (a few hundred bytes each).
const guardKeysMax = 200_000

// buildAuth is the auth limbo's service of cfg: the store is opened the first
// time a configuration needs it and kept for the proxy's life.
func (p *checks) buildAuth(cfg *config.Config, old *state) (*accounts.Service, error) {
	p.accountsMu.Lock()
	defer p.accountsMu.Unlock()
	if p.accounts == nil {
		if !cfg.UsesAuthLimbo() {
			return nil, nil
		}
		if p.opts.OpenAccounts == nil {
			return nil, errors.New(`limbo_handlers "auth": this proxy has no account store`)
		}
		store, err := p.opts.OpenAccounts()
		if err != nil {
			return nil, fmt.Errorf(`limbo_handlers "auth": %w`, err)
		}
		p.accounts = store
	}
	var prev *accounts.Service
	if old != nil {
		prev = old.auth
	}
	return authService(cfg.AuthLimbo, p.accounts, prev, p.now), nil
}

// Accounts is the password login's service, nil when no server uses "auth".
func (p *Proxy) Accounts() *accounts.Service { return p.state.Load().auth }

// gateStay is the limbo stay a player owes target before anything else of
// it, on every way in (requirements): bot verification ("verify"), then the
// password login ("auth"); nil when neither applies. login says the player
// is logging in (it counts toward attack mode). An error refuses the entry
// with its text (the account store does not answer, too many checks run, the
// client's version cannot be held, a premium name Mojang has not vouched
// for): nobody reaches such a server unchecked.
func (p *checks) gateStay(cn *conn, target *server, login bool) (*session.Stay, error) {
	release, err := p.needsVerify(cn, target, login)
	if err != nil {
		return nil, err
	}
	verify := release != nil
	a, err := p.authWaitFor(cn, target)
	if err != nil || (!verify && a == nil) {
		if verify {
			release()
		}
		return nil, err
	}
	stay := &session.Stay{Handler: string(config.LimboAuth)}
	var check *limbo.FallCheck
	if verify {
		// Where the player falls from, and the teleport he confirms, are
		// drawn per attempt: a fall computed before the world arrives is wrong.
		height := verifyMinFall + rand.Float64()*(limbo.MaxFallHeight-verifyMinFall)
		teleport := 2 + rand.Int32N(1<<30)
		check = limbo.NewFallCheck(mc.Protocol(cn.protocol), limbo.FallOptions{Height: height, TeleportID: teleport})
		stay.Handler = string(config.LimboVerify)
		stay.World.Ground, stay.World.FallHeight, stay.World.TeleportID = true, height, teleport
		stay.Watch = &limbo.Watch{Types: check.Types(), Packet: check.Packet}
		stay.Done = release
	}
	if a != nil {
		stay.Commands = &limbo.Commands{Tree: authTree, Run: a.typed}
	}
	msgs := p.state.Load().cfg.Messages
	stay.Message = func() limbo.Message {
		if check != nil && errors.Is(check.Result(), limbo.ErrPending) {
			return title(msgs.VerifyTitle, msgs.VerifySubtitle)
		}
		if a != nil {
			return a.message()
		}
		return title(msgs.VerifyTitle, fill(msgs.AuthWaiting, "server", target.id))
	}
	stay.Until = func(ctx context.Context) (*session.Backend, error) {
		if check != nil {
			if err := p.runVerify(ctx, cn, check); err != nil {
				return nil, err
			}
		}
		if a != nil {
			if err := a.login(ctx); err != nil {
				return nil, err
			}
			if err := p.prove(cn, func(pr *proof) { pr.account = accounts.Key(cn.player) }); err != nil {
				return nil, errors.New(kickAlreadyOnline)
			}
		}
		return p.limbos.exitLimbo(cn, target, pass{}, true)
	}
	return stay, nil
}

// checkRemembered looks up, once per login, whether the name owes a /login
// on srv: remembered from this address it has proven its account; otherwise
// it owes one, and claims its identity only once it logged in.
func (p *checks) checkRemembered(cn *conn, srv *server) error {
	svc := p.state.Load().auth
	if cn.owes || svc == nil || !srv.cfg.HasLimbo(config.LimboAuth) || srv.cfg.ProxyMode != config.ModeOffline || cn.proven().owns(cn.player) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), authLookup)
	defer cancel()
	ok, err := svc.Remembered(ctx, cn.player, cn.ip.String())
	if err != nil {
		return p.authUnavailable(cn, err)
	}
	if !ok {
		cn.owes = true
		return nil
	}
	p.met.Auth("remembered")
	return p.prove(cn, func(pr *proof) { pr.account = accounts.Key(cn.player) })
}

// authUnavailable logs and counts a store that did not answer; its error is
// the text the player reads.
func (p *checks) authUnavailable(cn *conn, err error) error {
	p.log.Warn("auth: the account store did not answer", "player", cn.player, "err", err)
	p.met.Auth("unavailable")
	return errors.New(p.state.Load().cfg.Messages.AuthUnavailable)
}

// authWaitFor is the password login a player owes target: nil when target
// asks for none or the player proved the name (Mojang's word, the account's
// password in this session, or a login remembered from his address). A
// premium name Mojang has not vouched for cannot prove itself here and is
// refused (its owner joins through target's own address), unless this very
// login was let in as cracked by allow_cracked_retry.
func (p *checks) authWaitFor(cn *conn, target *server) (*authWait, error) {
	st := p.state.Load()
	if !target.cfg.HasLimbo(config.LimboAuth) || target.cfg.ProxyMode != config.ModeOffline || cn.proven().owns(cn.player) {
		return nil, nil
	}
	svc := st.auth
	msgs := st.cfg.Messages
	if svc == nil {
		return nil, errors.New(msgs.AuthUnavailable)
	}
	if !limboCovers(cn.protocol) {
		p.met.Auth("refused")
		return nil, errors.New("This server needs a login the proxy cannot show to your game version; use another version.")
	}
	ctx, cancel := context.WithTimeout(context.Background(), authLookup)
	defer cancel()
	if st.premium != nil && !cn.cracked {
		if premium, err := st.premium.IsPremium(ctx, cn.player); err == nil && premium {
			p.met.Auth("premium_refused")
			return nil, &refusal{target.id, ruleProof, fill(msgs.AuthPremiumRefused, "name", cn.player)}
		}
	}
	if err := p.checkRemembered(cn, target); err != nil {
		return nil, err
	}
	if cn.proven().owns(cn.player) {
		return nil, nil
	}
	registered, err := svc.Registered(ctx, cn.player)
	if err != nil {
		return nil, p.authUnavailable(cn, err)
	}
	return &authWait{p: p, cn: cn, target: target, svc: svc, cfg: st.cfg.AuthLimbo, msgs: msgs, ip: cn.ip.String(),
		registered: registered, lines: make(chan string, 1)}, nil
}

// authTree declares the limbo's commands, so 1.13+ clients complete them
// and do not mark them unknown.
func authTree(p mc.Protocol) (mc.CommandTree, error) {
	t := mc.NewCommandTree(p)
	register, login, change := accounts.Labels()
	for _, c := range []struct {
		labels []string
		args   []string
	}{
		{register, []string{"password", "confirm"}},
		{login, []string{"password"}},
		{change, []string{"old", "new"}},
	} {
		for _, label := range c.labels {
			parent := t.AddLiteral(t.Root, label, false)
			for i, a := range c.args {
				id, err := t.AddArgument(parent, a, mc.ArgWord, false, i == len(c.args)-1)
				if err != nil {
					return t, err
				}
				parent = id
			}
		}
	}
	return t, nil
}

// authWait is one player in the auth limbo.
type authWait struct {
	p      *checks
	cn     *conn
	target *server
	svc    *accounts.Service
	cfg    config.AuthLimbo
	msgs   config.Messages
	ip     string
	// lines holds the command typed while the last one is checked; more are
	// dropped, so a player spamming /login costs one hash at a time.
	lines chan string

	mu         sync.Mutex
	registered bool
	done       bool // authenticated: on the way to the server
}

// typed runs in the limbo's reading goroutine: it only hands the line on.
func (a *authWait) typed(line string) {
	select {
	case a.lines <- line:
	default:
	}
}

func (a *authWait) hint() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.done:
		return fill(a.msgs.AuthWaiting, "server", a.target.id)
	case a.registered:
		return a.msgs.AuthLogin
	}
	return a.msgs.AuthRegister
}

func (a *authWait) message() limbo.Message {
	return title(fill(a.msgs.AuthTitle, "player", a.cn.player), a.hint())
}

func (a *authWait) tell(text string) { a.p.players.tell(a.cn.pl, text) }

// login waits until the player proved the password (or registered one).
func (a *authWait) login(ctx context.Context) error {
	timeout := time.NewTimer(a.cfg.Timeout.D())
	defer timeout.Stop()
	remind := time.NewTicker(authRemind)
	defer remind.Stop()
	a.tell(a.hint())
	attempts := 0
	for authenticated := false; !authenticated; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout.C:
			a.p.met.Auth("timeout")
			a.p.log.Info("auth: timed out", "player", a.cn.player, "client", a.cn.client)
			return errors.New(a.msgs.AuthTimeout)
		case <-remind.C:
			a.tell(a.hint())
		case line := <-a.lines:
			r := a.svc.Handle(ctx, a.cn.player, a.ip, line)
			if r.Failed {
				attempts++
				// A wrong password costs the address a login token, as a new
				// connection would: guessing is as slow as reconnecting.
				a.p.limiter.Allow(a.cn.ip, ratelimit.Login, a.p.now())
				a.p.met.Auth("wrong_password")
				a.p.log.Info("auth: wrong password", "player", a.cn.player, "client", a.cn.client, "attempt", attempts)
				if attempts >= a.cfg.MaxAttempts {
					a.p.met.Auth("too_many_attempts")
					return errors.New(a.msgs.AuthTooManyAttempts)
				}
			}
			if r.Err != nil {
				a.p.met.Auth("unavailable")
				a.p.log.Warn("auth: the account store failed", "player", a.cn.player, "err", r.Err)
			}
			if r.Reply == accounts.ReplyCoolingDown {
				a.p.met.Auth("cooling_down")
				a.p.log.Info("auth: account cooling down", "player", a.cn.player, "client", a.cn.client, "left", r.Wait)
			}
			a.tell(a.reply(r, a.cfg.MaxAttempts-attempts))
			if r.Reply == accounts.ReplyAlreadyRegistered || r.Reply == accounts.ReplyNotRegistered {
				a.mu.Lock()
				a.registered = r.Reply == accounts.ReplyAlreadyRegistered
				a.mu.Unlock()
			}
			authenticated = r.Authenticated
		}
	}
	a.mu.Lock()
	a.done = true
	a.mu.Unlock()
	return nil
}

// reply is the [messages] text of a command's result, counted.
func (a *authWait) reply(r accounts.Result, left int) string {
	switch r.Reply {
	case accounts.ReplyRegistered:
		a.p.met.Auth("registered")
		a.p.log.Info("auth: registered", "player", a.cn.player, "client", a.cn.client)
	case accounts.ReplyLoggedIn, accounts.ReplyPasswordChanged:
		a.p.met.Auth("logged_in")
	case accounts.ReplyUnknownCommand:
		return a.hint()
	}
	return authText(a.msgs, a.cfg, r, left)
}

// authText is the [messages] text of a result of the password login.
func authText(m config.Messages, cfg config.AuthLimbo, r accounts.Result, left int) string {
	switch r.Reply {
	case accounts.ReplyRegistered:
		return m.AuthRegistered
	case accounts.ReplyLoggedIn:
		return m.AuthLoggedIn
	case accounts.ReplyPasswordChanged:
		return m.AuthPasswordChanged
	case accounts.ReplyWrongPassword:
		return fill(m.AuthWrongPassword, "left", strconv.Itoa(left))
	case accounts.ReplyPasswordsDiffer:
		return m.AuthPasswordsDiffer
	case accounts.ReplyPasswordTooShort:
		return fill(m.AuthPasswordShort, "min", strconv.Itoa(cfg.MinPasswordLength))
	case accounts.ReplyPasswordTooLong:
		return fill(m.AuthPasswordLong, "max", strconv.Itoa(cfg.MaxPasswordLength))
	case accounts.ReplyNotRegistered:
		return m.AuthNotRegistered
	case accounts.ReplyAlreadyRegistered:
		return m.AuthAlreadyRegistered
	case accounts.ReplyUsage:
		return fill(m.AuthUsage, "usage", r.Usage)
	case accounts.ReplyUnavailable:
		return m.AuthUnavailable
	case accounts.ReplyCoolingDown:
		return fill(m.AuthCoolingDown, "wait", r.Wait.Round(time.Second).String())
	case accounts.ReplyTooManyRegistrations:
		return m.AuthRegistrationLimit
	}
	return ""
}

// accountCommands are the in-game commands of password accounts, there while
// a server uses "auth": a player who logged in changes or deletes their
// password on the backend too. Their lines never reach the backend.
func (p *checks) accountCommands() []*command.Command {
	return []*command.Command{
		{
			Name: "changepassword", Aliases: []string{"changepass"}, Usage: "<old password> <new password>",
			Description: "change your password (auth limbo)",
			Args:        []command.Arg{{Name: "old"}, {Name: "new"}},
			Run:         p.cmdChangePassword,
		},
		{
			Name: "unregister", Usage: "<password>",
			Description: "delete your password account (auth limbo)",
			Args:        []command.Arg{{Name: "password"}},
			Run:         p.cmdUnregister,
		},
	}
}

// accountOf is the service and the account holder behind a command: a
// player who proved the account of his name in this session (its password
// typed in the auth limbo, a login remembered from his address, Mojang's word
// for the name), or the text that says why not. A name alone is anyone's to
// type: from an open server, the account is not his to change.
func (p *checks) accountOf(ctx context.Context, inv command.Invocation) (*accounts.Service, *onlinePlayer, string) {
	st := p.state.Load()
	pl := sourcePlayer(inv)
	if st.auth == nil || pl == nil {
		return nil, nil, st.cfg.Messages.AuthUnavailable
	}
	if !pl.proven().owns(pl.name) {
		remembered, err := st.auth.Remembered(ctx, pl.name, pl.client.Addr().String())
		if err != nil {
			return nil, nil, st.cfg.Messages.AuthUnavailable
		}
		if !remembered {
			p.log.Info("auth: an account command from a player who has not proved the account", "player", pl.name, "client", pl.client)
			p.met.Auth("not_logged_in")
			return nil, nil, st.cfg.Messages.AuthNotLoggedIn
		}
		if err := p.prove(pl.origin, func(pr *proof) { pr.account = accounts.Key(pl.name) }); err != nil {
			return nil, nil, err.Error()
		}
	}
	ok, err := st.auth.Registered(ctx, pl.name)
	switch {
	case err != nil:
		return nil, nil, st.cfg.Messages.AuthUnavailable
	case !ok:
		return nil, nil, st.cfg.Messages.AuthNoAccount
	}
	return st.auth, pl, ""
}

// accountResult tells the player the result of an account command and
// counts a wrong password as the limbo counts one: logged, a login token of
// the address, and max_attempts of them on one connection end it.
func (p *checks) accountResult(inv command.Invocation, pl *onlinePlayer, r accounts.Result, done string) {
	st := p.state.Load()
	msgs := st.cfg.Messages
	switch {
	case r.Failed:
		n := pl.accountFailures.Add(1)
		p.limiter.Allow(pl.client.Addr(), ratelimit.Login, p.now())
		p.met.Auth("wrong_password")
		p.log.Info("auth: wrong password (account command)", "player", pl.name, "client", pl.client, "attempt", n)
		if int(n) >= st.cfg.AuthLimbo.MaxAttempts {
			p.met.Auth("too_many_attempts")
			pl.disconnect(msgs.AuthTooManyAttempts)
			return
		}
		inv.Source.Tell(msgs.AuthWrongOldPassword)
	case r.Reply == accounts.ReplyCoolingDown:
		p.met.Auth("cooling_down")
		p.log.Info("auth: account cooling down (account command)", "player", pl.name, "client", pl.client, "left", r.Wait)
		inv.Source.Tell(authText(msgs, st.cfg.AuthLimbo, r, 0))
	case r.Err != nil:
		p.met.Auth("unavailable")
		p.log.Warn("auth: the account store failed", "player", pl.name, "err", r.Err)
		inv.Source.Tell(msgs.AuthUnavailable)
	case r.Reply == accounts.ReplyNone:
		inv.Source.Tell(done)
	default:
		inv.Source.Tell(authText(msgs, st.cfg.AuthLimbo, r, 0))
	}
}

func (p *checks) cmdChangePassword(ctx context.Context, inv command.Invocation) error {
	if len(inv.Args) != 2 {
		return command.ErrUsage
	}
	svc, pl, why := p.accountOf(ctx, inv)
	if svc == nil {
		inv.Source.Tell(why)
		return nil
	}
	r := svc.ChangePassword(ctx, pl.name, pl.client.Addr().String(), inv.Args[0], inv.Args[1])
	if r.Reply == accounts.ReplyPasswordChanged {
		p.log.Info("auth: password changed by the player", "player", pl.name, "client", pl.client)
	}
	p.accountResult(inv, pl, r, "")
	return nil
}

func (p *checks) cmdUnregister(ctx context.Context, inv command.Invocation) error {
	if len(inv.Args) != 1 {
		return command.ErrUsage
	}
	svc, pl, why := p.accountOf(ctx, inv)
	if svc == nil {
		inv.Source.Tell(why)
		return nil
	}
	r := svc.Unregister(ctx, pl.name, pl.client.Addr().String(), inv.Args[0])
	if r.Reply == accounts.ReplyNone && !r.Failed {
		p.log.Info("auth: unregistered by the player", "player", pl.name, "client", pl.client)
	}
	p.accountResult(inv, pl, r, p.state.Load().cfg.Messages.AuthUnregistered)
	return nil
}

// buildPremium is the premium lookup of cfg, kept across reloads while its
// settings stay (its cache is worth keeping); nil when premium is off.
func buildPremium(cfg *config.Config, old *state, now func() time.Time) (*auth.PremiumLookup, error) {
	pr := cfg.AuthLimbo.Premium
	if !pr.Enabled || !cfg.UsesAuthLimbo() {
		return nil, nil
	}
	if old != nil && old.premium != nil && old.cfg.AuthLimbo.Premium.API == pr.API && old.cfg.AuthLimbo.Premium.Cache == pr.Cache {
		return old.premium, nil
	}
	l, err := auth.NewPremiumLookup(pr.API, pr.Cache.D(), cfg.Auth.Timeout.D(), now)
	if err != nil {
		return nil, fmt.Errorf("[auth_limbo.premium] api: %w", err)
	}
	return l, nil
}

// crackedRetriesMax bounds the premium names whose proof failed, per
// address, remembered for allow_cracked_retry (Proxy.cracked).
const crackedRetriesMax = 50_000

// premiumProof is what a premium check made of a login.
type premiumProof int

const (
	notPremium    premiumProof = iota // the password login applies
	provenPremium                     // the owner of a paid account: no limbo
)

// provePremium runs, for an offline "auth" server with [auth_limbo.premium],
// the proof a premium name owes: the encryption handshake and hasJoined. The
// profile is the account's (real UUID, skin) when proven. An error refuses
// the login with kick as the text.
func (p *checks) provePremium(cn *conn, client *session.Client, srv *server) (proof premiumProof, profile auth.Profile, kick string, err error) {
	st := cn.st
	if st.premium == nil || !srv.cfg.HasLimbo(config.LimboAuth) || srv.cfg.ProxyMode != config.ModeOffline {
		return notPremium, profile, "", nil
	}
	pr := st.cfg.AuthLimbo.Premium
	premium, err := st.premium.IsPremium(cn.ev.ctx, cn.player)
	if err != nil {
		// No answer: the name goes to the password login, which is safe (its
		// owner registers like anyone); the next lookup asks again.
		p.log.Warn("auth: premium lookup failed; the player gets the password login", "player", cn.player, "err", err)
		return notPremium, profile, "", nil
	}
	if !premium {
		return notPremium, profile, "", nil
	}
	key := playerAt(cn.player, cn.ip)
	if pr.AllowCrackedRetry && p.cracked.take(key, p.now()) {
		p.log.Info("auth: a premium name's failed proof came back; let in as cracked", "player", cn.player, "client", cn.client)
		cn.cracked = true
		return notPremium, profile, "", nil
	}
	keys, err := p.icpt.keyPair()
	if err != nil {
		return notPremium, profile, auth.KickServersDown, err
	}
	if pr.AllowCrackedRetry {
		p.cracked.add(key, p.now().Add(pr.CrackedRetryWindow.D()))
	}
	a := session.Authenticator{Keys: keys, Sessions: p.icpt.sessions, SendIP: p.icpt.sendIP}
	endSpan := cn.ev.trace.Auth()
	profile, err = a.Authenticate(cn.ev.ctx, client)
	endSpan(err)
	if err != nil {
		if errors.Is(err, auth.ErrUnavailable) {
			return notPremium, profile, auth.KickServersDown, err
		}
		p.met.Auth("premium_refused")
		return notPremium, profile, fill(st.cfg.Messages.AuthPremiumRefused, "name", cn.player), err
	}
	p.cracked.take(key, p.now())
	p.met.Auth("premium")
	return provenPremium, profile, "", nil
}
