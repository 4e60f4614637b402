// Package fleet holds the end-to-end tests of [fleet]: a real redis-server and
// three real `infrarust serve` processes built from ./cmd/infrarust, driven
// through their admin APIs, the CLI binary and Minecraft logins, as an operator
// runs a fleet (docs/fleet.md). It also holds the fleet's benchmarks. It has no
// code of its own besides the tests.
package fleet
