// Command fakeserver pretends to be a Minecraft server for the manager's tests:
// it listens after a delay, answers status pings, prints a ready line, and
// handles (or ignores) "stop" on stdin; it can also crash on demand.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	delay := flag.Duration("delay", 0, "wait this long before listening")
	readyLine := flag.String("ready-line", `Done (1.234s)! For help, type "help"`, "line printed once listening")
	ignoreStop := flag.Bool("ignore-stop", false, "ignore stop on stdin")
	ignoreTerm := flag.Bool("ignore-term", false, "ignore SIGTERM")
	stopDelay := flag.Duration("stop-delay", 0, "wait this long after stop before exiting")
	crashAfter := flag.Duration("crash-after", 0, "exit with status 3 this long after starting (0 = never)")
	startsFile := flag.String("starts-file", "", "append one line per start to this file")
	flag.Parse()

	if *startsFile != "" {
		f, err := os.OpenFile(*startsFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "starts-file:", err)
			os.Exit(2)
		}
		fmt.Fprintln(f, os.Getpid())
		f.Close()
	}
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if *crashAfter > 0 {
		time.AfterFunc(*crashAfter, func() {
			fmt.Fprintln(os.Stderr, "java.lang.OutOfMemoryError: boom")
			os.Exit(3)
		})
	}
	fmt.Println("Starting minecraft server")
	go stdin(*ignoreStop, *stopDelay)
	time.Sleep(*delay)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(2)
	}
	fmt.Println(*readyLine)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go serve(c)
	}
}

func stdin(ignore bool, delay time.Duration) {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if sc.Text() != "stop" {
			continue
		}
		if ignore {
			fmt.Println("ignoring stop")
			continue
		}
		fmt.Println("Stopping server")
		time.Sleep(delay)
		os.Exit(0)
	}
}

func serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	hs, _, err := mc.ReadHandshake(br)
	if err != nil {
		return
	}
	if hs.NextState == mc.StateLogin {
		// Enough of a login to show a player landed on the woken server.
		if ls, _, err := mc.ReadLoginStart(br, hs.ProtocolVersion); err == nil {
			_, _ = c.Write(mc.EncodeLoginDisconnect("You reached the woken server (as " + ls.Name + ")"))
		}
		return
	}
	if hs.NextState != mc.StateStatus {
		return
	}
	if err := mc.ReadStatusRequest(br); err != nil {
		return
	}
	js, _ := json.Marshal(map[string]any{
		"version":     map[string]any{"name": "fake", "protocol": hs.ProtocolVersion},
		"players":     map[string]any{"max": 20, "online": 0},
		"description": map[string]any{"text": "fake"},
	})
	if _, err := c.Write(mc.EncodeStatusResponse(js)); err != nil {
		return
	}
	if p, err := mc.ReadPing(br); err == nil {
		_, _ = c.Write(mc.EncodePing(p))
	}
}
