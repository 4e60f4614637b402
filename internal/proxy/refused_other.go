//go:build !windows

package proxy

import (
	"errors"
	"syscall"
)

// isRefused reports a dial the backend host actively refused (nothing listens).
func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
