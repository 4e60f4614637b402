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

// Resume is a parked reader's callback (Parker.OnReadable).
type Resume = func(onLoop bool) (again bool)

// A Parker is a socket that can call its reader back instead of being waited
// on (rawtcp.Conn is one): what lets a held player hold no goroutine.
type Parker interface {
	// OnReadable arranges for fn to run when bytes arrive (or a deadline or
	// the close comes); false: they have, read again. fn may run on the
	// socket's event loop (onLoop true): it must then not wait for anything,
	// and returns true to be run again, off the loop, for what would wait.
	// Off the loop (onLoop false) it runs on a goroutine of its own and its
	// result is ignored.
	OnReadable(fn Resume) bool
	// Unpark takes back the fn OnReadable armed, if it has not run: the caller
	// runs it itself. nil: none is armed (or the socket cannot take it back).
	Unpark() Resume
}

// park lets a relay hold no goroutine while its peer is silent: when conn has
// read everything that arrived, it arranges for resume to run once more bytes
// do, and returns true: the caller's goroutine returns. false: read on (a
// frame or an error is there, or the socket cannot park).
func park(conn *mc.Conn, p Parker, resume Resume) bool {
	return p != nil && conn.Idle() && p.OnReadable(resume)
}

// unpark takes back the resume a park armed on p, if it has not run.
func unpark(p Parker) Resume {
	if p == nil {
		return nil
	}
	return p.Unpark()
}

// lingerAfterEnd is how long a client may still take to read a kick after the
// proxy half-closed its side: long enough for the kick to be read before the
// close (a reset would lose it), short enough that a silent peer never holds the
// session.
const lingerAfterEnd = 5 * time.Second
