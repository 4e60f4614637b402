package manager

import "testing"

// A provider's error reaches the player who woke the server (so an operator
// on his own join sees what is wrong), without the operator's addresses.
func TestPlayerSafeHidesAddresses(t *testing.T) {
	for in, want := range map[string]string{
		"the start failed: HTTP 403: This action is unauthorized":                               "the start failed: HTTP 403: This action is unauthorized",
		"the start failed: Post \"https://panel.example.com/api/client/servers/ab/power\": EOF": "the start failed: Post \"(address hidden)\": EOF",
		"the start failed: dial tcp 10.0.4.7:8080: connection refused":                          "the start failed: dial tcp (address hidden): connection refused",
		"the start failed: dial tcp [fd00::7]:2375: i/o timeout":                                "the start failed: dial tcp (address hidden): i/o timeout",
		"exited with exit status 1":                                                             "exited with exit status 1",
	} {
		if got := playerSafe(in); got != want {
			t.Errorf("playerSafe(%q) = %q, want %q", in, got, want)
		}
	}
}
