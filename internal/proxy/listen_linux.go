package proxy

import (
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/infrarust-go/infrarust/internal/config"
)

// keepaliveInherited: Linux copies a listening socket's keepalive options to the
// sockets it accepts.
const keepaliveInherited = true

// deferAcceptSeconds is TCP_DEFER_ACCEPT on the players' listener: a connection is
// handed to accept only once its first bytes have arrived (a Minecraft client, and a
// PROXY protocol sender, always speaks first), so the first read of every
// connection finds the handshake instead of returning EAGAIN and parking the
// goroutine for a second wakeup. A client that stays silent is still accepted
// after about this long (the kernel retransmits its SYN-ACK, then lets it in) and
// then gets handshake_timeout as before; one that connects and leaves (a port
// scan, a load balancer's TCP check) never reaches the proxy at all.
const deferAcceptSeconds = 1

// listenerControl sets the listening socket's options before it listens:
// TCP_DEFER_ACCEPT, and TCP_NODELAY and [keepalive] for the accepted sockets to
// inherit. Set before listen, they are on every socket the listener ever
// queues; set later, a connection already in the backlog would miss them.
func listenerControl(ka config.Keepalive) func(network, address string, c syscall.RawConn) error {
	opts := []struct{ level, opt, v int }{
		{unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT, deferAcceptSeconds},
		{unix.IPPROTO_TCP, unix.TCP_NODELAY, 1},
	}
	if ka.Time > 0 {
		opts = append(opts,
			struct{ level, opt, v int }{unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
			struct{ level, opt, v int }{unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, seconds(ka.Time.D().Seconds())},
			struct{ level, opt, v int }{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, seconds(ka.Interval.D().Seconds())},
			struct{ level, opt, v int }{unix.IPPROTO_TCP, unix.TCP_KEEPCNT, max(ka.Retries, 1)},
		)
	}
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			for _, o := range opts {
				if serr = unix.SetsockoptInt(int(fd), o.level, o.opt, o.v); serr != nil {
					return
				}
			}
		})
		if err != nil {
			return err
		}
		return serr
	}
}

func seconds(s float64) int { return max(int(s), 1) }
