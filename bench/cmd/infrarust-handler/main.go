// Command infrarust-handler is Infrarust with one compiled-in event handler, the
// "one in-process handler" variant of mcbench's events workload: a Login handler
// that looks at every player's name and lets everyone but one in, the cheapest
// real decision a handler makes.
//
//	go build -o /tmp/infrarust-handler ./bench/cmd/infrarust-handler
//	go run ./bench/cmd/mcbench --binary /tmp/infrarust --handler-binary /tmp/infrarust-handler --only events
package main

import (
	"context"

	"github.com/infrarust-go/infrarust"
)

func main() {
	r := infrarust.NewRegistry()
	infrarust.On(r, "bench-deny-one", func(_ context.Context, e *infrarust.Login) {
		if e.Profile.Name == "mallory" {
			e.Deny("not you")
		}
	})
	infrarust.Main(r)
}
