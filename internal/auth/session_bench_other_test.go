//go:build unix && !linux

package auth_test

import (
	"net"
	"testing"
)

// proxyDial is Go's net where the proxy has no raw sockets.
func proxyDial(*testing.B) dialFunc { return (&net.Dialer{}).DialContext }
