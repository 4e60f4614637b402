package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/hooks"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/metrics"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
	"github.com/infrarust-go/infrarust/internal/proxy/ratelimit"
)

// defaultProxyHeaderTimeout bounds how long a trusted peer may take to send its PROXY header.
const defaultProxyHeaderTimeout = 5 * time.Second

// intent is what a client came for, whatever protocol generation it speaks.
type intent uint8

const (
	intentStatus intent = iota // a server-list ping (modern or legacy)
	intentLogin                // a login (modern, legacy, or a 1.20.5+ transfer)
)

// legacyKind tells a pre-1.7 client apart from a modern one, because the answer
// (a ping reply or a kick) must be written in the format that client reads.
type legacyKind uint8

const (
	notLegacy   legacyKind = iota
	legacyPing             // 0xFE server-list ping
	legacyLogin            // 0x02 login handshake
)

// conn is one client connection and everything the admission chain learns about
// it, in the order the steps fill it in. A handler reads it; nothing else does.
type conn struct {
	c        net.Conn
	br       *bufio.Reader
	st       *state    // the configuration snapshot this connection uses, start to end
	deadline time.Time // the one budget for the whole admission (PROXY header, handshake, login start)

	client netip.AddrPort // the real client: the TCP peer, or the PROXY header's source
	ip     netip.Addr

	legacy      legacyKind
	intent      intent
	transfer    bool         // a 1.20.5+ transfer login (spends the login bucket)
	hs          mc.Handshake // modern clients only
	ping        mc.LegacyPing
	legacyLogin mc.LegacyLogin
	raw         []byte // the client's bytes so far, as read: relayed verbatim by passthrough
	host        string // normalised hostname the client typed ("" when a legacy ping names none)
	protocol    int32  // the client's protocol version (modern clients only)

	player   string        // login: the name the client claims (the authenticated one, once known)
	uuid     string        // login: the player's UUID when known, dashed
	profile  auth.Profile  // intercepted logins: the identity forwarded to backends
	login    mc.LoginStart // modern login start
	rawLogin []byte        // modern login start, as read
	srv      *server       // the routed server; nil for an unknown hostname
	lease    balance.Lease // the login's pick, reused across attempts (no allocation per pick)
	ev       loginEvents   // player events and the trace, once the login is admitted

	accepted      time.Time               // when the proxy accepted it
	transport     []hooks.TransportFilter // the transport filters that let it through
	transportConn *hooks.TransportConn    // what they were shown

	claim     *claim // the player's identity, held for the connection's life (identity.go)
	perIPHeld bool   // a max_connections_per_ip slot is held
	proof     proof  // what the login proved before its player record exists (proof.go); then pl's
	owes      bool   // looked up: the name owes a /login on an "auth" server (authlimbo.go)
	cracked   bool   // a premium name let in as cracked (allow_cracked_retry): the password login decides
	detached  bool   // a session goroutine owns the connection now and will finish it
	// pl is the player this login became (intercepted logins, from Login
	// Success on): what he has proven, where he is.
	pl *onlinePlayer
}

// rejection is a step's "no": the metric reason, a detail for the debug log and,
// for a login, the text the player reads ("" closes without a word, as for a
// status ping or a filtered client).
type rejection struct {
	reason string
	detail string
	kick   string
}

func (r *rejection) Error() string { return r.reason + ": " + r.detail }

// refuse builds a rejection; kick is what a login is told.
func refuse(reason, detail, kick string) error {
	return &rejection{reason: reason, detail: detail, kick: kick}
}

// errClosed ends the chain for a connection that went away or broke the protocol
// before there was anything to refuse (one debug line, no metric).
type errClosed struct{ err error }

func (e errClosed) Error() string { return e.err.Error() }

// step is one named admission check. It either fills in more of the connection and
// returns nil (continue), or returns why the connection stops here.
type step struct {
	name string
	run  func(p *door, cn *conn) error
}

// admission is the one ordered list every connection goes through, modern or
// legacy, ping or login. The order is the reference's with one deliberate change:
// every step that can refuse a connection runs before the rate limiter, so a
// refused connection never spends tokens (an IPv6 ban would otherwise drain the
// bucket its whole /64 shares). Add a step here; a handler never repeats one.
var admission = []step{
	{"proxy_protocol", (*door).readProxyProtocol},
	{"transport_filter", (*door).transportFilters},
	{"ip_filter", (*door).checkGlobalFilter},
	{"max_connections_per_ip", (*door).holdPerIPSlot},
	{"handshake", (*door).readHandshake},
	{"login_start", (*door).readLoginStart},
	{"name", (*door).checkName},
	{"route", (*door).route},
	{"server_ip_filter", (*door).checkServerFilter},
	{"ban", (*door).checkBans},
	{"unknown_domain", (*door).checkUnknownDomain},
	{"rate_limit", (*door).rateLimit},
}

// handle admits one accepted connection, in its own goroutine, then hands it to
// the status handler or to the login handler of its server's proxy mode.
func (p *door) handle(c net.Conn) {
	growStack(false)
	p.active.Add(1)
	p.met.ConnActive(1)
	st := p.state.Load()
	cn := &conn{c: c, br: getReader(c), st: st, client: addrPort(c.RemoteAddr())}
	cn.accepted = time.Now()
	cn.deadline = cn.accepted.Add(st.cfg.HandshakeTimeout.D())
	defer func() {
		if !cn.detached {
			p.finish(cn)
		}
	}()
	if err := p.admit(cn); err != nil {
		p.refused(cn, err)
		return
	}
	if cn.intent == intentStatus {
		p.status.serveStatus(cn)
		return
	}
	if !p.players.preLogin(cn) {
		return
	}
	p.handlerFor(cn.srv).serveLogin(p.moves, cn)
}

// admit runs the admission chain until a step stops it.
func (p *door) admit(cn *conn) error {
	for _, s := range admission {
		if err := s.run(p, cn); err != nil {
			return err
		}
	}
	return nil
}

// refused ends a connection the chain stopped: one debug line, one metric, and a
// kick in the client's own format when a login is told why.
func (p *door) refused(cn *conn, err error) {
	var r *rejection
	if !errors.As(err, &r) {
		p.log.Debug("connection closed", "client", cn.client, "err", err)
		return
	}
	p.rejected.Add(1)
	p.met.ConnRejected(r.reason)
	if cn.intent == intentLogin {
		p.loginFailed(cn, r.reason, r.detail)
	} else {
		p.log.Debug("connection rejected", "client", cn.client, "reason", r.reason, "detail", r.detail)
	}
	if r.reason == "ban" {
		p.loginOutcome(cn, metrics.LoginBanned)
	}
	if r.kick != "" && cn.intent == intentLogin {
		p.kick(cn, r.kick)
	}
}

// loginOutcome counts how a login that reached a configured server ended.
func (p *door) loginOutcome(cn *conn, o metrics.LoginOutcome) {
	if cn.srv != nil && cn.intent == intentLogin {
		p.met.Login(cn.srv.id, o)
	}
}

// readProxyProtocol takes the real client address from a PROXY header: required
// from trusted peers, refused from others.
func (p *door) readProxyProtocol(cn *conn) error {
	if !cn.st.cfg.ReceiveProxyProtocol {
		return nil
	}
	// The header has its own, shorter budget inside the connection's one deadline.
	_ = cn.c.SetReadDeadline(earliest(cn.deadline, time.Now().Add(p.proxyHeaderTimeout)))
	real, err := p.readProxyHeader(cn)
	if err != nil {
		return refuse("proxy_protocol", err.Error(), "")
	}
	cn.client = unmapped(real)
	return nil
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func (p *door) checkGlobalFilter(cn *conn) error {
	cn.ip = cn.client.Addr().Unmap()
	if !cn.st.filter.Allowed(cn.ip) {
		return refuse("ip_filter", "global ip_filter", "")
	}
	return nil
}

func (p *door) holdPerIPSlot(cn *conn) error {
	n := cn.st.cfg.MaxConnectionsPerIP
	if n <= 0 {
		return nil
	}
	if !p.perIP.acquire(cn.ip, n) {
		return refuse("max_connections_per_ip", "too many connections from this IP", "")
	}
	cn.perIPHeld = true
	return nil
}

// readHandshake reads the client's first packet, modern or legacy, into the same
// fields: intent, host, and the raw bytes a passthrough relays.
func (p *door) readHandshake(cn *conn) error {
	_ = cn.c.SetReadDeadline(cn.deadline)
	first, err := cn.br.Peek(1)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return refuse("handshake", "no handshake within handshake_timeout", "")
		}
		return errClosed{fmt.Errorf("no handshake: %w", err)}
	}
	switch first[0] {
	case 0xFE:
		ping, raw, err := mc.ReadLegacyPing(cn.br)
		if err != nil {
			return refuse("handshake", "legacy ping: "+err.Error(), "")
		}
		cn.legacy, cn.intent, cn.ping, cn.raw = legacyPing, intentStatus, ping, raw
		cn.host = NormalizeHost(ping.Host)
		return nil
	case 0x02:
		ll, raw, err := mc.ReadLegacyLogin(cn.br)
		if err != nil {
			return refuse("handshake", "legacy login: "+err.Error(), "")
		}
		cn.legacy, cn.intent, cn.raw, cn.legacyLogin = legacyLogin, intentLogin, raw, ll
		cn.host, cn.player = NormalizeHost(ll.Host), ll.Username
		return nil
	}
	if err := precheckHandshake(cn.br); err != nil {
		return refuse("handshake", err.Error(), "")
	}
	hs, raw, err := mc.ReadHandshake(cn.br)
	if err != nil {
		return refuse("handshake", err.Error(), "")
	}
	cn.hs, cn.raw, cn.protocol = hs, raw, hs.ProtocolVersion
	cn.host = NormalizeHost(hs.ServerAddress)
	cn.intent = intentLogin
	switch hs.NextState {
	case mc.StateStatus:
		cn.intent = intentStatus
	case mc.StateTransfer:
		cn.transfer = true
	}
	return nil
}

// readLoginStart reads a modern login's second packet, so the ban check and the
// logs know the player before anything is spent on them.
func (p *door) readLoginStart(cn *conn) error {
	if cn.intent != intentLogin || cn.legacy != notLegacy {
		return nil
	}
	ls, raw, err := mc.ReadLoginStart(cn.br, cn.protocol)
	if err != nil {
		return refuse("handshake", "login start: "+err.Error(), "")
	}
	cn.login, cn.rawLogin, cn.player = ls, raw, ls.Name
	if ls.HasUUID {
		cn.uuid = formatUUID(ls.UUID)
	}
	return nil
}

// checkName refuses a login whose name breaks the network's rule (offline_names,
// vanilla's by default) or could not be banned by name: what an offline server
// would otherwise take from any client.
func (p *door) checkName(cn *conn) error {
	if cn.intent != intentLogin {
		return nil
	}
	name := cn.player
	if cn.st.nameAllowed(name) {
		return nil
	}
	text := fmt.Sprintf("Invalid username %q: use 3 to 16 letters, digits and _", name)
	if cn.st.cfg.OfflineNames != "" {
		text = fmt.Sprintf("Invalid username %q: this network does not allow that name", name)
	}
	return refuse("name", fmt.Sprintf("name %q", name), text)
}

// nameAllowed applies offline_names (vanilla's rule when unset), never past what
// a ban can name.
func (st *state) nameAllowed(name string) bool {
	if st.names == nil {
		return config.VanillaName(name)
	}
	return st.names.MatchString(name) && bans.ValidUsername(name) == nil
}

// route finds the server for the hostname; an unknown one is decided later, after
// the steps that refuse outright.
func (p *door) route(cn *conn) error {
	if cn.host == "" {
		return nil // a pre-1.6 legacy ping names no host: the default MOTD answers it
	}
	if id, ok := cn.st.router.lookup(cn.host); ok {
		cn.srv = cn.st.servers[id]
	}
	return nil
}

func (p *door) checkServerFilter(cn *conn) error {
	if cn.srv != nil && !cn.srv.filter.Allowed(cn.ip) {
		return refuse("ip_filter", "ip_filter of server "+cn.srv.id, "")
	}
	return nil
}

// checkBans: a banned IP gets no status answer; a banned player (IP, name or the
// UUID the client claims) is told the ban's reason and end.
func (p *door) checkBans(cn *conn) error {
	b := p.opts.Bans
	if b == nil {
		return nil
	}
	now := p.now()
	if cn.intent == intentStatus {
		if _, banned := b.CheckIP(cn.ip, now); banned {
			return refuse("ban", "banned IP asked for status", "")
		}
		return nil
	}
	if ban, banned := b.CheckPlayer(cn.ip, cn.player, cn.uuid, now); banned {
		return refuse("ban", "banned player "+cn.player, ban.KickMessage(now))
	}
	return nil
}

// checkUnknownDomain drops a client whose hostname routes nowhere when asked to;
// otherwise a ping gets the default MOTD and a login is told.
func (p *door) checkUnknownDomain(cn *conn) error {
	if cn.srv != nil || (cn.intent == intentStatus && cn.host == "") {
		return nil
	}
	if cn.st.cfg.UnknownDomainBehavior == "drop" {
		return refuse("unknown_domain", "no server for "+cn.host, "")
	}
	if cn.intent == intentLogin {
		return refuse("unknown_domain", "no server for "+cn.host, fmt.Sprintf("No server is configured for %q", cn.host))
	}
	return nil
}

// rateLimit spends one token of the client's login or status bucket: the last
// step, so only connections that will be served pay.
func (p *door) rateLimit(cn *conn) error {
	if !cn.st.cfg.RateLimit.Enabled {
		return nil
	}
	bucket := ratelimit.Status
	if cn.intent == intentLogin {
		bucket = ratelimit.Login
	}
	if !p.limiter.Allow(cn.ip, bucket, p.now()) {
		return refuse("rate_limit", intentName(cn), "Rate limit exceeded")
	}
	return nil
}

func intentName(cn *conn) string {
	name := "login"
	switch {
	case cn.intent == intentStatus:
		name = "status"
	case cn.transfer:
		name = "transfer"
	}
	if cn.legacy != notLegacy {
		name = "legacy " + name
	}
	return name
}

// kick tells a player why their login ends, in the format their client reads: a
// player is never closed on silently.
func (p *door) kick(cn *conn, text string) {
	_ = cn.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if cn.legacy == legacyLogin {
		_, _ = cn.c.Write(mc.EncodeLegacyKick(text))
		return
	}
	_, _ = cn.c.Write(mc.EncodeLoginDisconnect(text))
}

// releaseReader returns the pooled reader once nothing more is read through it.
func (cn *conn) releaseReader() {
	if cn.br != nil {
		putReader(cn.br)
		cn.br = nil
	}
}

// buffered is what the client sent past the packets read so far, which a
// passthrough must relay too.
func (cn *conn) buffered() []byte {
	b, _ := cn.br.Peek(cn.br.Buffered())
	return b
}

// finish releases everything a connection holds, exactly once, whichever goroutine
// ends it: the admission's, or the session's it was handed to.
func (p *door) finish(cn *conn) {
	if cn.transport != nil {
		cn.closeTransport(cn.transport, cn.transportConn)
	}
	p.players.endEvents(cn)
	p.players.releaseClaim(cn)
	cn.releaseReader()
	if cn.perIPHeld {
		p.perIP.release(cn.ip)
	}
	p.active.Add(-1)
	p.met.ConnActive(-1)
	cn.c.Close()
	p.untrack(cn.c)
	p.releasePermit()
	p.wg.Done()
}

// ending runs a session's end (its accounting, log line, events and finish)
// where it is, often on an event loop every relay shares; with a plugin's
// Disconnect handler to call, on a goroutine of its own instead, as a handler
// may take its whole timeout.
func (p *door) ending(end func()) {
	if p.opts.Hooks.Wants(hooks.KindDisconnect) {
		go end()
		return
	}
	end()
}

// detach runs a forwarded session on a fresh goroutine and lets the admission's
// goroutine end: the deep stack the handshake grew is freed (the goroutine
// forwarder, which copies each direction on a goroutine of its own).
func (p *door) detach(cn *conn, session func()) {
	cn.detached = true
	go func() {
		defer p.finish(cn)
		session()
	}()
}

func addrPort(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		return unmapped(t.AddrPort())
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return unmapped(ap)
}

// unmapped is ap with an IPv4-mapped IPv6 address (an IPv4 player on a dual-stack
// listener, bind ":25565") as the IPv4 address it is, for the logs, the players
// API, events and the address forwarded to backends.
func unmapped(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// maxHandshakeFrame is the largest a valid handshake frame can be: packet id,
// protocol VarInt, a 255-character address (4 bytes each) with its length, port, state.
const maxHandshakeFrame = 1 + 5 + 3 + 255*4 + 2 + 5

// precheckHandshake looks at the bytes already received and refuses, without waiting
// for the rest, a frame that cannot be a handshake (an HTTP request, a TLS hello, a
// declared length no handshake needs). A short read just defers to ReadHandshake.
func precheckHandshake(br *bufio.Reader) error {
	b, _ := br.Peek(min(br.Buffered(), 6))
	var length, shift int
	for i, c := range b {
		length |= int(c&0x7f) << shift
		shift += 7
		if c&0x80 != 0 {
			if i == 4 {
				return mc.ErrVarIntTooLong
			}
			continue
		}
		if length < 1 || length > maxHandshakeFrame {
			return fmt.Errorf("declared handshake length %d: %w", length, mc.ErrMalformed)
		}
		if i+1 < len(b) && b[i+1] != 0x00 {
			return fmt.Errorf("first packet id 0x%02x is not a handshake: %w", b[i+1], mc.ErrMalformed)
		}
		return nil
	}
	return nil
}

// connStack is the goroutine stack a connection's path needs at its deepest (the
// login's backend dial and first read, the hand-over to the forwarder). A new
// goroutine starts smaller, so the stack grew two or three times per connection,
// each time from deep inside the login, where copying it means walking every frame:
// 5 % of a passthrough login's CPU in the profile of the built binary. Growing it
// once, on the first frame, costs one copy of an empty stack.
const connStack = 16 << 10

// growStack makes the calling goroutine's stack hold connStack at once. Called with
// false: the frame is reserved on entry (its size makes the prologue grow the stack),
// while the array, declared in a branch not taken, is never zeroed.
//
//go:noinline
func growStack(touch bool) {
	if touch {
		var pad [connStack - 2<<10]byte
		keepStack(pad[:])
	}
}

//go:noinline
func keepStack([]byte) {}

func (p *door) releasePermit() {
	if p.sem != nil {
		<-p.sem
	}
}
