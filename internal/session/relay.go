package session

import (
	"errors"
	"io"
	"net"
	"os"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// Side is one end of a relay: the framed connection and the socket under it
// (for half-close and deadlines, which mc.Conn leaves to its owner).
type Side struct {
	Conn *mc.Conn
	Net  net.Conn
}

// lingerAfterEnd is how long the other direction may still run once one has
// ended: long enough for a kick to be read before the close, short enough that a
// silent peer never holds the session.
const lingerAfterEnd = 5 * time.Second

// Relay copies frames both ways until one side ends, then gives the other
// direction lingerAfterEnd to finish and closes both sockets. Frames pass
// untouched when both sides use the same compression threshold (re-encrypted per
// side); otherwise they are re-framed. A side that ends cleanly gets its peer
// half-closed after the last frame, so a kick is delivered before the close,
// never lost to a reset. up and down count frame bytes as read from the client
// and from the backend.
func Relay(client, backend Side) (up, down int64, err error) {
	done := make(chan error, 1)
	go func() {
		var e error
		up, e = copyFrames(backend, client)
		endDirection(backend, client, e)
		done <- e
	}()
	down, err = copyFrames(client, backend)
	endDirection(client, backend, err)
	upErr := <-done
	client.Net.Close()
	backend.Net.Close()
	if err == nil {
		err = upErr
	}
	return up, down, err
}

// copyFrames relays frames from src to dst until src ends; a clean end is nil.
func copyFrames(dst, src Side) (int64, error) {
	var n int64
	for {
		f, err := src.Conn.ReadRaw()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		n += int64(len(f.Bytes))
		if err := dst.Conn.WriteRaw(f); err != nil {
			return n, err
		}
	}
}

// endDirection is what happens when reading src stopped: after a clean end dst
// gets a half-close (everything written so far is delivered first); after an
// error both sockets are closed. Either way src's peer direction gets
// lingerAfterEnd to finish.
func endDirection(dst, src Side, err error) {
	if err == nil {
		if tc, ok := dst.Net.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		} else {
			dst.Net.Close()
		}
	} else if !errors.Is(err, os.ErrDeadlineExceeded) {
		dst.Net.Close()
		src.Net.Close()
		return
	}
	_ = dst.Net.SetReadDeadline(time.Now().Add(lingerAfterEnd))
}
