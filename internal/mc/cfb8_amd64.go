//go:build amd64 && !purego

package mc

import (
	"math"
	"time"

	"golang.org/x/sys/cpu"
)

// cfb8Asm says the AES-NI loops can run: they need AES-NI and SSE4.1
// (PINSRB/PEXTRB); a CPU without them takes the portable path.
var cfb8Asm = cpu.X86.HasAES && cpu.X86.HasSSE41

// cfb8Encrypt encrypts n bytes from src to dst (which may be the same
// memory) with the round keys rk, advancing the shift register iv: one
// block per byte, each waiting for the one before.
//
//go:noescape
func cfb8Encrypt(rk *[176]byte, iv *[16]byte, dst, src *byte, n int)

// cfb8Decrypt decrypts n bytes from src to dst (which may be the same
// memory): sixteen blocks per step, built from the ciphertext already read.
//
//go:noescape
func cfb8Decrypt(rk *[176]byte, iv *[16]byte, dst, src *byte, n int)

// aesLatency runs n AES-128 encryptions, each on the output of the one
// before: the block latency, the bound of CFB8 encryption.
//
//go:noescape
func aesLatency(rk *[176]byte, n int)

// aesThroughput runs n AES-128 encryptions as eight independent chains: the
// unit's throughput, the bound of CFB8 decryption.
//
//go:noescape
func aesThroughput(rk *[176]byte, n int)

// AESLimit measures this machine's AES-128 block latency and throughput, in
// ns per block: the floor of CFB8 encryption and decryption per byte. It
// takes about 30 ms; ok is false where the assembly does not run.
func AESLimit() (latency, throughput float64, ok bool) {
	if !cfb8Asm {
		return 0, 0, false
	}
	var rk [176]byte
	expandKey128(&rk, make([]byte, 16))
	const blocks = 1 << 18
	best := func(run func(*[176]byte, int)) float64 {
		b := math.Inf(1)
		for range 3 {
			start := time.Now()
			run(&rk, blocks)
			b = min(b, float64(time.Since(start).Nanoseconds())/blocks)
		}
		return b
	}
	return best(aesLatency), best(aesThroughput), true
}
