package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/mc"
)

func newStatusCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Query Minecraft servers (and the proxy) like a client does",
		Example: `  infrarust status ping play.example.com
  infrarust status ping play.example.com --address 127.0.0.1:25565`,
	}
	cmd.AddCommand(newStatusPingCmd(g))
	return cmd
}

// pingResult is what `status ping --json` prints.
type pingResult struct {
	Host      string          `json:"host"`
	Address   string          `json:"address"`
	LatencyMS float64         `json:"latency_ms"`
	Version   string          `json:"version"`
	Protocol  int32           `json:"protocol"`
	Online    int             `json:"online"`
	Max       int             `json:"max"`
	MOTD      string          `json:"motd"`
	Raw       json.RawMessage `json:"raw,omitempty"`
	Legacy    bool            `json:"legacy,omitempty"`
}

// exitUnreachable is `status ping`'s exit status when the server does not answer,
// so a script can tell "down" from a mistake on the command line (1).
const exitUnreachable = 2

func newStatusPingCmd(g *globalFlags) *cobra.Command {
	var address string
	var protocol int32
	var legacy, asJSON bool
	var output string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "ping HOST[:PORT]",
		Short: "Ping a server list entry: MOTD, version, players and latency",
		Long: `Run the server-list ping a Minecraft client runs, against HOST[:PORT]
(port 25565 when left out). HOST is also the hostname sent in the handshake, so
pointing --address at the proxy shows what players typing HOST see.

Exits non-zero when the server cannot be reached.`,
		Example: `  infrarust status ping localhost
  infrarust status ping play.example.com --address 127.0.0.1:25565
  infrarust status ping mc.example.com --legacy
  infrarust status ping mc.example.com -o json`,
		Annotations: exitStatusAnnotation(exitUnreachable, "The server could not be reached or did not answer the ping"),
		Args:        exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			asJSON = asJSON || output == "json"
			host, port, err := splitHostPortDefault(args[0])
			if err != nil {
				return err
			}
			dial := net.JoinHostPort(host, strconv.Itoa(int(port)))
			if address != "" {
				if !strings.Contains(address, ":") {
					address = net.JoinHostPort(address, "25565")
				}
				dial = address
			}
			res, err := ping(host, port, dial, protocol, legacy, timeout)
			if err != nil {
				return &exitError{code: exitUnreachable, err: fmt.Errorf("%s unreachable: %w", dial, err)}
			}
			if asJSON {
				enc := json.NewEncoder(g.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			motd := res.MOTD
			if isTTY(g.stdout) && os.Getenv("NO_COLOR") == "" {
				motd = renderColors(motd)
			} else {
				motd = mc.StripColorCodes(motd)
			}
			fmt.Fprintf(g.stdout, "%s (%s)\n", res.Host, res.Address)
			for _, line := range strings.Split(motd, "\n") {
				fmt.Fprintf(g.stdout, "  %s\n", line)
			}
			fmt.Fprintf(g.stdout, "version  %s (protocol %d)\nplayers  %d/%d\nlatency  %.1f ms\n",
				mc.StripColorCodes(res.Version), res.Protocol, res.Online, res.Max, res.LatencyMS)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&address, "address", "", "connect here instead of HOST (e.g. the proxy), still sending HOST in the handshake")
	f.Int32Var(&protocol, "protocol", 767, "protocol version to announce (767 = 1.21)")
	f.BoolVar(&legacy, "legacy", false, "use the pre-1.7 (1.6) legacy ping")
	f.StringVarP(&output, "output", "o", "table", "output format: table or json (json carries the raw status response)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))
	f.BoolVar(&asJSON, "json", false, "the same as -o json")
	f.DurationVar(&timeout, "timeout", 5*time.Second, "give up after this long")
	return cmd
}

func splitHostPortDefault(s string) (string, uint16, error) {
	host, portStr, err := net.SplitHostPort(s)
	if err != nil {
		return strings.Trim(s, "[]"), 25565, nil
	}
	p, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || p == 0 {
		return "", 0, fmt.Errorf("%q: port must be 1-65535", s)
	}
	return host, uint16(p), nil
}

func ping(host string, port uint16, dial string, protocol int32, legacy bool, timeout time.Duration) (*pingResult, error) {
	start := time.Now()
	c, err := net.DialTimeout("tcp", dial, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	res := &pingResult{Host: host, Address: dial}
	if legacy {
		if _, err := c.Write(mc.EncodeLegacyPing(mc.LegacyPing{Form: mc.Legacy16, Protocol: 78, Host: host, Port: int32(port)})); err != nil {
			return nil, err
		}
		st, err := mc.ReadLegacyPingReply(bufio.NewReader(c))
		if err != nil {
			return nil, err
		}
		res.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
		res.Version, res.Protocol, res.Online, res.Max, res.MOTD, res.Legacy = st.Version, st.Protocol, st.Online, st.Max, st.MOTD, true
		return res, nil
	}
	body, rtt, err := mc.QueryStatus(c, host, port, protocol)
	if err != nil && !errors.Is(err, mc.ErrNoPong) {
		return nil, err
	}
	if rtt == 0 {
		rtt = time.Since(start)
	}
	var st mc.StatusResponse
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, fmt.Errorf("status response is not valid JSON: %w", err)
	}
	res.LatencyMS = float64(rtt.Microseconds()) / 1000
	res.Version, res.Protocol, res.Online, res.Max = st.Version.Name, st.Version.Protocol, st.Players.Online, st.Players.Max
	res.MOTD = mc.DescriptionText(st.Description)
	res.Raw = body
	return res, nil
}

// renderColors turns § codes into ANSI escapes for a terminal.
func renderColors(s string) string {
	ansi := map[byte]string{
		'0': "30", '1': "34", '2': "32", '3': "36", '4': "31", '5': "35", '6': "33", '7': "37",
		'8': "90", '9': "94", 'a': "92", 'b': "96", 'c': "91", 'd': "95", 'e': "93", 'f': "97",
		'l': "1", 'm': "9", 'n': "4", 'o': "3", 'r': "0",
	}
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if rs[i] == '§' && i+1 < len(rs) {
			if code, ok := ansi[byte(strings.ToLower(string(rs[i+1]))[0])]; ok {
				b.WriteString("\x1b[" + code + "m")
			}
			i++
			continue
		}
		b.WriteRune(rs[i])
	}
	b.WriteString("\x1b[0m")
	return b.String()
}
