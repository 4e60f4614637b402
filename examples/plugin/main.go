// Command infrarust-plugin is Infrarust with handlers compiled in: a
// blocklist, a fallback server for players whose server is down, a /discord
// command and a packet filter that keeps World Downloader's channel closed.
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
		Discord:  os.Getenv("DISCORD_INVITE"),
		// World Downloader's channels: its users cannot copy the map.
		BlockedChannels: []string{"wdl:init", "wdl:request", "WDL|INIT", "WDL|REQUEST"},
	})
	infrarust.Main(r)
}
