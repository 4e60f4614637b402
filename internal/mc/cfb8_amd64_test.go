//go:build amd64 && !purego

package mc

import "testing"

// BenchmarkAESLimit measures what bounds CFB8 on this machine: an AES-128
// block's latency (encryption: each block waits for the one before) and the
// unit's throughput (decryption: blocks independent). ns/op is per block,
// which is per stream byte; SetBytes makes MB/s the ceiling of each
// direction. docs/benchmarks.md sets the relay's figures beside these.
func BenchmarkAESLimit(b *testing.B) {
	if !cfb8Asm {
		b.Skip("no AES-NI on this machine")
	}
	var rk [176]byte
	expandKey128(&rk, make([]byte, 16))
	const blocks = 4096
	b.Run("latency", func(b *testing.B) {
		b.SetBytes(blocks)
		for b.Loop() {
			aesLatency(&rk, blocks)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*blocks), "ns/block")
	})
	b.Run("throughput", func(b *testing.B) {
		b.SetBytes(blocks)
		for b.Loop() {
			aesThroughput(&rk, blocks)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*blocks), "ns/block")
	})
}
