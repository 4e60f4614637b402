package nmp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// BotOptions run one mineflayer bot (test/nmp/bot.js): a client whose
// physics (prismarine-physics) falls and collides as vanilla's does.
type BotOptions struct {
	Addr       string // host:port to join
	ServerHost string // the handshake's host name; "" means Addr's host
	Version    string
	Username   string
	// Commands are typed, 300 ms apart, once the bot stands on the ground.
	Commands []string
	// Cheat "teleport" claims the ground at once after spawning; "hover"
	// reports where it was put and then nothing; "replay" sends vanilla's fall
	// from where it was put, every height at once.
	Cheat string
	// Timeout ends the run (default 30 s); the bot reports what it saw.
	Timeout time.Duration
}

// BotResult is what bot.js reports.
type BotResult struct {
	OK         bool      `json:"ok"`
	Spawned    bool      `json:"spawned"`
	Landed     bool      `json:"landed"`
	Kicked     bool      `json:"kicked"`
	KickReason string    `json:"kick_reason"`
	Error      string    `json:"error"`
	Chats      []string  `json:"chats"`
	Titles     []string  `json:"titles"`
	Positions  []float64 `json:"positions"`
	Worlds     int       `json:"worlds"`
	ElapsedMS  int       `json:"elapsed_ms"`
	Raw        string    `json:"-"`
}

// RunBot runs one bot to its end (kicked, disconnected or timed out).
func (h *Harness) RunBot(ctx context.Context, o BotOptions) (BotResult, error) {
	host, port, ok := strings.Cut(o.Addr, ":")
	if !ok {
		return BotResult{}, fmt.Errorf("bot: address %q has no port", o.Addr)
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	args := []string{filepath.Join(h.Dir, "bot.js"), "--host", host, "--port", port, "--version", o.Version,
		"--username", o.Username, "--timeout-ms", strconv.Itoa(int(o.Timeout.Milliseconds())), "--exit-with-stdin"}
	if o.ServerHost != "" {
		args = append(args, "--server-host", o.ServerHost)
	}
	if len(o.Commands) > 0 {
		args = append(args, "--commands", strings.Join(o.Commands, "\n"))
	}
	if o.Cheat != "" {
		args = append(args, "--cheat", o.Cheat)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Node, args...)
	cmd.Dir = h.Dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return BotResult{}, err
	}
	defer stdin.Close()
	if err := cmd.Run(); err != nil {
		return BotResult{}, fmt.Errorf("bot.js: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	line := strings.TrimSpace(stdout.String())
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	var r BotResult
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return BotResult{}, fmt.Errorf("bot.js printed no result (%v):\n%s%s", err, stdout.String(), stderr.String())
	}
	r.Raw = line
	return r, nil
}
