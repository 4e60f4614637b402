package mc

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// Configuration- and play-state packets the proxy acts on while relaying.
// Join game, respawn, registry data and client information are only
// recognised by id (see Registry); the proxy relays or replays their payloads
// verbatim.

// maxPluginChannel17 is 1.7's channel name limit.
const maxPluginChannel17 = 20

// KeepAlive is the liveness ping the server sends and the client echoes.
type KeepAlive struct {
	// ID is echoed back unchanged; it is an int32 in 1.7, a VarInt in
	// 1.8–1.12.1 and an int64 from 1.12.2 (and in configuration).
	ID int64
}

// DecodeKeepAlive parses a keep-alive of protocol p, in play or configuration.
func DecodeKeepAlive(payload []byte, p Protocol) (KeepAlive, error) {
	c := cursor{b: payload}
	var id int64
	var err error
	switch {
	case p.Before(V1_8):
		var v int32
		v, err = c.i32()
		id = int64(v)
	case p.Before(V1_12_2):
		var v int32
		v, err = c.varInt()
		id = int64(v)
	default:
		id, err = c.i64()
	}
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return KeepAlive{}, fmt.Errorf("mc: keep alive: %w", err)
	}
	return KeepAlive{ID: id}, nil
}

// AppendPayload appends the keep-alive in p's layout; older layouts carry the
// low 32 bits of ID.
func (k KeepAlive) AppendPayload(dst []byte, p Protocol) []byte {
	switch {
	case p.Before(V1_8):
		return binary.BigEndian.AppendUint32(dst, uint32(k.ID))
	case p.Before(V1_12_2):
		return AppendVarInt(dst, int32(k.ID))
	}
	return binary.BigEndian.AppendUint64(dst, uint64(k.ID))
}

// Disconnect is a kick with a reason, in login, configuration or play. The
// reason is always held as a JSON chat component; on the wire it is a JSON
// string in login and before 1.20.3, and an NBT component in configuration and
// play from 1.20.3.
type Disconnect struct {
	// Reason is the JSON chat component shown to the player.
	Reason json.RawMessage
}

// DisconnectText builds a Disconnect showing plain text, for the proxy's own kicks.
func DisconnectText(text string) Disconnect {
	return Disconnect{Reason: appendJSONObject1(nil, "text", text)}
}

// Text flattens the reason to plain text for logs and failover patterns.
func (d Disconnect) Text() string { return DescriptionText(d.Reason) }

func disconnectIsNBT(p Protocol, s State) bool {
	return s != LoginState && p.AtLeast(V1_20_3)
}

// DecodeDisconnect parses a disconnect received in state s of protocol p.
func DecodeDisconnect(payload []byte, p Protocol, s State) (Disconnect, error) {
	c := cursor{b: payload}
	var js []byte
	var err error
	if disconnectIsNBT(p, s) {
		js, err = componentNBTToJSON(&c)
	} else {
		if js, err = c.stringBytes(maxChatJSONLen); err == nil && !json.Valid(js) {
			err = fmt.Errorf("reason is not JSON: %w", ErrMalformed)
		}
		js = append([]byte(nil), js...)
	}
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return Disconnect{}, fmt.Errorf("mc: %s disconnect: %w", s, err)
	}
	return Disconnect{Reason: js}, nil
}

// AppendPayload appends the disconnect for state s of protocol p. It fails
// only when Reason is not valid JSON or is too large for the wire.
func (d Disconnect) AppendPayload(dst []byte, p Protocol, s State) ([]byte, error) {
	if disconnectIsNBT(p, s) {
		return componentJSONToNBT(dst, d.Reason)
	}
	if !json.Valid(d.Reason) {
		return nil, fmt.Errorf("mc: disconnect reason is not JSON: %w", ErrMalformed)
	}
	if len(d.Reason) > maxChatJSONLen {
		return nil, fmt.Errorf("mc: disconnect reason of %d bytes exceeds %d: %w", len(d.Reason), maxChatJSONLen, ErrStringTooLong)
	}
	return appendBytesString(dst, d.Reason), nil
}

// PluginMessage is a custom payload on a named channel ("minecraft:brand",
// BungeeCord's and mods' channels), in configuration or play.
type PluginMessage struct {
	// Channel names the channel ("minecraft:brand"; "MC|Brand" before 1.13).
	Channel string
	// Data is the payload; it is the rest of the packet from 1.8 and a
	// 16-bit-length-prefixed array in 1.7.
	Data []byte
}

// DecodePluginMessage parses a plugin message of protocol p.
func DecodePluginMessage(payload []byte, p Protocol) (PluginMessage, error) {
	c := cursor{b: payload}
	var m PluginMessage
	var err error
	if p.Before(V1_8) {
		if m.Channel, err = c.string(maxPluginChannel17); err == nil {
			if m.Data, err = c.shortByteArray(maxStringShort); err == nil {
				err = c.end()
			}
		}
	} else if m.Channel, err = c.string(maxChannelLen); err == nil {
		m.Data, err = c.sizedBytes(c.rest(), MaxUncompressedSize)
	}
	if err != nil {
		return PluginMessage{}, fmt.Errorf("mc: plugin message: %w", err)
	}
	return m, nil
}

// maxStringShort is the largest length a signed 16-bit prefix can carry.
const maxStringShort = 32767

// AppendPayload appends the plugin message in p's layout; in 1.7 data over
// 32767 bytes cannot be expressed and is an error.
func (m PluginMessage) AppendPayload(dst []byte, p Protocol) ([]byte, error) {
	dst = AppendString(dst, m.Channel)
	if p.Before(V1_8) {
		if len(m.Data) > maxStringShort {
			return nil, fmt.Errorf("mc: 1.7 plugin message of %d bytes exceeds %d: %w", len(m.Data), maxStringShort, ErrFrameTooLarge)
		}
		return appendShortBytes(dst, m.Data), nil
	}
	return append(dst, m.Data...), nil
}

// appendJSONObject1 appends {"key":"value"} without HTML escaping.
func appendJSONObject1(dst []byte, key, value string) []byte {
	dst = append(appendJSONString(append(dst, '{'), key), ':')
	return append(appendJSONString(dst, value), '}')
}
