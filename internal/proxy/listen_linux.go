package proxy

import (
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/infrarust-go/infrarust/internal/config"
)

// keepaliveInherited: Linux copies a listening socket's keepalive options to the
// sockets it accepts.
const keepaliveInherited = true

func listenerKeepalive(ka config.Keepalive) func(network, address string, c syscall.RawConn) error {
	if ka.Time <= 0 {
		return nil
	}
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			for _, o := range []struct{ level, opt, v int }{
				{unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
				{unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, seconds(ka.Time.D().Seconds())},
				{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, seconds(ka.Interval.D().Seconds())},
				{unix.IPPROTO_TCP, unix.TCP_KEEPCNT, max(ka.Retries, 1)},
			} {
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
