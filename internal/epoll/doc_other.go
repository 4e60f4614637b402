//go:build !linux

// Package epoll holds what an event loop over an epoll set needs in Go. It exists on
// Linux only.
package epoll
