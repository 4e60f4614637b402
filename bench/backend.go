// Package bench is the load tool behind `go run ./bench/cmd/mcbench`: it starts its
// own backend and an Infrarust proxy on 127.0.0.1, runs every workload once straight
// against the backend (the baseline) and once through the proxy, and reports both.
package bench

import (
	"bufio"
	"encoding/binary"
	"net"

	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// Commands a client sends right after the backend's first login packet; the same
// bytes reach the backend directly (baseline) or through the proxy's forwarder.
const (
	cmdSink   = 'S' // backend reads until EOF, then answers the byte count (8 bytes, big endian)
	cmdSource = 'D' // backend writes until the connection breaks
	cmdEcho   = 'E' // backend echoes what it reads
	cmdIdle   = 'I' // backend waits for EOF (idle session)
)

// firstLoginPacket is what the backend answers a login start with: a frame that is
// not a disconnect (the proxy reads it to detect "server is full" kicks).
var firstLoginPacket = mc.AppendFrame(nil, 0x02, make([]byte, 17))

const chunk = 128 << 10

// startBackend runs the fake Minecraft server used by every workload: status pings
// are answered by fakemc itself, logins get the first packet and then a command.
func startBackend() (*fakemc.Server, error) {
	return fakemc.Start("127.0.0.1:0", fakemc.Options{Name: "bench", Max: 100000, OnLogin: onLogin})
}

func onLogin(c net.Conn, br *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
	if _, err := c.Write(firstLoginPacket); err != nil {
		return
	}
	cmd, err := br.ReadByte()
	if err != nil {
		return
	}
	switch cmd {
	case cmdSink:
		buf := make([]byte, chunk)
		var n int64
		for {
			m, err := br.Read(buf)
			n += int64(m)
			if err != nil {
				break
			}
		}
		var out [8]byte
		binary.BigEndian.PutUint64(out[:], uint64(n))
		_, _ = c.Write(out[:])
	case cmdSource:
		buf := make([]byte, chunk)
		for {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	case cmdEcho:
		buf := make([]byte, 4096)
		for {
			m, err := br.Read(buf)
			if m > 0 {
				if _, werr := c.Write(buf[:m]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	case cmdIdle:
		for { // one byte at a time: an idle backend holds no copy buffer
			if _, err := br.ReadByte(); err != nil {
				return
			}
		}
	}
}
