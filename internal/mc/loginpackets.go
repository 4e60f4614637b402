package mc

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// Login-state packets the intercepted modes exchange with players and
// backends. Each has a Decode function over a frame payload (the bytes after
// the packet id) and an AppendPayload method; the id comes from the Registry
// and Conn.WritePacket frames the result. Decoders copy what they keep, bound
// every length and reject trailing bytes.

// Bounds on login fields. Vanilla keys and tokens are far smaller (an RSA-1024
// key is 162 bytes, tokens 4, encrypted values 128); the slack admits larger
// keys without admitting nonsense.
const (
	maxLoginBytes      = 1024
	maxServerIDLen     = 20
	maxPropertyName    = 64
	maxPropertyValue   = 32767
	maxPropertySig     = 1024
	maxProperties      = 64
	maxChannelLen      = 32767
	maxLoginPluginData = 1 << 20
)

// EncryptionRequest is the server's request to switch on encryption (and, in
// online mode, to authenticate with the session server).
type EncryptionRequest struct {
	// ServerID is empty in vanilla since 1.7; it feeds the server-id hash.
	ServerID string
	// PublicKey is the server's RSA public key in DER (X.509) form.
	PublicKey []byte
	// VerifyToken is random bytes the client must return encrypted.
	VerifyToken []byte
	// ShouldAuthenticate tells a 1.20.5+ client whether to contact the session
	// server; older clients always do, and it decodes as true for them.
	ShouldAuthenticate bool
}

// DecodeEncryptionRequest parses an encryption request, so the proxy logging
// in to a backend can tell an online-mode backend it cannot join.
func DecodeEncryptionRequest(payload []byte, p Protocol) (EncryptionRequest, error) {
	c := cursor{b: payload}
	var e EncryptionRequest
	var err error
	if e.ServerID, err = c.string(maxServerIDLen); err != nil {
		return EncryptionRequest{}, fmt.Errorf("mc: encryption request server id: %w", err)
	}
	arr := c.byteArray
	if p.Before(V1_8) {
		arr = c.shortByteArray
	}
	if e.PublicKey, err = arr(maxLoginBytes); err != nil {
		return EncryptionRequest{}, fmt.Errorf("mc: encryption request public key: %w", err)
	}
	if e.VerifyToken, err = arr(maxLoginBytes); err != nil {
		return EncryptionRequest{}, fmt.Errorf("mc: encryption request verify token: %w", err)
	}
	e.ShouldAuthenticate = true
	if p.AtLeast(V1_20_5) {
		if e.ShouldAuthenticate, err = c.boolean(); err != nil {
			return EncryptionRequest{}, fmt.Errorf("mc: encryption request should-authenticate: %w", err)
		}
	}
	if err := c.end(); err != nil {
		return EncryptionRequest{}, fmt.Errorf("mc: encryption request: %w", err)
	}
	return e, nil
}

// AppendPayload appends the request in p's layout.
func (e EncryptionRequest) AppendPayload(dst []byte, p Protocol) []byte {
	dst = AppendString(dst, e.ServerID)
	if p.Before(V1_8) {
		dst = appendShortBytes(appendShortBytes(dst, e.PublicKey), e.VerifyToken)
		return dst
	}
	dst = appendBytesString(appendBytesString(dst, e.PublicKey), e.VerifyToken)
	if p.AtLeast(V1_20_5) {
		dst = appendBool(dst, e.ShouldAuthenticate)
	}
	return dst
}

// EncryptionResponse is the client's answer: the shared secret and the verify
// token, both encrypted with the server's public key. A 1.19–1.19.2 client
// holding a chat signing key may instead sign the token (Signed).
type EncryptionResponse struct {
	// SharedSecret is the RSA-encrypted 16-byte AES key.
	SharedSecret []byte
	// VerifyToken is the RSA-encrypted verify token; nil when Signed.
	VerifyToken []byte
	// Signed marks the 1.19–1.19.2 form: Salt and Signature replace VerifyToken.
	Signed bool
	// Salt is mixed into the signed data (1.19–1.19.2 signed form).
	Salt int64
	// Signature signs verify token + salt with the player's chat key from
	// login start (SHA256withRSA).
	Signature []byte
}

// DecodeEncryptionResponse parses the client's encryption response.
func DecodeEncryptionResponse(payload []byte, p Protocol) (EncryptionResponse, error) {
	c := cursor{b: payload}
	var e EncryptionResponse
	var err error
	arr := c.byteArray
	if p.Before(V1_8) {
		arr = c.shortByteArray
	}
	if e.SharedSecret, err = arr(maxLoginBytes); err != nil {
		return EncryptionResponse{}, fmt.Errorf("mc: encryption response shared secret: %w", err)
	}
	hasToken := true
	if p.AtLeast(V1_19) && p.Before(V1_19_3) {
		if hasToken, err = c.boolean(); err != nil {
			return EncryptionResponse{}, fmt.Errorf("mc: encryption response token flag: %w", err)
		}
	}
	if hasToken {
		if e.VerifyToken, err = arr(maxLoginBytes); err != nil {
			return EncryptionResponse{}, fmt.Errorf("mc: encryption response verify token: %w", err)
		}
	} else {
		e.Signed = true
		if e.Salt, err = c.i64(); err != nil {
			return EncryptionResponse{}, fmt.Errorf("mc: encryption response salt: %w", err)
		}
		if e.Signature, err = arr(maxLoginBytes); err != nil {
			return EncryptionResponse{}, fmt.Errorf("mc: encryption response signature: %w", err)
		}
	}
	if err := c.end(); err != nil {
		return EncryptionResponse{}, fmt.Errorf("mc: encryption response: %w", err)
	}
	return e, nil
}

// AppendPayload appends the response in p's layout. The signed form exists
// only in 1.19–1.19.2; for other versions Signed is ignored and VerifyToken sent.
func (e EncryptionResponse) AppendPayload(dst []byte, p Protocol) []byte {
	if p.Before(V1_8) {
		return appendShortBytes(appendShortBytes(dst, e.SharedSecret), e.VerifyToken)
	}
	dst = appendBytesString(dst, e.SharedSecret)
	if p.AtLeast(V1_19) && p.Before(V1_19_3) {
		dst = appendBool(dst, !e.Signed)
		if e.Signed {
			dst = binary.BigEndian.AppendUint64(dst, uint64(e.Salt))
			return appendBytesString(dst, e.Signature)
		}
	}
	return appendBytesString(dst, e.VerifyToken)
}

// Property is one game-profile property, such as the "textures" skin, whose
// value and signature the proxy passes on untouched.
type Property struct {
	// Name is the property name ("textures").
	Name string
	// Value is the base64 value as issued by the session server.
	Value string
	// Signature is the session server's base64 signature; "" when unsigned.
	Signature string
}

// LoginSuccess ends the login state: the identity the player will play as.
type LoginSuccess struct {
	// UUID is the player's UUID (the offline UUID in offline mode).
	UUID [16]byte
	// Name is the player name.
	Name string
	// Properties travel in login success from 1.19 on; older versions drop
	// them here (the server sends them with the player list instead).
	Properties []Property
	// SessionID is a per-session UUID that 26.2+ carries after the properties.
	SessionID [16]byte
}

// DecodeLoginSuccess parses a backend's login success.
func DecodeLoginSuccess(payload []byte, p Protocol) (LoginSuccess, error) {
	c := cursor{b: payload}
	var l LoginSuccess
	var err error
	if p.AtLeast(V1_16) {
		if l.UUID, err = c.uuid(); err != nil {
			return LoginSuccess{}, fmt.Errorf("mc: login success uuid: %w", err)
		}
	} else {
		s, err := c.string(36)
		if err != nil {
			return LoginSuccess{}, fmt.Errorf("mc: login success uuid: %w", err)
		}
		if l.UUID, err = ParseUUID(s); err != nil {
			return LoginSuccess{}, fmt.Errorf("mc: login success uuid: %w", err)
		}
	}
	if l.Name, err = c.string(MaxPlayerNameLen); err != nil {
		return LoginSuccess{}, fmt.Errorf("mc: login success name: %w", err)
	}
	if p.AtLeast(V1_19) {
		if l.Properties, err = readProperties(&c); err != nil {
			return LoginSuccess{}, fmt.Errorf("mc: login success properties: %w", err)
		}
	}
	if p == V1_20_5 || p == V1_21 {
		if _, err = c.boolean(); err != nil { // strict error handling, dropped in 1.21.2
			return LoginSuccess{}, fmt.Errorf("mc: login success strict-error-handling flag: %w", err)
		}
	}
	if p.AtLeast(V26_2) {
		if l.SessionID, err = c.uuid(); err != nil {
			return LoginSuccess{}, fmt.Errorf("mc: login success session id: %w", err)
		}
	}
	if err := c.end(); err != nil {
		return LoginSuccess{}, fmt.Errorf("mc: login success: %w", err)
	}
	return l, nil
}

// AppendPayload appends the login success in p's layout; 1.20.5–1.21.1 get
// strict error handling on, as vanilla servers send it.
func (l LoginSuccess) AppendPayload(dst []byte, p Protocol) []byte {
	switch {
	case p.AtLeast(V1_16):
		dst = append(dst, l.UUID[:]...)
	case p.AtLeast(V1_7_6):
		dst = AppendString(dst, FormatUUID(l.UUID))
	default:
		dst = AppendString(dst, hex.EncodeToString(l.UUID[:]))
	}
	dst = AppendString(dst, l.Name)
	if p.AtLeast(V1_19) {
		dst = appendProperties(dst, l.Properties)
	}
	if p == V1_20_5 || p == V1_21 {
		dst = appendBool(dst, true)
	}
	if p.AtLeast(V26_2) {
		dst = append(dst, l.SessionID[:]...)
	}
	return dst
}

func readProperties(c *cursor) ([]Property, error) {
	n, err := c.varInt()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > maxProperties {
		return nil, fmt.Errorf("mc: %d properties, want 0..%d: %w", n, maxProperties, ErrMalformed)
	}
	var props []Property
	for range n {
		var pr Property
		if pr.Name, err = c.string(maxPropertyName); err != nil {
			return nil, err
		}
		if pr.Value, err = c.string(maxPropertyValue); err != nil {
			return nil, err
		}
		signed, err := c.boolean()
		if err != nil {
			return nil, err
		}
		if signed {
			if pr.Signature, err = c.string(maxPropertySig); err != nil {
				return nil, err
			}
		}
		props = append(props, pr)
	}
	return props, nil
}

func appendProperties(dst []byte, props []Property) []byte {
	dst = AppendVarInt(dst, int32(len(props)))
	for _, pr := range props {
		dst = AppendString(AppendString(dst, pr.Name), pr.Value)
		dst = appendBool(dst, pr.Signature != "")
		if pr.Signature != "" {
			dst = AppendString(dst, pr.Signature)
		}
	}
	return dst
}

// SetCompression switches on compression for the rest of the connection
// (1.8+); after it, both sides frame packets in compressed form.
type SetCompression struct {
	// Threshold is the smallest packet size that is deflated; negative disables.
	Threshold int32
}

// DecodeSetCompression parses the backend's compression threshold.
func DecodeSetCompression(payload []byte) (SetCompression, error) {
	c := cursor{b: payload}
	t, err := c.varInt()
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return SetCompression{}, fmt.Errorf("mc: set compression: %w", err)
	}
	return SetCompression{Threshold: t}, nil
}

// AppendPayload appends the threshold.
func (s SetCompression) AppendPayload(dst []byte) []byte { return AppendVarInt(dst, s.Threshold) }

// LoginPluginRequest is a server's custom login query (1.13+), the channel
// Velocity modern forwarding runs on.
type LoginPluginRequest struct {
	// MessageID pairs the request with its response.
	MessageID int32
	// Channel is the plugin channel ("velocity:player_info").
	Channel string
	// Data is the rest of the packet.
	Data []byte
}

// DecodeLoginPluginRequest parses a backend's login plugin request.
func DecodeLoginPluginRequest(payload []byte) (LoginPluginRequest, error) {
	c := cursor{b: payload}
	var l LoginPluginRequest
	var err error
	if l.MessageID, err = c.varInt(); err != nil {
		return LoginPluginRequest{}, fmt.Errorf("mc: login plugin request message id: %w", err)
	}
	if l.Channel, err = c.string(maxChannelLen); err != nil {
		return LoginPluginRequest{}, fmt.Errorf("mc: login plugin request channel: %w", err)
	}
	if l.Data, err = c.sizedBytes(c.rest(), maxLoginPluginData); err != nil {
		return LoginPluginRequest{}, fmt.Errorf("mc: login plugin request data: %w", err)
	}
	return l, nil
}

// AppendPayload appends the request.
func (l LoginPluginRequest) AppendPayload(dst []byte) []byte {
	return append(AppendString(AppendVarInt(dst, l.MessageID), l.Channel), l.Data...)
}

// LoginPluginResponse answers a LoginPluginRequest (1.13+); a client that
// does not know the channel answers Successful = false with no data.
type LoginPluginResponse struct {
	// MessageID is the request's MessageID.
	MessageID int32
	// Successful says the channel was understood and Data follows.
	Successful bool
	// Data is the rest of the packet (only when Successful).
	Data []byte
}

// DecodeLoginPluginResponse parses a login plugin response.
func DecodeLoginPluginResponse(payload []byte) (LoginPluginResponse, error) {
	c := cursor{b: payload}
	var l LoginPluginResponse
	var err error
	if l.MessageID, err = c.varInt(); err != nil {
		return LoginPluginResponse{}, fmt.Errorf("mc: login plugin response message id: %w", err)
	}
	if l.Successful, err = c.boolean(); err != nil {
		return LoginPluginResponse{}, fmt.Errorf("mc: login plugin response flag: %w", err)
	}
	if l.Successful {
		if l.Data, err = c.sizedBytes(c.rest(), maxLoginPluginData); err != nil {
			return LoginPluginResponse{}, fmt.Errorf("mc: login plugin response data: %w", err)
		}
	} else if err := c.end(); err != nil {
		return LoginPluginResponse{}, fmt.Errorf("mc: login plugin response: %w", err)
	}
	return l, nil
}

// AppendPayload appends the response; Data is dropped when not Successful.
func (l LoginPluginResponse) AppendPayload(dst []byte) []byte {
	dst = appendBool(AppendVarInt(dst, l.MessageID), l.Successful)
	if l.Successful {
		dst = append(dst, l.Data...)
	}
	return dst
}

// DecodeEmpty checks that a packet which carries nothing (login acknowledged,
// finish configuration, start configuration, configuration acknowledged) is
// indeed empty.
func DecodeEmpty(payload []byte) error {
	if len(payload) != 0 {
		return fmt.Errorf("mc: %d bytes in an empty packet: %w", len(payload), ErrMalformed)
	}
	return nil
}

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func appendShortBytes(dst, p []byte) []byte {
	return append(binary.BigEndian.AppendUint16(dst, uint16(len(p))), p...)
}

// FormatUUID writes u in the dashed form (8-4-4-4-12) players and APIs use.
func FormatUUID(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// ParseUUID reads a UUID in dashed or undashed hex form, as 1.7.6–1.15 and
// 1.7.2–1.7.5 send it in login success; anything else matches ErrMalformed.
func ParseUUID(s string) ([16]byte, error) {
	var u [16]byte
	var digits []byte
	switch len(s) {
	case 32:
		digits = []byte(s)
	case 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return u, fmt.Errorf("mc: uuid %q: %w", s, ErrMalformed)
		}
		digits = []byte(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:])
	default:
		return u, fmt.Errorf("mc: uuid %q: %w", s, ErrMalformed)
	}
	if _, err := hex.Decode(u[:], digits); err != nil {
		return u, fmt.Errorf("mc: uuid %q: %w", s, ErrMalformed)
	}
	return u, nil
}
