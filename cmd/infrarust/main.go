// Command infrarust is a Minecraft reverse proxy: it routes players by the hostname
// they typed, balances logins across replicas and forwards bytes at kernel speed.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
