package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// chromium is Debian's Chromium, which .ci/run installs.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the dashboard's tests need Chromium: apt-get install chromium (.ci/run installs it)")
	return ""
}

// browser is a headless Chromium tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.WindowSize(1280, 800))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	return ctx
}

// The dashboard in a real browser: signed in with the key, a real client's
// login appears on the Players page within 2 s of the backend taking him,
// and the kick typed on the page reaches the client with its reason.
func TestDashboardInARealBrowser(t *testing.T) {
	t.Parallel()
	h := nmp.Setup(t)
	const v, name, reason = "1.21.4", "Dashboarded", "Bye from the dashboard"
	srv := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond, ReportAlive: true})
	server := intercepted(config.ModeOffline, "dash.e2e.test", srv.Addr)
	proxyAddr, adminURL := startWithAdmin(t, server)
	tab := browser(t)

	if err := chromedp.Do(tab,
		chromedp.Navigate(adminURL+"/"),
		chromedp.WaitVisible("#key"),
		chromedp.SendKeys("#key", e2eAdminKey+"\n"),
		chromedp.WaitVisible("#app"),
		chromedp.Navigate(adminURL+"/#players"),
		chromedp.WaitVisible("#page-players"),
	); err != nil {
		t.Fatalf("signing in: %v", err)
	}
	if role, err := chromedp.Run(tab, chromedp.Text("#role")); err != nil || role != "admin" {
		t.Fatalf("signed in as %q (%v)", role, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := goLogin(ctx, h.StartClient(t), heldLogin(proxyAddr, server.Domains[0], v, name))
	waitEvents(ctx, t, srv, "join", name, 1)
	row := `tr[data-player="` + name + `"]`
	deadline := time.Now().Add(2 * time.Second)
	for {
		text, err := chromedp.Run(tab, chromedp.Text("#players"))
		if err == nil && strings.Contains(text, name) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not on the Players page 2 s after the backend took him (the table: %q, %v)", name, text, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	if err := chromedp.Do(tab, chromedp.SendKeys(row+" input", reason+"\n")); err != nil {
		t.Fatalf("kicking from the page: %v", err)
	}
	r := <-run
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !r.res.Kicked || r.res.KickReason != reason {
		t.Fatalf("the client was not kicked with the page's reason: %s", r.res.Raw)
	}
}
