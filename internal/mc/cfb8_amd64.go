//go:build amd64 && !purego

package mc

import "golang.org/x/sys/cpu"

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
