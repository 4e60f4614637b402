package mc

import (
	"bytes"
	"sync"
)

// The heads of compressed packets that reach every player byte for byte. A
// relay reads each compressed packet's id from its first inflated bytes, and
// for a large packet that means decoding a dynamic Huffman block's header
// (a hundred-odd bytes of code lengths) first. A server's configuration
// phase sends every player the same registry and tag packets, so the proxy
// decoded the same header on every login. A side in that phase
// (Conn.ShareHeads) looks its streams up here first.
//
// An entry is the exact prefix of the stream the decoder looked at and what it
// gave: inflateHeadRead never reads past that prefix, so any stream that
// starts with it gives the same bytes. The prefix itself is the key, so two
// streams cannot be confused.

// headMemoMax bounds the prefix an entry holds: a dynamic block's header and
// the first symbols take 50 to 150 bytes.
const headMemoMax = 192

type headMemo struct {
	mu     sync.Mutex
	used   int // bytes of prefix in use; 0: empty
	want   int // the length asked for
	n      int // what the decoder gave
	out    [maxVarIntLen]byte
	prefix [headMemoMax]byte
	// recent: hit since it was stored or since the last stream that would have
	// replaced it, so one stream that does not repeat does not evict a
	// packet every login sends.
	recent bool
}

// headMemos are a few entries, a stream's slot chosen by its first bytes (the
// block header and code length code): a proxy in front of several kinds of
// servers sees a few registry packets.
var headMemos [16]headMemo

func headMemoFor(stream []byte) *headMemo {
	h := uint32(2166136261) // FNV-1a
	for _, b := range stream[:min(len(stream), 16)] {
		h = (h ^ uint32(b)) * 16777619
	}
	return &headMemos[h%uint32(len(headMemos))]
}

// inflateHeadShared is inflateHead for a stream that probably reached other
// players before: answered from headMemos when its prefix is there, and
// remembered there otherwise. A slot busy with another caller is passed by.
func inflateHeadShared(buf, stream []byte) (int, error) {
	m := headMemoFor(stream)
	if m.mu.TryLock() {
		if m.used > 0 && m.want == len(buf) && bytes.HasPrefix(stream, m.prefix[:m.used]) {
			n := copy(buf, m.out[:m.n])
			m.recent = true
			m.mu.Unlock()
			return n, nil
		}
		m.mu.Unlock()
	}
	n, used, dynamic, err := inflateHeadRead(buf, stream)
	// A decoder that ran out of input might have read on in a longer stream:
	// only what it stopped on its own before the end is remembered.
	if err != nil || !dynamic || used >= len(stream) || used > headMemoMax || len(buf) > maxVarIntLen || !m.mu.TryLock() {
		return n, err
	}
	if m.recent {
		m.recent = false // a second chance: the next stream here takes the slot
	} else {
		m.used, m.want, m.n = used, len(buf), copy(m.out[:], buf[:n])
		copy(m.prefix[:], stream[:used])
	}
	m.mu.Unlock()
	return n, nil
}
