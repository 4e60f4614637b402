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
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infrarust-go/infrarust/internal/auth"
)

// cannedServerEnv makes this test binary a canned session server (see TestMain),
// so a benchmark's process CPU is the client's alone, as the proxy's is.
const cannedServerEnv = "INFRARUST_AUTH_CANNED_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(cannedServerEnv) == "1" {
		cannedServerMain()
		return
	}
	os.Exit(m.Run())
}

// cannedServerMain listens on a loopback port, prints its address and answers
// every hasJoined with a Mojang-sized profile until its parent goes.
func cannedServerMain() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	go func() { // the parent closes our stdin when it is done (or dies)
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}()
	answer := cannedHasJoined()
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		go serveCanned(c, answer)
	}
}

// startCannedServer runs the canned session server in a child process and
// returns its base URL.
func startCannedServer(b *testing.B) string {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), cannedServerEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("canned session server: %v", err)
	}
	return "http://" + strings.TrimSpace(addr)
}

// quietGap is the pause before each call of a quiet run: a proxy between
// logins, its threads asleep and its caches and branch history given to others.
const quietGap = 20 * time.Millisecond

// BenchmarkHasJoined is one hasJoined round trip as a client_only login makes
// it: an HTTP/1.1 GET over a kept connection and a Mojang-sized profile (a
// textures property with its 512-byte signature) parsed from JSON, over
// net/http's Transport and over the proxy's own (direct: the call on the
// caller's goroutine, over the proxy's raw sockets on Linux). The session server is another process, so cpu-µs/op is the client's
// CPU per call. hot: calls back to back; quiet: each after quietGap asleep, as
// a login on a quiet proxy makes it (its ns/op counts the gap; cpu-µs/op is
// taken around the call alone). Run quiet with -benchtime 5s or more.
func BenchmarkHasJoined(b *testing.B) {
	base := startCannedServer(b)
	for _, tc := range []struct {
		name string
		dial dialFunc
	}{{"net-http", nil}, {"direct", proxyDial(b)}} {
		for _, quiet := range []bool{false, true} {
			name := tc.name + "/hot"
			if quiet {
				name = tc.name + "/quiet"
			}
			b.Run(name, func(b *testing.B) {
				c, err := auth.NewSessionClient(auth.SessionConfig{BaseURL: base, Timeout: 5 * time.Second, Dial: tc.dial})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				defer auth.CloseIdleConnections()
				ctx := context.Background()
				call := func() {
					if _, err := c.HasJoined(ctx, "Notch", "-4fc1e5a8", netip.Addr{}); err != nil {
						b.Fatal(err)
					}
				}
				call() // also opens the kept connection
				b.ReportAllocs()
				var cpu time.Duration
				if quiet {
					// No collection or scavenging of an earlier run's garbage
					// in the calls' windows.
					debug.FreeOSMemory()
					for b.Loop() {
						time.Sleep(quietGap)
						start := cpuTime()
						call()
						cpu += cpuTime() - start
					}
				} else {
					start := cpuTime()
					for b.Loop() {
						call()
					}
					cpu = cpuTime() - start
				}
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// cannedHasJoined is a whole HTTP answer shaped like Mojang's for a player
// with a skin.
func cannedHasJoined() []byte {
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
		panic(err) // a map of strings always marshals
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

// cpuTime is the process's CPU time to the nanosecond: the sum of its threads'
// run times (getrusage's user and system split is tick-based and rescaled,
// which a sum of many short calls cannot survive).
func cpuTime() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
