package session

import (
	"net"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// Side is one end of a relay: the framed connection and the socket under it
// (for half-close and deadlines, which mc.Conn leaves to its owner).
type Side struct {
	Conn *mc.Conn
	Net  net.Conn
}

// lingerAfterEnd is how long a client may still take to read a kick after the
// proxy half-closed its side: long enough for the kick to be read before the
// close (a reset would lose it), short enough that a silent peer never holds the
// session.
const lingerAfterEnd = 5 * time.Second
