// Command nmplogin measures the proxy's CPU per login with real Minecraft
// clients and a real backend (node-minecraft-protocol, test/nmp), passthrough
// against offline through one built binary: the yardstick issue 31 was filed
// with (--client-only adds online-mode clients through a client_only route).
// The clients send their brand and Client Information as soon as they are in
// configuration, as the vanilla client does (nmp's own client sends neither).
// It needs node and test/nmp's npm packages (npm ci in test/nmp).
//
//	go build -o /tmp/infrarust ./cmd/infrarust
//	go run ./bench/cmd/nmplogin --binary /tmp/infrarust --nmp test/nmp
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/infrarust-go/infrarust/bench"
)

func main() {
	o := bench.NMPLoginOptions{Out: os.Stdout}
	flag.StringVar(&o.Binary, "binary", "", "the infrarust binary to measure (required)")
	flag.StringVar(&o.NMPDir, "nmp", "test/nmp", "test/nmp, with its npm packages installed")
	flag.StringVar(&o.Version, "version", "1.20.4", "Minecraft version of the clients and the backend")
	flag.IntVar(&o.Logins, "logins", 60, "logins per mode in each round")
	flag.IntVar(&o.Clients, "clients", 8, "logins at once (to each proxy with --paired)")
	flag.IntVar(&o.Rounds, "rounds", 16, "rounds (each runs every mode; the order alternates)")
	flag.StringVar(&o.Only, "only", "", "run one mode alone (passthrough, offline, or client_only with --client-only), to profile the proxy meanwhile")
	flag.BoolVar(&o.Paired, "paired", false, "run two proxies of the binary side by side, one mode each (swapped every round), their logins interleaved in one batch: the machine's drift cancels out of each round's ratio")
	flag.BoolVar(&o.ClientOnly, "client-only", false, "also log in online-mode clients through a client_only route (a stand-in session server in this process), and report their extra CPU over offline")
	flag.Parse()
	if o.Binary == "" || o.Logins < 1 || o.Clients < 1 || o.Rounds < 1 {
		fmt.Fprintln(os.Stderr, "nmplogin: --binary is required; --logins, --clients and --rounds must be at least 1")
		flag.Usage()
		os.Exit(2)
	}
	if err := bench.NMPLogins(o); err != nil {
		fmt.Fprintln(os.Stderr, "nmplogin:", err)
		if errors.Is(err, bench.ErrPairedAlone) {
			os.Exit(2) // a usage error, refused before anything starts
		}
		os.Exit(1)
	}
}
