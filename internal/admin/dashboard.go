package admin

import (
	"io/fs"
	"net/http"

	"github.com/infrarust-go/infrarust/internal/admin/ui"
)

// The dashboard is served at / of the admin listener ([web] ui): the page and
// its assets need no key (the page asks for one), everything else stays
// behind it. Nothing is loaded from elsewhere (the Content-Security-Policy
// says so to the browser too).

const (
	routeUIPage   = "GET /{$}"
	routeUIAssets = "GET /assets/"
)

// uiHeaders are the security headers of the dashboard's files.
func uiHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

func (s *Server) uiRoutes(m *http.ServeMux) {
	if !s.opts.Web.UI {
		return
	}
	files := http.FileServerFS(ui.Files)
	m.HandleFunc(routeUIPage, func(w http.ResponseWriter, r *http.Request) {
		uiHeaders(w.Header())
		w.Header().Set("Cache-Control", "no-cache")
		page, err := fs.ReadFile(ui.Files, "index.html")
		if err != nil {
			writeError(w, http.StatusInternalServerError, "INTERNAL", err.Error())
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	})
	m.HandleFunc(routeUIAssets, func(w http.ResponseWriter, r *http.Request) {
		uiHeaders(w.Header())
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
