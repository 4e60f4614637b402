//go:build !linux

package proxy

import (
	"net"

	"github.com/infrarust-go/infrarust/internal/forward"
)

// Raw sockets (internal/rawtcp) exist on Linux only.
func useRawSockets(forward.Forwarder) bool { return false }

func (p *Proxy) listener(ln net.Listener) net.Listener { return ln }

func newRawDialer() Dialer { return defaultDialer() }
