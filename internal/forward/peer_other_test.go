//go:build !linux

package forward

import (
	"fmt"
	"os"
)

const peerEnv = "FORWARD_BENCH_PEER"

// runPeer exists for TestMain: the benchmarks that spawn a peer are Linux-only.
func runPeer() int {
	fmt.Fprintln(os.Stderr, "the benchmark peer runs on Linux only")
	return 2
}
