package admin

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/admin/ui"
)

// The dashboard's page and assets are served without a key (the page asks
// for one) under a policy that loads nothing from elsewhere; everything else
// still needs the key; [web] ui = false serves nothing; the whole page stays
// light.
func TestDashboardFiles(t *testing.T) {
	env := newTestEnv(t, func(o *ServerOptions) { o.Web.UI = true })
	status, hdr, body := env.call(t, "GET", "/", "", "")
	if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") || !strings.Contains(body, `id="signin-form"`) {
		t.Fatalf("GET /: %d %s", status, hdr.Get("Content-Type"))
	}
	if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("CSP %q", csp)
	}
	for _, asset := range []string{"/assets/app.js", "/assets/style.css"} {
		status, hdr, _ := env.call(t, "GET", asset, "", "")
		if status != 200 || hdr.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("GET %s: %d", asset, status)
		}
	}
	for _, path := range []string{"/assets/../ui.go", "/assets/nope.js", "/index.html"} {
		if status, _, _ := env.call(t, "GET", path, "", ""); status == 200 {
			t.Fatalf("GET %s answered 200", path)
		}
	}
	if status, _, _ := env.call(t, "GET", "/api/v1/players", "", ""); status != 401 {
		t.Fatalf("the API without a key beside the page: %d", status)
	}
	for _, name := range []string{"index.html", "assets/app.js", "assets/style.css"} {
		b, err := fs.ReadFile(ui.Files, name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "http://") || strings.Contains(string(b), "https://") {
			t.Errorf("%s names another origin", name)
		}
	}
	total := 0
	_ = fs.WalkDir(ui.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(ui.Files, p)
			total += len(b)
		}
		return nil
	})
	if total > 200<<10 {
		t.Fatalf("the page weighs %d bytes uncompressed, over 200 KiB", total)
	}

	off := newTestEnv(t)
	if status, _, _ := off.call(t, "GET", "/", testKey, ""); status != 404 {
		t.Fatalf("GET / with ui = false: %d", status)
	}
}
