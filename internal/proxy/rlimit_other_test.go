//go:build !unix

package proxy

import (
	"math"
	"testing"
)

// raiseNoFile: without RLIMIT_NOFILE (Windows) sockets are limited by memory only.
func raiseNoFile(*testing.T) uint64 { return math.MaxUint64 }
