package proxy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/accounts"
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
// old (its bound on concurrent hashes) while the argon2 settings stay the same.
func authService(cfg config.AuthLimbo, store accounts.Store, old *accounts.Service, now func() time.Time) *accounts.Service {
	params := accounts.Params{MemoryKiB: uint32(cfg.Argon2.MemoryKiB), Iterations: uint32(cfg.Argon2.Iterations), Parallelism: uint8(cfg.Argon2.Parallelism)}
	h := (*accounts.Hasher)(nil)
	if old != nil && old.Hasher.Params == params && old.Store == store && cfg.Argon2.MaxConcurrent == old.Hasher.Concurrency() {
		h = old.Hasher
	} else {
		h = accounts.NewHasher(params, cfg.Argon2.MaxConcurrent)
	}
	return &accounts.Service{
		Store: store, Hasher: h, Now: now,
		Rules: accounts.Rules{MinLength: cfg.MinPasswordLength, MaxLength: cfg.MaxPasswordLength, Remember: cfg.Remember.D()},
	}
}

// buildAuth is the auth limbo's service of cfg: the store is opened the first
// time a configuration needs it and kept for the proxy's life.
func (p *Proxy) buildAuth(cfg *config.Config, old *state) (*accounts.Service, error) {
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

// authStay is the limbo stay of a player who must log in before target: nil
// when target asks for none or the player is remembered. An error refuses the
// login (the store does not answer, the client's version cannot be held):
// nobody reaches an "auth" server unchecked.
func (p *Proxy) authStay(cn *conn, pl *onlinePlayer, target *server) (*session.Stay, error) {
	st := p.state.Load()
	if !target.cfg.HasLimbo(config.LimboAuth) || target.cfg.ProxyMode != config.ModeOffline {
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
	ip := cn.ip.String()
	ctx, cancel := context.WithTimeout(context.Background(), authLookup)
	defer cancel()
	if ok, err := svc.Remembered(ctx, cn.player, ip); err != nil {
		p.log.Warn("auth: the account store did not answer", "player", cn.player, "err", err)
		p.met.Auth("unavailable")
		return nil, errors.New(msgs.AuthUnavailable)
	} else if ok {
		p.met.Auth("remembered")
		return nil, nil
	}
	registered, err := svc.Registered(ctx, cn.player)
	if err != nil {
		p.log.Warn("auth: the account store did not answer", "player", cn.player, "err", err)
		p.met.Auth("unavailable")
		return nil, errors.New(msgs.AuthUnavailable)
	}
	a := &authWait{p: p, cn: cn, pl: pl, target: target, svc: svc, cfg: st.cfg.AuthLimbo, msgs: msgs, ip: ip,
		registered: registered, lines: make(chan string, 1)}
	return &session.Stay{
		Handler:  string(config.LimboAuth),
		Message:  a.message,
		Commands: &limbo.Commands{Tree: authTree, Run: a.typed},
		Until:    a.until,
	}, nil
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
	p      *Proxy
	cn     *conn
	pl     *onlinePlayer
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

func (a *authWait) tell(text string) { a.p.tell(a.pl, text) }

// until waits for the password, then moves the player in as any other stay
// would: through a wake, a maintenance or a full server's queue.
func (a *authWait) until(ctx context.Context) (*session.Backend, error) {
	timeout := time.NewTimer(a.cfg.Timeout.D())
	defer timeout.Stop()
	remind := time.NewTicker(authRemind)
	defer remind.Stop()
	a.tell(a.hint())
	attempts := 0
	for authenticated := false; !authenticated; {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout.C:
			a.p.met.Auth("timeout")
			a.p.log.Info("auth: timed out", "player", a.cn.player, "client", a.cn.client)
			return nil, errors.New(a.msgs.AuthTimeout)
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
					return nil, errors.New(a.msgs.AuthTooManyAttempts)
				}
			}
			if r.Err != nil {
				a.p.met.Auth("unavailable")
				a.p.log.Warn("auth: the account store failed", "player", a.cn.player, "err", r.Err)
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
	return a.p.joinWhenOpen(ctx, a.cn, a.target)
}

// reply is the [messages] text of a command's result.
func (a *authWait) reply(r accounts.Result, left int) string {
	m := a.msgs
	switch r.Reply {
	case accounts.ReplyRegistered:
		a.p.met.Auth("registered")
		a.p.log.Info("auth: registered", "player", a.cn.player, "client", a.cn.client)
		return m.AuthRegistered
	case accounts.ReplyLoggedIn:
		a.p.met.Auth("logged_in")
		return m.AuthLoggedIn
	case accounts.ReplyPasswordChanged:
		a.p.met.Auth("logged_in")
		return m.AuthPasswordChanged
	case accounts.ReplyWrongPassword:
		return fill(m.AuthWrongPassword, "left", strconv.Itoa(left))
	case accounts.ReplyPasswordsDiffer:
		return m.AuthPasswordsDiffer
	case accounts.ReplyPasswordTooShort:
		return fill(m.AuthPasswordShort, "min", strconv.Itoa(a.cfg.MinPasswordLength))
	case accounts.ReplyPasswordTooLong:
		return fill(m.AuthPasswordLong, "max", strconv.Itoa(a.cfg.MaxPasswordLength))
	case accounts.ReplyNotRegistered:
		return m.AuthNotRegistered
	case accounts.ReplyAlreadyRegistered:
		return m.AuthAlreadyRegistered
	case accounts.ReplyUsage:
		return fill(m.AuthUsage, "usage", r.Usage)
	case accounts.ReplyUnavailable:
		return m.AuthUnavailable
	}
	return a.hint()
}

// joinWhenOpen moves a player who is done in the limbo into t once t takes
// them: started if asleep, after its maintenance, when a slot is free. A hard
// refusal (a ban, the filter) ends the stay with its text.
func (p *Proxy) joinWhenOpen(ctx context.Context, cn *conn, t *server) (*session.Backend, error) {
	for {
		if p.asleep(t) {
			if err := p.opts.Manager.EnsureStarted(ctx, t.id); err != nil {
				return nil, err
			}
		}
		b, err := p.join(cn, t, pass{})
		var r *refusal
		if err == nil || !errors.As(err, &r) || r.hard() {
			return b, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(limboRetry):
		}
	}
}
