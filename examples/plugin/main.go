// Command infrarust-plugin is Infrarust with two handlers compiled in: a
// blocklist and a fallback server for players whose server is down.
//
//	go build -o infrarust-plugin .
//	./infrarust-plugin serve --config /etc/infrarust/infrarust.toml
package main

import (
	"log/slog"
	"os"
	"strings"

	"github.com/infrarust-go/infrarust"

	"example.com/infrarust-plugin/handlers"
)

func main() {
	r := infrarust.NewRegistry()
	handlers.Register(r, handlers.Config{
		Blocked:  strings.Fields(os.Getenv("BLOCKED_PLAYERS")),
		Fallback: os.Getenv("FALLBACK_SERVER"), // for example "limbo-lobby"
		Log:      slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	infrarust.Main(r)
}
