//go:build !linux

// Package rawtcp holds a TCP socket as a bare non-blocking fd behind a net.Conn that
// enters Go's netpoller only when a call must wait. It exists on Linux only; the
// proxy uses Go's net elsewhere.
package rawtcp
