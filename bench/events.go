package bench

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// webhookEvent is what the events workload's deciding webhook is asked about:
// one request per login, the login waiting for the answer.
const webhookEvent = "login"

// sink is an HTTP endpoint on 127.0.0.1 that reads every request and answers
// with a fixed body: a deciding webhook that lets everyone in, or an OTLP/HTTP
// collector that keeps nothing.
type sink struct {
	srv      *http.Server
	url      string
	requests atomic.Int64
	bytes    atomic.Int64
}

func startSink(contentType, body string) (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{url: "http://" + ln.Addr().String()}
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
		s.requests.Add(1)
		s.bytes.Add(n)
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *sink) Close() { _ = s.srv.Close() }

// events is issue 20's performance figure: logins per second and proxy CPU per
// login with no event handlers, with one compiled-in handler (a build of
// bench/cmd/infrarust-handler, --handler-binary), with a deciding webhook on this
// machine, and with every session traced to an OTLP/HTTP sink. Each variant is a
// fresh proxy process with the shipped default forwarder, measured on the same
// login workloads, interleaved round by round.
func (e *mcEnv) events(r *runner, direct string) error {
	o := e.o
	if o.Binary == "" {
		o.logf("events: skipped, the proxy must run as its own process (--binary)")
		return nil
	}
	hook, err := startSink("application/json", `{"action":"continue"}`)
	if err != nil {
		return err
	}
	defer hook.Close()
	otlp, err := startSink("application/x-protobuf", "")
	if err != nil {
		return err
	}
	defer otlp.Close()
	fwd := "" // the configuration's default: what ships
	variants := []*underTest{{name: "no handlers", binary: o.Binary, forwarder: fwd}}
	if o.HandlerBinary != "" {
		variants = append(variants, &underTest{name: "one handler", binary: o.HandlerBinary, forwarder: fwd})
	} else {
		o.logf("events: no --handler-binary, so no compiled-in handler row (go build -o /tmp/infrarust-handler ./bench/cmd/infrarust-handler)")
	}
	variants = append(variants,
		&underTest{name: "deciding webhook", binary: o.Binary, forwarder: fwd, webhook: hook.url},
		&underTest{name: "tracing", binary: o.Binary, forwarder: fwd, telemetry: otlp.url})
	defer func() {
		for _, u := range variants {
			if u.t != nil {
				u.t.Close()
			}
		}
	}()
	for _, u := range variants {
		if err := r.start(u); err != nil {
			return err
		}
	}
	login := group{direct: func() (measure, error) { return storm(o.Clients, o.StormTime, 0, loginCycle(direct)) }}
	for _, u := range variants {
		login.arms = append(login.arms, arm{u: u, run: func() (measure, error) { return storm(o.Clients, o.StormTime, 0, loginCycle(u.t.Addr())) }})
	}
	if err := r.measure(fmt.Sprintf("login-%d", o.Clients), cycleUnit, login); err != nil {
		return err
	}
	for _, m := range []string{modePassthrough, modeOffline} {
		g := group{direct: func() (measure, error) { return storm(o.Clients, o.StormTime, 0, e.loginCycle(e.be.Addr(), "direct")) }}
		for _, u := range variants {
			g.arms = append(g.arms, arm{label: m, u: u, run: func() (measure, error) {
				return storm(o.Clients, o.StormTime, 0, e.loginCycle(u.t.ModeAddr(m), hostOf(m)))
			}})
		}
		if err := r.measure(fmt.Sprintf("mclogin-%d", o.Clients), loginUnit, g); err != nil {
			return err
		}
	}
	// Closing the proxies flushes their last spans; then the sinks must have seen
	// work, or the rows measured a proxy that skipped it.
	for _, u := range variants {
		u.t.Close()
		u.t = nil
	}
	o.logf("events: the deciding webhook answered %d requests; the OTLP sink took %d exports (%d KiB)",
		hook.requests.Load(), otlp.requests.Load(), otlp.bytes.Load()>>10)
	if hook.requests.Load() == 0 || otlp.requests.Load() == 0 {
		return fmt.Errorf("the webhook got %d requests and the OTLP sink %d exports: a variant did not do its work", hook.requests.Load(), otlp.requests.Load())
	}
	return nil
}
