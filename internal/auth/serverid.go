package auth

import "crypto/sha1"

// ServerIDHash is the serverId both the client (in its join call) and the
// proxy (in hasJoined) send to the session server: Minecraft's SHA-1 digest
// of serverID ("" for vanilla), the shared secret and the public key DER,
// printed as a signed two's-complement hex number without leading zeros.
func ServerIDHash(serverID string, sharedSecret, publicKeyDER []byte) string {
	h := sha1.New()
	h.Write([]byte(serverID))
	h.Write(sharedSecret)
	h.Write(publicKeyDER)
	var sum [sha1.Size]byte
	return MinecraftHexDigest(h.Sum(sum[:0]))
}

// MinecraftHexDigest prints a digest the way Java's new BigInteger(digest).toString(16)
// does, which is how Minecraft turns the SHA-1 into text: the bytes are a signed
// big-endian number, negative numbers get a '-' and their magnitude.
func MinecraftHexDigest(sum []byte) string {
	const digits = "0123456789abcdef"
	if len(sum) == 0 {
		return "0"
	}
	mag := sum
	neg := sum[0]&0x80 != 0
	if neg {
		// Two's-complement negation: invert every bit, then add one from the end.
		var buf [64]byte
		if len(sum) <= len(buf) {
			mag = buf[:len(sum)]
		} else {
			mag = make([]byte, len(sum))
		}
		carry := true
		for i := len(sum) - 1; i >= 0; i-- {
			b := ^sum[i]
			if carry {
				b++
				carry = b == 0
			}
			mag[i] = b
		}
	}
	var ob [1 + 2*64]byte
	out := ob[:0]
	if neg {
		out = append(out, '-')
	}
	started := false
	for _, b := range mag {
		for _, d := range [2]byte{b >> 4, b & 0x0f} {
			if d == 0 && !started {
				continue
			}
			started = true
			out = append(out, digits[d])
		}
	}
	if !started {
		return "0"
	}
	return string(out)
}
