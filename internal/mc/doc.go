// Package mc encodes and decodes the Minecraft Java wire format for the
// proxy: what passthrough needs before it switches to raw byte forwarding
// (VarInts, bounded strings, frames, the handshake, login start, the status
// exchange, login disconnect, the pre-1.7 legacy ping and login), and the
// protocol core the intercepted modes (offline, client_only) stand on.
//
// Everything here is pure encode/decode over io.Reader, *bufio.Reader or
// []byte. The package never dials, never sets deadlines and holds no policy:
// callers own the connection and its timeouts. Decoders treat their input as
// hostile: declared lengths are bounded before anything is read, memory is
// only committed as bytes actually arrive, and malformed input yields an error
// matching one of the sentinel errors below, never a panic.
//
// # How the intercepted pieces fit
//
// Protocol (version.go) is the handshake's protocol number, with the release
// table from 1.7.2 to the newest release (KnownProtocols, ParseVersion,
// AtLeast). Every version quirk is decided from it.
//
// Registry (registry.go) answers "which id does packet X have" and "which
// known packet is id N" per protocol, State and Direction, for the packets
// the proxy acts on (PacketType). Every other id is relayed as an opaque frame.
// RegistryFor(p) fails for versions outside the table: the intercepted modes
// cannot serve them.
//
// Conn (conn.go) is one side of a session in framed form: NewConn over the
// bufio.Reader that read the handshake and the net.Conn. It reads frames as
// decrypt -> length -> decompress and writes them as compress -> length ->
// encrypt; SetCompression and EnableEncryption switch those on mid-stream at
// the points the login reaches them. ReadRaw returns a frame still compressed
// (RawFrame); PeekID reads its packet id by inflating only its first bytes;
// Decode inflates it into a Frame; WriteRaw forwards it to another Conn
// untouched when both sides use the same threshold and re-frames it
// otherwise. Zlib holds the pooled inflaters and deflaters shared by every
// Conn (an idle session holds none); LendBuffers makes a Conn's read buffer a
// loan from a shared pool, given back while the peer is silent, so an idle
// session holds no read buffer either. CFB8 is the AES/CFB8 stream (AES-NI
// assembly on amd64, cfb8_amd64.s), decrypted as far as bytes have arrived.
//
// Packets (loginpackets.go, playpackets.go) are typed values with a
// Decode<Name>(payload, protocol) function and an AppendPayload method; the
// id comes from the Registry and Conn.WritePacket frames the payload. Chat
// components stay JSON; disconnects in configuration and play from 1.20.3
// travel as NBT, converted by nbt.go.
//
// A player's login in offline or client_only mode, after ReadHandshake and
// ReadLoginStart on the bufio.Reader:
//
//	c := mc.NewConn(br, netConn, zlib)
//	// client_only: WritePacket(EncryptionRequest), ReadFrame ->
//	// DecodeEncryptionResponse, check it, c.EnableEncryption(secret)
//	// WritePacket(SetCompression{t}), c.SetCompression(t)
//	// WritePacket(LoginSuccess); 1.20.2+: ReadFrame -> login acknowledged
//
// A backend login is the mirror image: NewConn on the dialled connection,
// WritePacket(handshake and LoginStart), then ReadFrame and dispatch on
// Registry.Type: SetCompression -> c.SetCompression, LoginPluginRequest ->
// answer (forwarding), Disconnect -> kick text, LoginSuccess -> done.
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
