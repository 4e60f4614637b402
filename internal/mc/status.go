package mc

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// StatusResponse is the server list ping JSON, for the CLI, the prober and
// the fallback MOTD. Description stays raw because it is any chat component.
type StatusResponse struct {
	// Version names the server software and the protocol it speaks.
	Version struct {
		Name     string `json:"name"`
		Protocol int32  `json:"protocol"`
	} `json:"version"`
	// Players carries the counts and the hover sample shown in the server list.
	Players struct {
		Max    int            `json:"max"`
		Online int            `json:"online"`
		Sample []PlayerSample `json:"sample,omitempty"`
	} `json:"players"`
	// Description is the MOTD chat component, kept verbatim; see DescriptionText.
	Description json.RawMessage `json:"description"`
	// Favicon is a data:image/png;base64 URI when the server has an icon.
	Favicon string `json:"favicon,omitempty"`
}

// PlayerSample is one entry of the player hover list in the server list.
type PlayerSample struct {
	// Name is the displayed player name.
	Name string `json:"name"`
	// ID is the player's UUID in dashed form.
	ID string `json:"id"`
}

// ParseStatusResponse decodes status JSON so callers need not repeat the
// error wrapping; invalid JSON matches ErrMalformed.
func ParseStatusResponse(js []byte) (StatusResponse, error) {
	var s StatusResponse
	if err := json.Unmarshal(js, &s); err != nil {
		return StatusResponse{}, fmt.Errorf("mc: status json: %w: %w", ErrMalformed, err)
	}
	return s, nil
}

// maxSmallBody bounds frames that carry at most a few fixed fields (status request, ping).
const maxSmallBody = 16

// EncodeStatusRequest returns the status request frame (id 0x00, empty).
func EncodeStatusRequest() []byte { return AppendFrame(nil, 0x00, nil) }

// ReadStatusRequest reads the client's status request so the proxy can answer
// it itself; anything other than an empty 0x00 frame matches ErrMalformed.
func ReadStatusRequest(r *bufio.Reader) error {
	f, err := ReadFrame(r, maxSmallBody)
	if err != nil {
		return fmt.Errorf("mc: status request: %w", err)
	}
	if f.ID != 0x00 || len(f.Payload) != 0 {
		return fmt.Errorf("mc: status request: id 0x%02x with %d payload bytes: %w", f.ID, len(f.Payload), ErrMalformed)
	}
	return nil
}

// EncodeStatusResponse returns the status response frame carrying js verbatim.
func EncodeStatusResponse(js []byte) []byte {
	body := VarIntSize(0) + VarIntSize(int32(len(js))) + len(js)
	b := make([]byte, 0, VarIntSize(int32(body))+body)
	b = AppendVarInt(b, int32(body))
	b = AppendVarInt(b, 0x00)
	return appendBytesString(b, js)
}

// ReadStatusResponse reads a backend's status response and returns its JSON,
// which must be valid JSON of at most MaxStatusJSONLen bytes.
func ReadStatusResponse(r *bufio.Reader) ([]byte, error) {
	f, err := ReadFrame(r, 2*maxVarIntLen+MaxStatusJSONLen)
	if err != nil {
		return nil, fmt.Errorf("mc: status response: %w", err)
	}
	js, err := parseStatusResponse(f)
	if err != nil {
		return nil, fmt.Errorf("mc: status response: %w", err)
	}
	return js, nil
}

func parseStatusResponse(f Frame) ([]byte, error) {
	if f.ID != 0x00 {
		return nil, fmt.Errorf("packet id 0x%02x, want 0x00: %w", f.ID, ErrMalformed)
	}
	c := cursor{b: f.Payload}
	js, err := c.stringBytes(MaxStatusJSONLen)
	if err != nil {
		return nil, err
	}
	if c.rest() != 0 {
		return nil, fmt.Errorf("%d trailing bytes: %w", c.rest(), ErrMalformed)
	}
	if !json.Valid(js) {
		return nil, fmt.Errorf("payload is not JSON: %w", ErrMalformed)
	}
	return js, nil
}

// EncodePing returns a ping (or pong, same layout) frame: id 0x01, int64 big endian.
func EncodePing(payload int64) []byte {
	return binary.BigEndian.AppendUint64([]byte{9, 0x01}, uint64(payload))
}

// ReadPing reads a ping or pong frame and returns its payload.
func ReadPing(r *bufio.Reader) (int64, error) {
	f, err := ReadFrame(r, maxSmallBody)
	if err != nil {
		return 0, fmt.Errorf("mc: ping: %w", err)
	}
	if f.ID != 0x01 || len(f.Payload) != 8 {
		return 0, fmt.Errorf("mc: ping: id 0x%02x with %d payload bytes: %w", f.ID, len(f.Payload), ErrMalformed)
	}
	return int64(binary.BigEndian.Uint64(f.Payload)), nil
}

// QueryStatus runs the whole status exchange over an already-connected
// stream: handshake (next state 1) and status request in one write, status
// response, ping, pong. rtt is the ping/pong round trip. It neither dials nor
// sets deadlines. If the JSON arrived but the pong did not, it returns the
// JSON with an error matching ErrNoPong. The pong payload is not compared,
// since some servers answer with a different value.
func QueryStatus(rw io.ReadWriter, host string, port uint16, protocol int32) (json []byte, rtt time.Duration, err error) {
	out := Handshake{ProtocolVersion: protocol, ServerAddress: host, ServerPort: port, NextState: StateStatus}.Encode()
	out = append(out, EncodeStatusRequest()...)
	if _, err := rw.Write(out); err != nil {
		return nil, 0, fmt.Errorf("mc: send status request: %w", err)
	}
	br := bufio.NewReader(rw)
	js, err := ReadStatusResponse(br)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	if _, err := rw.Write(EncodePing(start.UnixMilli())); err != nil {
		return js, 0, fmt.Errorf("mc: send ping: %w: %w", ErrNoPong, err)
	}
	if _, err := ReadPing(br); err != nil {
		return js, 0, fmt.Errorf("mc: read pong: %w: %w", ErrNoPong, err)
	}
	return js, time.Since(start), nil
}
