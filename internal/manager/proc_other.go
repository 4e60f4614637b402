//go:build !unix

package manager

import (
	"os"
	"os/exec"
)

var (
	sigTerm = os.Kill // no SIGTERM here: the stop command is the graceful path
	sigKill = os.Kill
)

// setProcAttr has nothing to add where process groups do not exist.
func setProcAttr(*exec.Cmd) {}

// signalGroup signals the process itself.
func signalGroup(p *os.Process, sig os.Signal) { _ = p.Signal(sig) }
