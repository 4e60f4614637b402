package nmp

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"os/exec"
	"testing"
)

// Decoder runs client.js's decode jobs: node-minecraft-protocol parsing our
// packets with minecraft-data's definitions, an encoder written by others.
type Decoder struct {
	t   testing.TB
	in  *json.Encoder
	out *bufio.Scanner
}

// Decoded is nmp's reading of one packet.
type Decoded struct {
	Name   string         `json:"name"`
	Params map[string]any `json:"params"`
	// Read is how many of the packet's Length bytes nmp's definition read.
	Read   int    `json:"read"`
	Length int    `json:"length"`
	Error  string `json:"error"`
}

// StartDecoder starts one client.js --serve for the test's decode jobs.
func (h *Harness) StartDecoder(t testing.TB) *Decoder {
	t.Helper()
	cmd := exec.Command(h.Node, "client.js", "--serve")
	cmd.Dir = h.Dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	return &Decoder{t: t, in: json.NewEncoder(stdin), out: sc}
}

// Decode has nmp parse clientbound packets (id + payload) of version in state.
func (d *Decoder) Decode(version, state string, frames [][]byte) []Decoded {
	d.t.Helper()
	hexes := make([]string, len(frames))
	for i, f := range frames {
		hexes[i] = hex.EncodeToString(f)
	}
	if err := d.in.Encode(map[string]any{"decode": map[string]any{"version": version, "state": state, "packets": hexes}}); err != nil {
		d.t.Fatal(err)
	}
	for d.out.Scan() {
		var r struct {
			OK      bool      `json:"ok"`
			Error   string    `json:"error"`
			Results []Decoded `json:"results"`
		}
		if json.Unmarshal(d.out.Bytes(), &r) != nil {
			continue // a stray log line
		}
		if !r.OK {
			d.t.Fatalf("%s: decode job failed: %s", version, r.Error)
		}
		return r.Results
	}
	d.t.Fatalf("decoder ended: %v", d.out.Err())
	return nil
}
