//go:build unix

package auth_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
)

// BenchmarkHasJoined is one hasJoined round trip as a client_only login makes
// it: an HTTP/1.1 GET over a kept connection and a Mojang-sized profile (a
// textures property with its 512-byte signature) parsed from JSON, over
// net/http's Transport and over the proxy's own (direct: the call on the
// caller's goroutine, Go's net dialling here as the proxy's raw sockets do
// there). The server only writes a canned answer, so the process's CPU per
// call (cpu-µs/op) is nearly all the client's side; ns/op also counts the
// loopback's wake-ups.
func BenchmarkHasJoined(b *testing.B) {
	answer := cannedHasJoined(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveCanned(c, answer)
		}
	}()
	for _, tc := range []struct {
		name string
		dial dialFunc
	}{{"net-http", nil}, {"direct", (&net.Dialer{}).DialContext}} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := auth.NewSessionClient(auth.SessionConfig{BaseURL: "http://" + ln.Addr().String(), Timeout: 5 * time.Second, Dial: tc.dial})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			defer auth.CloseIdleConnections()
			ctx := context.Background()
			if _, err := c.HasJoined(ctx, "Notch", "-4fc1e5a8", netip.Addr{}); err != nil {
				b.Fatal(err) // also opens the kept connection
			}
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() { // b.Loop times only the loop itself
				if _, err := c.HasJoined(ctx, "Notch", "-4fc1e5a8", netip.Addr{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// cannedHasJoined is a whole HTTP answer shaped like Mojang's for a player
// with a skin.
func cannedHasJoined(b *testing.B) []byte {
	value := make([]byte, 300)
	sig := make([]byte, 512)
	_, _ = rand.Read(value)
	_, _ = rand.Read(sig)
	body, err := json.Marshal(map[string]any{
		"id": "069a79f444e94726a5befca90e38aaf5", "name": "Notch",
		"properties": []map[string]string{{
			"name": "textures", "value": base64.StdEncoding.EncodeToString(value),
			"signature": base64.StdEncoding.EncodeToString(sig),
		}},
	})
	if err != nil {
		b.Fatal(err)
	}
	head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: %d\r\n\r\n", len(body))
	return append([]byte(head), body...)
}

// serveCanned answers every request on c (a GET: headers, no body) with answer.
func serveCanned(c net.Conn, answer []byte) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		if !bytes.Equal(line, []byte("\r\n")) {
			continue
		}
		if _, err := c.Write(answer); err != nil {
			return
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
