//go:build !linux

package proxy

import (
	"syscall"

	"github.com/infrarust-go/infrarust/internal/config"
)

// keepaliveInherited: elsewhere accepted sockets do not reliably inherit the
// listener's keepalive options, so each session sets them.
const keepaliveInherited = false

func listenerControl(config.Keepalive) func(network, address string, c syscall.RawConn) error {
	return nil
}
