package mc

import (
	"bufio"
	"bytes"
	"testing"
)

// A burst written with WritePackets is byte for byte what WritePacket writes
// packet by packet, in one Write, with compression and encryption on or off.
func TestWritePacketsMatchesWritePacket(t *testing.T) {
	z, err := NewZlib(1)
	if err != nil {
		t.Fatal(err)
	}
	secret := bytes.Repeat([]byte{7}, 16)
	pks := []OutPacket{{0x26, []byte{1, 2, 3}}, {0x6C, bytes.Repeat([]byte("title "), 100)}, {0x00, nil}}
	for _, tc := range []struct {
		name      string
		threshold int
		encrypt   bool
	}{{"plain", -1, false}, {"compressed", 64, false}, {"compressed and encrypted", 64, true}, {"encrypted", -1, true}} {
		one, many := &countWriter{}, &countWriter{}
		a, b := NewConn(nil, one, z), NewConn(nil, many, z)
		for _, c := range []*Conn{a, b} {
			if err := c.SetCompression(tc.threshold); err != nil {
				t.Fatal(err)
			}
			if tc.encrypt {
				if err := c.EnableEncryption(secret); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, pk := range pks {
			if err := a.WritePacket(pk.ID, pk.Payload); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.WritePackets(pks...); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(one.Bytes(), many.Bytes()) {
			t.Errorf("%s: bursts differ", tc.name)
		}
		if many.writes != 1 || one.writes != len(pks) {
			t.Errorf("%s: %d writes for the burst, %d one by one", tc.name, many.writes, one.writes)
		}
		// And it reads back as the same packets.
		r := NewConn(bufio.NewReader(bytes.NewReader(many.Bytes())), nil, z)
		_ = r.SetCompression(tc.threshold)
		if tc.encrypt {
			_ = r.EnableEncryption(secret)
		}
		for _, pk := range pks {
			f, err := r.ReadFrame()
			if err != nil || f.ID != pk.ID || !bytes.Equal(f.Payload, pk.Payload) {
				t.Fatalf("%s: read back %x %v", tc.name, f.ID, err)
			}
		}
	}
	if err := NewConn(nil, &countWriter{}, z).WritePackets(); err != nil {
		t.Errorf("empty burst: %v", err)
	}
	if err := NewConn(nil, &countWriter{}, z).WritePackets(OutPacket{1, make([]byte, MaxFrameSize)}); err == nil {
		t.Error("an oversized packet in a burst was written")
	}
}

type countWriter struct {
	bytes.Buffer
	writes int
}

func (w *countWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// A queued packet leaves with the next write, framed for the compression in
// force when it was queued (a login's Set Compression before its Login
// Success), byte for byte what two WritePackets would send, encrypted or not.
func TestQueuePacketLeavesWithTheNextWrite(t *testing.T) {
	z, err := NewZlib(1)
	if err != nil {
		t.Fatal(err)
	}
	secret := bytes.Repeat([]byte{9}, 16)
	success := bytes.Repeat([]byte("profile "), 40) // above the threshold: deflated
	for _, encrypt := range []bool{false, true} {
		one, queued := &countWriter{}, &countWriter{}
		a, b := NewConn(nil, one, z), NewConn(nil, queued, z)
		if encrypt {
			_ = a.EnableEncryption(secret)
			_ = b.EnableEncryption(secret)
		}
		if err := a.WritePacket(0x03, []byte{64}); err != nil {
			t.Fatal(err)
		}
		_ = a.SetCompression(64)
		if err := a.WritePacket(0x02, success); err != nil {
			t.Fatal(err)
		}
		if err := b.QueuePacket(0x03, []byte{64}); err != nil {
			t.Fatal(err)
		}
		if queued.writes != 0 {
			t.Fatalf("encrypt=%v: QueuePacket wrote", encrypt)
		}
		_ = b.SetCompression(64)
		if err := b.WritePacket(0x02, success); err != nil {
			t.Fatal(err)
		}
		if queued.writes != 1 || !bytes.Equal(one.Bytes(), queued.Bytes()) {
			t.Fatalf("encrypt=%v: %d writes; same bytes as two writes: %v", encrypt, queued.writes, bytes.Equal(one.Bytes(), queued.Bytes()))
		}
		// Flush sends a queued packet on its own.
		if err := b.QueuePacket(0x04, nil); err != nil {
			t.Fatal(err)
		}
		if err := b.Flush(); err != nil || queued.writes != 2 {
			t.Fatalf("encrypt=%v: Flush: %v, %d writes", encrypt, err, queued.writes)
		}
	}
}
