package proxy

import (
	"errors"

	"golang.org/x/sys/windows"
)

// isRefused reports a dial the backend host actively refused (nothing listens).
func isRefused(err error) bool { return errors.Is(err, windows.WSAECONNREFUSED) }
