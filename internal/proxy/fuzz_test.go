package proxy

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// The parsing the pipeline does itself, before internal/mc: the handshake precheck,
// hostname normalisation and routing. None may panic, and a frame the precheck lets
// through must be one ReadHandshake can decide on.
func FuzzPipelineParsing(f *testing.F) {
	f.Add(mc.Handshake{ProtocolVersion: 767, ServerAddress: "Play.Example.com\x00FML\x00", ServerPort: 25565, NextState: 2}.Encode())
	f.Add([]byte("GET / HTTP/1.1\r\n"))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x00})
	f.Add([]byte("\x16\x03\x01\x02\x00\x01"))
	r := newRouter(map[string]string{"play.example.com": "a", "*.example.com": "b", "mc?.net": "c", "*": "d"})
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(data), 4096)
		_, _ = br.Peek(1)
		if err := precheckHandshake(br); err != nil {
			return
		}
		hs, _, err := mc.ReadHandshake(br)
		if err != nil {
			return
		}
		host := NormalizeHost(hs.ServerAddress)
		// A '/' is never in a hostname; path.Match does not let '*' cross it.
		if _, ok := r.lookup(host); !ok && !strings.Contains(host, "/") {
			t.Fatalf("the catch-all route must match %q", host)
		}
	})
}
