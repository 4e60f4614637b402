package manager

// The test binary doubles as a pretend Minecraft server for the local provider's
// tests: started with fakeServerEnv set, TestMain runs fakeServerMain instead of
// the tests. It listens after a delay, answers status pings, prints a ready line,
// and handles (or ignores) "stop" on stdin; it can also crash on demand. With
// -record it appends what happened to it ("stop", "saved", "term"), one per line
// with the time, so a test can tell a clean stop from a kill. Re-running the test
// binary saves building a separate program for every test run.

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

// fakeServerEnv, set to 1 in a child's environment, makes the test binary a fake server.
const fakeServerEnv = "INFRARUST_MANAGER_TEST_FAKESERVER"

// fakeServerMain is the child process's whole life; it never returns.
func fakeServerMain(args []string) {
	flag := flag.NewFlagSet("fakeserver", flag.ExitOnError)
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	delay := flag.Duration("delay", 0, "wait this long before listening")
	readyLine := flag.String("ready-line", `Done (1.234s)! For help, type "help"`, "line printed once listening")
	ignoreStop := flag.Bool("ignore-stop", false, "ignore stop on stdin")
	ignoreTerm := flag.Bool("ignore-term", false, "ignore SIGTERM")
	stopDelay := flag.Duration("stop-delay", 0, "wait this long after stop before exiting")
	crashAfter := flag.Duration("crash-after", 0, "exit with status 3 this long after starting (0 = never)")
	startsFile := flag.String("starts-file", "", "append one line per start to this file")
	recordFile := flag.String("record", "", "append stop, saved and term events to this file")
	_ = flag.Parse(args)
	rec := recorder(*recordFile)

	if *startsFile != "" {
		f, err := os.OpenFile(*startsFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "starts-file:", err)
			os.Exit(2)
		}
		fmt.Fprintln(f, os.Getpid())
		f.Close()
	}
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM)
	go func() {
		for range terms {
			rec.record("term")
			if !*ignoreTerm {
				os.Exit(143)
			}
		}
	}()
	if *crashAfter > 0 {
		time.AfterFunc(*crashAfter, func() {
			fmt.Fprintln(os.Stderr, "java.lang.OutOfMemoryError: boom")
			os.Exit(3)
		})
	}
	fmt.Println("Starting minecraft server")
	go stdin(rec, *ignoreStop, *stopDelay)
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

func stdin(rec recorder, ignore bool, delay time.Duration) {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if sc.Text() != "stop" {
			continue
		}
		if ignore {
			rec.record("stop")
			fmt.Println("ignoring stop")
			continue
		}
		rec.record("stop")
		fmt.Println("Stopping server")
		time.Sleep(delay) // saving the world
		rec.record("saved")
		os.Exit(0)
	}
}

// recorder is the -record file; "" records nothing.
type recorder string

func (r recorder) record(event string) {
	if r == "" {
		return
	}
	f, err := os.OpenFile(string(r), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		return
	}
	fmt.Fprintf(f, "%s %s\n", event, time.Now().Format(time.RFC3339Nano))
	f.Close()
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
