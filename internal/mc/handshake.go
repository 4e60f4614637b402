package mc

import (
	"bufio"
	"encoding/binary"
	"fmt"
)

// Handshake is the first packet of every modern (1.7+) connection; its
// server address is what the proxy routes on.
type Handshake struct {
	// ProtocolVersion is the client's protocol number, passed through untouched.
	ProtocolVersion int32
	// ServerAddress is the host the player typed, possibly with Forge markers appended.
	ServerAddress string
	// ServerPort is the port the player typed.
	ServerPort uint16
	// NextState is StateStatus, StateLogin or StateTransfer.
	NextState int32
}

// maxHandshakeBody bounds a handshake frame body: id, protocol, address
// (length prefix + 4 bytes per character), port and next state.
const maxHandshakeBody = maxVarIntLen + maxVarIntLen + 2 + MaxServerAddressLen*4 + 2 + maxVarIntLen

// ReadHandshake reads and validates the handshake frame and returns the raw
// frame bytes for relaying. It rejects a packet id other than 0x00, an address
// over MaxServerAddressLen characters, a next state outside 1..3 and trailing
// bytes. It allocates only the raw frame and the address string.
func ReadHandshake(r *bufio.Reader) (Handshake, []byte, error) {
	f, err := ReadFrame(r, maxHandshakeBody)
	if err != nil {
		return Handshake{}, nil, fmt.Errorf("mc: handshake: %w", err)
	}
	h, err := parseHandshake(f)
	if err != nil {
		return Handshake{}, nil, fmt.Errorf("mc: handshake: %w", err)
	}
	return h, f.Raw, nil
}

func parseHandshake(f Frame) (Handshake, error) {
	if f.ID != 0x00 {
		return Handshake{}, fmt.Errorf("packet id 0x%02x, want 0x00: %w", f.ID, ErrMalformed)
	}
	c := cursor{b: f.Payload}
	var h Handshake
	var err error
	if h.ProtocolVersion, err = c.varInt(); err != nil {
		return Handshake{}, fmt.Errorf("protocol version: %w", err)
	}
	if h.ServerAddress, err = c.string(MaxServerAddressLen); err != nil {
		return Handshake{}, fmt.Errorf("server address: %w", err)
	}
	if h.ServerPort, err = c.u16(); err != nil {
		return Handshake{}, fmt.Errorf("server port: %w", err)
	}
	if h.NextState, err = c.varInt(); err != nil {
		return Handshake{}, fmt.Errorf("next state: %w", err)
	}
	if h.NextState < StateStatus || h.NextState > StateTransfer {
		return Handshake{}, fmt.Errorf("next state %d, want 1..3: %w", h.NextState, ErrMalformed)
	}
	if c.rest() != 0 {
		return Handshake{}, fmt.Errorf("%d trailing bytes: %w", c.rest(), ErrMalformed)
	}
	return h, nil
}

// Encode returns the handshake as a complete frame, for the status CLI, the
// prober and for rewriting the address before relaying to a backend.
func (h Handshake) Encode() []byte {
	body := VarIntSize(0) + VarIntSize(h.ProtocolVersion) + VarIntSize(int32(len(h.ServerAddress))) +
		len(h.ServerAddress) + 2 + VarIntSize(h.NextState)
	b := make([]byte, 0, VarIntSize(int32(body))+body)
	b = AppendVarInt(b, int32(body))
	b = AppendVarInt(b, 0x00)
	return h.AppendPayload(b)
}

// AppendPayload appends the handshake payload (after packet id 0x00), for a
// Conn logging in to a backend.
func (h Handshake) AppendPayload(dst []byte) []byte {
	dst = AppendVarInt(dst, h.ProtocolVersion)
	dst = AppendString(dst, h.ServerAddress)
	dst = binary.BigEndian.AppendUint16(dst, h.ServerPort)
	return AppendVarInt(dst, h.NextState)
}
