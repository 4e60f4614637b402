//go:build unix

package fleet

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// A SIGHUP reloads infrarust.toml for the players already online: Pat, on
// the lobby before the reload, types /hub after it and the proxy answers it
// as /server (the backend never sees it), and his command list gains /hub
// without a reconnect. `config check --diff` said beforehand what the reload
// would apply and what needs a restart; the new bind is named in the log and
// the proxy still serves on the old one. A broken file keeps it all.
func TestE2EReloadAppliesTheFileLive(t *testing.T) {
	h := nmp.Setup(t)
	const v = "1.21.4"
	b := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, Commands: true})
	file := fmt.Sprintf("domains = [%q]\naddresses = [%q]\nproxy_mode = \"offline\"\n", playHost, b.Addr)
	p := startProxy(t, proxyOpts{id: "solo", noFleet: true, servers: map[string]string{"lobby": file}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := h.StartClient(t)
	pat := make(chan nmp.LoginResult, 1)
	go func() {
		res, _ := client.Login(ctx, nmp.LoginOptions{Addr: p.proxyAddr, ServerHost: playHost, Version: v, Username: "Pat",
			UntilKicked: true, Timeout: time.Minute, Commands: []string{"/hub", "/say after"}, CommandGap: 3 * time.Second})
		pat <- res
	}()
	if _, err := b.Wait(ctx, nmp.Match("join", "Pat")); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(p.config)
	if err != nil {
		t.Fatal(err)
	}
	otherBind := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	next := strings.Replace(string(orig), fmt.Sprintf("bind = %q", p.proxyAddr), fmt.Sprintf("bind = %q", otherBind), 1) +
		"\n[commands.server]\naliases = [\"hub\"]\n"
	if err := os.WriteFile(p.config, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := p.cli(t, "config", "check", "--config", p.config, "--diff")
	if err != nil || !lineWith(out, "commands.server.aliases", "a reload applies it") || !lineWith(out, "bind", "needs a restart") {
		t.Errorf("config check --diff: %v\n%s%s", err, out, errOut)
	}
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the reload is logged", func() bool {
		return strings.Contains(p.logText(), "configuration reloaded")
	})
	if !lineWith(p.logText(), "only take effect at a restart", "bind") {
		t.Errorf("the held bind is not named in the log:\n%s", p.logText())
	}
	// A broken file changes nothing.
	if err := os.WriteFile(p.config, []byte(next+"\n[commands\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the broken file is refused", func() bool {
		return strings.Contains(p.logText(), "reload rejected; the running configuration stays in force")
	})
	// Pat types /hub, then a backend command that says he did.
	if _, err := b.Wait(ctx, func(e nmp.Event) bool { return e.Event == "command" && e.Command == "say after" }); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.KickPlayer(ctx, "Pat", "done"); err != nil {
		t.Fatalf("Pat is not online on the old bind after the reloads: %v", err)
	}
	res := <-pat
	if !slices.ContainsFunc(res.Chats, func(l string) bool { return strings.Contains(stripCodes(l), "You are on lobby") }) {
		t.Errorf("/hub was not the proxy's /server after the reload: chats %q", res.Chats)
	}
	if slices.ContainsFunc(b.Events(), func(e nmp.Event) bool { return e.Event == "command" && e.Command == "hub" }) {
		t.Error("the backend got /hub: the alias did not reach the online player")
	}
	trees := res.CommandTrees
	if len(trees) < 2 || slices.Contains(trees[0], "hub") || !slices.Contains(trees[len(trees)-1], "hub") {
		t.Errorf("Pat's command lists: %v; want /hub added without a reconnect", trees)
	}
}
