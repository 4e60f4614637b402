// Package mc encodes and decodes the parts of the Minecraft Java wire format a
// reverse proxy needs before it switches to raw byte forwarding: VarInts,
// bounded strings, frames, the handshake, login start, the status exchange,
// login disconnect, and the pre-1.7 legacy ping and login packets.
//
// Everything here is pure encode/decode over io.Reader, *bufio.Reader or
// []byte. The package never dials, never sets deadlines and holds no policy:
// callers own the connection and its timeouts. Decoders treat their input as
// hostile: declared lengths are bounded before anything is read, memory is
// only committed as bytes actually arrive, and malformed input yields an error
// matching one of the sentinel errors below, never a panic.
package mc

import "errors"

// Sentinel errors let callers classify failures with errors.Is without
// parsing messages (for example to log bad clients at debug level only).
var (
	// ErrFrameTooLarge marks a frame whose declared length exceeds the caller's limit.
	ErrFrameTooLarge = errors.New("mc: frame too large")
	// ErrVarIntTooLong marks a VarInt that does not terminate within 5 bytes.
	ErrVarIntTooLong = errors.New("mc: varint longer than 5 bytes")
	// ErrStringTooLong marks a string over the protocol's limit for that field.
	ErrStringTooLong = errors.New("mc: string too long")
	// ErrMalformed marks input that is structurally wrong for the packet expected.
	ErrMalformed = errors.New("mc: malformed packet")
	// ErrNoPong marks a status exchange whose JSON arrived but whose pong did not,
	// so callers can still use the JSON returned alongside it.
	ErrNoPong = errors.New("mc: no pong after status response")
)

// Protocol limits shared by the decoders and by callers sizing their buffers.
const (
	// MaxFrameSize is the largest frame body (packet id + payload) accepted, as in vanilla (2^21).
	MaxFrameSize = 2 << 20
	// MaxServerAddressLen bounds the handshake server address in characters, as vanilla does.
	MaxServerAddressLen = 255
	// MaxPlayerNameLen bounds the login start player name in characters, as vanilla does.
	MaxPlayerNameLen = 16
	// MaxStatusJSONLen bounds the status response JSON in bytes: vanilla's 32767
	// characters at up to 4 bytes each, which leaves room for a large favicon.
	MaxStatusJSONLen = 32767 * 4
)

// Handshake next_state values, so callers branch on names rather than numbers.
const (
	// StateStatus asks for the server list ping exchange.
	StateStatus = 1
	// StateLogin asks to join the server.
	StateLogin = 2
	// StateTransfer asks to join after a server transfer (1.20.5+).
	StateTransfer = 3
)

const maxVarIntLen = 5
