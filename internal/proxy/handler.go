package proxy

import (
	"github.com/infrarust-go/infrarust/internal/config"
)

// loginHandler serves a login the admission chain let through, the way one proxy
// mode does it. It owns the connection from here: it kicks with a reason on any
// failure, or detaches a session that forwards until a side closes.
type loginHandler interface {
	serveLogin(p *moves, cn *conn)
}

// handlerFor picks the handler of the routed server's proxy_mode. Adding a mode is
// adding a case here; the admission chain does not change.
func (p *door) handlerFor(srv *server) loginHandler {
	switch srv.cfg.ProxyMode {
	case config.ModePassthrough, config.ModeZeroCopy, config.ModeServerOnly:
		return passthrough{}
	case config.ModeClientOnly, config.ModeOffline:
		return intercepted{}
	}
	return unsupported{}
}

// unsupported refuses a login for a mode this build cannot serve; config
// validation normally stops such a server from loading at all.
type unsupported struct{}

func (unsupported) serveLogin(p *moves, cn *conn) {
	p.door.refused(cn, refuse("proxy_mode", "proxy_mode "+string(cn.srv.cfg.ProxyMode)+" of server "+cn.srv.id, cn.srv.cfg.DisconnectMessage))
}
