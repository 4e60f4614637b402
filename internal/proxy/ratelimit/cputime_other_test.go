//go:build !unix

package ratelimit

import "time"

// processCPU is not measured off Unix; benchmarks then report wall time only.
func processCPU() (time.Duration, bool) { return 0, false }
