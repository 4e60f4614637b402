package hooks

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/infrarust-go/infrarust/internal/command"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// The plugin surfaces beside the events: commands, packet filters on
// intercepted sessions and transport filters on every connection. They are
// registered on the same Registry before the proxy starts.

// RegisterCommand adds a command players type in the game. It panics on a nil
// command or one without Run, a programming error caught at start.
func RegisterCommand(r *Registry, c *command.Command) {
	if r == nil || c == nil || c.Run == nil || c.Name == "" {
		panic("hooks.RegisterCommand: nil registry, or a command without Name or Run")
	}
	r.commands = append(r.commands, c)
}

// PacketFilter sees chosen packets of intercepted sessions.
type PacketFilter struct {
	Name      string
	Direction mc.Direction
	Types     []mc.PacketType
	Fn        func(pk *PacketContext)
}

// PacketContext is one packet shown to a PacketFilter.
type PacketContext struct {
	// Player and UUID say whose session it is; Server where they are.
	Player, UUID, Server string
	Protocol             int32
	Direction            mc.Direction
	State                mc.State
	Type                 mc.PacketType
	// Payload is the packet after its id, decompressed; Replace changes it.
	Payload []byte
	Changed bool
	Dropped bool
	// Send writes a packet the filter makes to the client (Clientbound) or the
	// backend (Serverbound), in the session's state.
	Send func(d mc.Direction, t mc.PacketType, payload []byte) error
}

// OnPacket registers a packet filter. It panics on an empty list of types.
func OnPacket(r *Registry, f PacketFilter) {
	if r == nil || f.Fn == nil || len(f.Types) == 0 {
		panic(fmt.Sprintf("hooks.OnPacket(%q): nil registry or function, or no packet types", f.Name))
	}
	r.packets = append(r.packets, f)
}

// TransportVerdict is what a transport filter decides about a connection.
type TransportVerdict uint8

// The verdicts.
const (
	TransportContinue TransportVerdict = iota
	TransportReject
)

// TransportConn is a new connection before anything of it was parsed.
type TransportConn struct {
	// ID is unique per connection for the life of the process.
	ID uint64
	// Remote and Local are the TCP endpoints; Client is the player's real address
	// (from a PROXY header when one was received, else Remote's).
	Remote, Local netip.AddrPort
	Client        netip.Addr
	// Accepted is when the proxy accepted it.
	Accepted time.Time
}

// TransportFilter decides on connections before any packet is parsed.
type TransportFilter struct {
	Name string
	// Filter answers; a panic or a run past [events] transport_filter_timeout rejects.
	Filter func(ctx context.Context, c *TransportConn) TransportVerdict
	// Closed, when set, is told when a connection this filter let through closes.
	Closed func(c *TransportConn)
}

// OnTransport registers a transport filter.
func OnTransport(r *Registry, f TransportFilter) {
	if r == nil || f.Filter == nil {
		panic(fmt.Sprintf("hooks.OnTransport(%q): nil registry or filter", f.Name))
	}
	r.transports = append(r.transports, f)
}

// Commands are the plugins' commands.
func (d *Dispatcher) Commands() []*command.Command {
	if d == nil || d.reg == nil {
		return nil
	}
	return d.reg.commands
}

// PacketFilters are the plugins' packet filters, in registration order.
func (d *Dispatcher) PacketFilters() []PacketFilter {
	if d == nil || d.reg == nil {
		return nil
	}
	return d.reg.packets
}

// TransportFilters are the plugins' transport filters, in registration order.
func (d *Dispatcher) TransportFilters() []TransportFilter {
	if d == nil || d.reg == nil {
		return nil
	}
	return d.reg.transports
}

// Drop keeps the packet from going on.
func (pk *PacketContext) Drop() { pk.Dropped = true }

// Replace makes payload the packet's content.
func (pk *PacketContext) Replace(payload []byte) { pk.Payload, pk.Changed = payload, true }

// Name is the packet's name ("chat_command").
func (pk *PacketContext) Name() string { return pk.Type.Name() }

// SendToClient writes a packet (by name) to the player.
func (pk *PacketContext) SendToClient(name string, payload []byte) error {
	t, ok := mc.PacketTypeByName(name)
	if !ok {
		return fmt.Errorf("unknown packet %q", name)
	}
	return pk.Send(mc.Clientbound, t, payload)
}

// SendToServer writes a packet (by name) to the player's backend.
func (pk *PacketContext) SendToServer(name string, payload []byte) error {
	t, ok := mc.PacketTypeByName(name)
	if !ok {
		return fmt.Errorf("unknown packet %q", name)
	}
	return pk.Send(mc.Serverbound, t, payload)
}

// PacketTypes resolves packet names for OnPacket; a name the proxy does not know,
// or one that changes the protocol state, is an error naming the known ones.
func PacketTypes(names []string) ([]mc.PacketType, error) {
	var out []mc.PacketType
	for _, n := range names {
		t, ok := mc.PacketTypeByName(n)
		if !ok {
			return nil, fmt.Errorf("unknown packet %q (known: %v)", n, mc.PacketNames())
		}
		if t.ChangesState() {
			return nil, fmt.Errorf("packet %q changes the connection's state; a filter cannot see it", n)
		}
		out = append(out, t)
	}
	return out, nil
}

// RegisteredCommands are the commands registered on r (for tests of plugins).
func (r *Registry) RegisteredCommands() []*command.Command { return r.commands }

// RegisteredPacketFilters are the packet filters registered on r.
func (r *Registry) RegisteredPacketFilters() []PacketFilter { return r.packets }
