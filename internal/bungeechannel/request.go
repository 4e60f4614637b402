package bungeechannel

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrUnknownSubchannel is wrapped when a message names a subcommand the proxy
// does not know; like BungeeCord, the proxy swallows it without an answer.
var ErrUnknownSubchannel = errors.New("unknown BungeeCord subchannel")

// MaxForwardData is the most data a Forward or ForwardToPlayer can carry: its
// length is a signed 16-bit number.
const MaxForwardData = 0x7FFF

// Request is one message a backend sent the proxy on the channel. Which fields
// are set depends on Op; the rest stay empty.
type Request struct {
	Op Op
	// Player is the player named by ConnectOther, IPOther, GetPlayerServer,
	// UUIDOther, KickPlayer(Raw), ForwardToPlayer, and Message(Raw), where
	// "ALL" means every player.
	Player string
	// Server is the server named by Connect, ConnectOther, PlayerCount and
	// PlayerList ("ALL": the whole proxy), ServerIP, and Forward ("ALL" and
	// "ONLINE": every other server).
	Server string
	// Text is a Message or KickPlayer's legacy text (§ codes), or the JSON
	// chat component of MessageRaw and KickPlayerRaw.
	Text string
	// Channel and Data are what Forward and ForwardToPlayer relay. Data shares
	// the decoded payload's memory.
	Channel string
	Data    []byte
}

// DecodeRequest parses one channel payload. Bytes after the last field are
// ignored, as DataInputStream leaves them. It never panics and reads nothing
// past payload; a short or invalid payload is an error wrapping ErrMalformed,
// with only Op set when the subchannel itself was readable.
func DecodeRequest(payload []byte) (Request, error) {
	r := reader{b: payload}
	sub, err := r.utf("subchannel")
	if err != nil {
		return Request{}, err
	}
	req := Request{Op: ParseOp(sub)}
	switch req.Op {
	case OpUnknown:
		return Request{}, fmt.Errorf("%w %q", ErrUnknownSubchannel, truncate(sub, 64))
	case OpIP, OpGetServers, OpGetServer, OpUUID:
	case OpConnect, OpPlayerCount, OpPlayerList, OpServerIP:
		req.Server, err = r.utf("server")
	case OpConnectOther:
		if req.Player, err = r.utf("player"); err == nil {
			req.Server, err = r.utf("server")
		}
	case OpIPOther, OpGetPlayerServer, OpUUIDOther:
		req.Player, err = r.utf("player")
	case OpMessage, OpMessageRaw, OpKickPlayer, OpKickPlayerRaw:
		if req.Player, err = r.utf("player"); err == nil {
			req.Text, err = r.utf("text")
		}
	case OpForward, OpForwardToPlayer:
		target := &req.Server
		if req.Op == OpForwardToPlayer {
			target = &req.Player
		}
		if *target, err = r.utf("target"); err == nil {
			if req.Channel, err = r.utf("channel"); err == nil {
				req.Data, err = r.shortBytes("data")
			}
		}
	}
	if err != nil {
		return Request{Op: req.Op}, fmt.Errorf("%s: %w", req.Op, err)
	}
	return req, nil
}

// AppendTo appends the request as a plugin writes it; the proxy never sends
// requests, test backends and tools do.
func (q Request) AppendTo(dst []byte) ([]byte, error) {
	if q.Op == OpUnknown || q.Op >= numOps {
		return dst, fmt.Errorf("request with no known subcommand: %w", ErrUnknownSubchannel)
	}
	var fields []string
	switch q.Op {
	case OpConnect, OpPlayerCount, OpPlayerList, OpServerIP:
		fields = []string{q.Server}
	case OpConnectOther:
		fields = []string{q.Player, q.Server}
	case OpIPOther, OpGetPlayerServer, OpUUIDOther:
		fields = []string{q.Player}
	case OpMessage, OpMessageRaw, OpKickPlayer, OpKickPlayerRaw:
		fields = []string{q.Player, q.Text}
	case OpForward:
		fields = []string{q.Server}
	case OpForwardToPlayer:
		fields = []string{q.Player}
	}
	out, err := appendUTFs(dst, append([]string{q.Op.String()}, fields...)...)
	if err != nil {
		return dst, fmt.Errorf("%s: %w", q.Op, err)
	}
	if q.Op == OpForward || q.Op == OpForwardToPlayer {
		if out, err = AppendForwarded(out, q.Channel, q.Data); err != nil {
			return dst, fmt.Errorf("%s: %w", q.Op, err)
		}
	}
	return out, nil
}

// AppendForwarded appends what Forward and ForwardToPlayer deliver to the
// target backend on the channel: the plugin's channel name, a 16-bit length
// and the data.
func AppendForwarded(dst []byte, channel string, data []byte) ([]byte, error) {
	if len(data) > MaxForwardData {
		return dst, fmt.Errorf("forward data of %d bytes exceeds %d: %w", len(data), MaxForwardData, ErrTooLong)
	}
	out, err := appendUTF(dst, channel)
	if err != nil {
		return dst, fmt.Errorf("channel: %w", err)
	}
	out = appendUint16(out, uint16(len(data)))
	return append(out, data...), nil
}

// DecodeForwarded parses what AppendForwarded wrote, as the receiving plugin
// reads it.
func DecodeForwarded(payload []byte) (channel string, data []byte, err error) {
	r := reader{b: payload}
	if channel, err = r.utf("channel"); err != nil {
		return "", nil, fmt.Errorf("forwarded message: %w", err)
	}
	if data, err = r.shortBytes("data"); err != nil {
		return "", nil, fmt.Errorf("forwarded message: %w", err)
	}
	return channel, data, nil
}

func appendUTFs(dst []byte, ss ...string) ([]byte, error) {
	var err error
	for _, s := range ss {
		if dst, err = appendUTF(dst, s); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// truncate bounds a hostile string before it reaches an error message or log.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
