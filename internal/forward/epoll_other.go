//go:build !linux

package forward

import "fmt"

// NewEpoll reports that the epoll forwarder exists only on Linux.
func NewEpoll(EpollOptions) (Forwarder, error) {
	return nil, fmt.Errorf("epoll forwarder: %w; use the goroutine forwarder", ErrUnavailable)
}

// TakesFDs reports whether f works on bare fds: never here.
func TakesFDs(Forwarder) bool { return false }
