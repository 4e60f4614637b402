package infrarust_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust"
	"github.com/infrarust-go/infrarust/internal/hooks"
)

// TestExamplePluginBuilds builds examples/plugin (its own module, with a replace
// directive to this one) the way an operator would, runs its tests, and asks the
// binary how many handlers it has compiled in.
func TestExamplePluginBuilds(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the example: %v", err)
	}
	dir, err := filepath.Abs("examples/plugin")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "infrarust-plugin")
	run := func(env []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// -mod=readonly: the example's go.mod and go.sum must be complete as committed.
	run(nil, goBin, "vet", "-mod=readonly", "./...")
	run(nil, goBin, "test", "-mod=readonly", "./...")
	run(nil, goBin, "build", "-mod=readonly", "-o", bin, ".")
	out := run([]string{"FALLBACK_SERVER=limbo"}, bin, "version")
	if !strings.Contains(out, "with 3 extension handler(s)") {
		t.Errorf("version says %q; want the example's 3 handlers compiled in", out)
	}
}

func TestRunVersionAndBadConfig(t *testing.T) {
	r := infrarust.NewRegistry()
	infrarust.On(r, "a", func(context.Context, *infrarust.PreLogin) {})
	var out, errOut bytes.Buffer
	if code := infrarust.Run(r, []string{"version"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "with 1 extension handler(s)") {
		t.Errorf("version: code %d, out %q, err %q", code, out.String(), errOut.String())
	}
	cfg := filepath.Join(t.TempDir(), "infrarust.toml")
	if err := os.WriteFile(cfg, []byte("[[webhooks]]\nurl = \"ftp://x\"\nevents = [\"login\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if code := infrarust.Run(r, []string{"serve", "--config", cfg}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), `webhooks[0].url: "ftp://x" is not an http(s) URL`) {
		t.Errorf("serve with a bad webhook: code %d, stderr %q", code, errOut.String())
	}
}

// TestPublicTypesAreTheProxys: a handler registered through the public package is
// the one the proxy's dispatcher runs (the types are the same, not copies).
func TestPublicTypesAreTheProxys(t *testing.T) {
	r := infrarust.NewRegistry()
	infrarust.On(r, "deny-bob", func(_ context.Context, e *infrarust.PreLogin) {
		if e.Username == "bob" {
			e.Deny("no bob")
		}
	})
	d, err := hooks.New(hooks.Options{Handlers: r})
	if err != nil {
		t.Fatal(err)
	}
	ev := &hooks.PreLogin{Username: "bob"}
	if res := hooks.Fire(d, context.Background(), ev); !res.Denied() || res.Reason != "no bob" || ev.Result() != res {
		t.Fatalf("result = %+v", res)
	}
	if res := infrarust.Fire(context.Background(), r, &infrarust.PreLogin{Username: "alice"}); res.Action != infrarust.Continue {
		t.Fatalf("alice: %+v", res)
	}
}
