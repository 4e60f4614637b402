// Package ui is the admin dashboard's page, embedded in the binary: plain
// HTML, CSS and ES modules, no build step and nothing fetched from elsewhere,
// so it works with no network and reads as it runs. It talks only to the
// admin API, as a signed-in browser (a session cookie and its CSRF token).
package ui

import "embed"

// Files are the page and its assets, served under / by the admin listener.
//
//go:embed index.html assets
var Files embed.FS
