//go:build !amd64 || purego

package mc

// cfb8Asm is false where there is no assembly: every stream takes the
// portable path, so these are never called.
const cfb8Asm = false

func cfb8Encrypt(rk *[176]byte, iv *[16]byte, dst, src *byte, n int) {
	panic("mc: no CFB8 assembly on this architecture")
}

func cfb8Decrypt(rk *[176]byte, iv *[16]byte, dst, src *byte, n int) {
	panic("mc: no CFB8 assembly on this architecture")
}

// AESLimit has nothing to measure without the assembly.
func AESLimit() (latency, throughput float64, ok bool) { return 0, 0, false }
