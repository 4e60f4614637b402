package forwarding

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"net/netip"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// VelocityChannel is the Login Plugin Request channel a modern-forwarding backend asks on.
const VelocityChannel = "velocity:player_info"

// Velocity forwarding versions, as Velocity and Paper number them.
const (
	// VelocityDefault (1) carries address, UUID, name and properties.
	VelocityDefault = 1
	// VelocityWithKey (2) adds the 1.19 chat-signing key.
	VelocityWithKey = 2
	// VelocityWithKeyV2 (3) adds the 1.19.1-1.19.2 key and its signer UUID.
	VelocityWithKeyV2 = 3
	// VelocityLazySession (4) is version 1's layout for 1.19.3+, whose chat session arrives later in play.
	VelocityLazySession = 4
	// VelocityMaxVersion is the newest version this package speaks.
	VelocityMaxVersion = VelocityLazySession
)

// Protocol numbers the negotiation depends on.
const (
	// MinVelocityProtocol is 1.13, the first version with login plugin messages.
	MinVelocityProtocol = 393
	protocol1_19        = 759 // chat keys, revision 1
	protocol1_19_1      = 760 // chat keys, revision 2 (linked to the player UUID), 1.19.1 and 1.19.2
	protocol1_19_3      = 761 // chat sessions replace login keys
)

// HMACSize is the length of the signature that starts every Velocity answer.
const HMACSize = sha256.Size

// Decoder limits, the ones Paper applies.
const (
	maxAddressChars  = 32767
	maxNameChars     = 16
	maxPropertyChars = 32767
	maxKeyBytes      = 512
	maxKeySigBytes   = 4096
)

// KickVelocityTooOld is Velocity's text for a pre-1.13 client on a modern-forwarding server.
const KickVelocityTooOld = "This server is only compatible with Minecraft 1.13 and above."

var (
	// ErrClientTooOld means the client predates 1.13, so the backend cannot ask
	// for Velocity forwarding; the proxy kicks with KickVelocityTooOld.
	ErrClientTooOld = errors.New("forwarding: velocity forwarding needs a Minecraft 1.13 or newer client (login plugin messages)")
	// ErrBadSignature means a Velocity answer's HMAC does not match: the proxy
	// and the backend hold different secrets.
	ErrBadSignature = errors.New("forwarding: velocity forwarding signature does not match; the proxy and the backend use different secrets")
)

// ChatKey is a 1.19-1.19.2 player's chat-signing key from Login Start, which
// versions 2 and 3 forward alongside the profile.
type ChatKey struct {
	// ExpiresAt is the key's expiry; the wire carries epoch milliseconds.
	ExpiresAt time.Time
	// PublicKey is the player's RSA public key, X.509 DER.
	PublicKey []byte
	// Signature is Mojang's signature over the key.
	Signature []byte
	// Holder is the UUID the key is linked to (revision 2, 1.19.1+); valid when HasHolder.
	Holder auth.UUID
	// HasHolder reports whether Holder is known.
	HasHolder bool
}

// Player is what modern forwarding tells the backend.
type Player struct {
	// Addr is the player's real IP address.
	Addr netip.Addr
	// Profile is the authenticated (or offline) identity with its properties.
	Profile auth.Profile
	// ChatKey is the 1.19-1.19.2 chat key, nil when the client sent none.
	ChatKey *ChatKey
}

// CheckVelocityClient refuses clients older than 1.13 before a backend is
// even dialed, as Velocity does.
func CheckVelocityClient(protocol int32) error {
	if protocol < MinVelocityProtocol {
		return fmt.Errorf("%w: the client speaks protocol %d", ErrClientTooOld, protocol)
	}
	return nil
}

// RequestedVersion reads the highest version a backend supports from its
// Login Plugin Request payload: one byte, absent (or any other length) means 1.
func RequestedVersion(payload []byte) int {
	if len(payload) == 1 {
		return int(int8(payload[0])) // Java's readByte is signed
	}
	return VelocityDefault
}

// RequestPayload is the Login Plugin Request payload a backend supporting up
// to maxVersion sends; for test backends.
func RequestPayload(maxVersion int) []byte { return []byte{byte(maxVersion)} }

// NegotiateVersion picks the version to answer with, following Velocity:
// a 1.19.3+ client gets 4 when the backend asks for 4 or more, else 1; a
// 1.19 client with a key gets 2; a 1.19.1-1.19.2 client with a key gets 3
// when asked for 3 or more, else 1 (revision-2 keys do not fit version 2);
// everyone else gets 1. A key on any other protocol is ignored.
func NegotiateVersion(requested int, protocol int32, key *ChatKey) (int, error) {
	if err := CheckVelocityClient(protocol); err != nil {
		return 0, err
	}
	requested = min(requested, VelocityMaxVersion)
	if requested <= VelocityDefault {
		return VelocityDefault, nil
	}
	switch {
	case protocol >= protocol1_19_3:
		if requested >= VelocityLazySession {
			return VelocityLazySession, nil
		}
		return VelocityDefault, nil
	case key == nil:
		return VelocityDefault, nil
	case protocol == protocol1_19:
		return VelocityWithKey, nil
	case protocol == protocol1_19_1:
		if requested >= VelocityWithKeyV2 {
			return VelocityWithKeyV2, nil
		}
		return VelocityDefault, nil
	}
	return VelocityDefault, nil
}

// Velocity signs and verifies modern-forwarding answers with one secret; safe
// for concurrent use. It keeps HMAC states in a pool so an answer costs no
// key schedule and no allocation beyond its buffer.
type Velocity struct {
	pool sync.Pool
}

// NewVelocity prepares a signer for secret (the secret file's content).
func NewVelocity(secret []byte) (*Velocity, error) {
	if len(secret) == 0 {
		return nil, fmt.Errorf("%w: velocity forwarding needs the secret your backends use", ErrEmptySecret)
	}
	key := append([]byte(nil), secret...)
	v := &Velocity{}
	v.pool.New = func() any { return hmac.New(sha256.New, key) }
	return v, nil
}

// Response builds the Login Plugin Response payload for a backend's request:
// it reads the requested version from requestPayload, negotiates with the
// client's protocol and key, and signs. It returns the version chosen.
func (v *Velocity) Response(requestPayload []byte, protocol int32, p Player) ([]byte, int, error) {
	version, err := NegotiateVersion(RequestedVersion(requestPayload), protocol, p.ChatKey)
	if err != nil {
		return nil, 0, err
	}
	out, err := v.AppendResponse(make([]byte, 0, responseSizeHint(p)), version, p)
	return out, version, err
}

// AppendResponse appends HMAC-SHA256(secret, data) || data for an already
// negotiated version. Versions 2 and 3 need p.ChatKey.
func (v *Velocity) AppendResponse(dst []byte, version int, p Player) ([]byte, error) {
	if version < VelocityDefault || version > VelocityMaxVersion {
		return dst, fmt.Errorf("forwarding: velocity version %d is not 1-%d", version, VelocityMaxVersion)
	}
	withKey := version == VelocityWithKey || version == VelocityWithKeyV2
	if withKey && p.ChatKey == nil {
		return dst, fmt.Errorf("forwarding: velocity version %d carries a chat key and the player has none", version)
	}
	if !p.Addr.IsValid() {
		return dst, errors.New("forwarding: the player's address is unknown; velocity forwarding must carry it")
	}
	start := len(dst)
	dst = append(dst, make([]byte, HMACSize)...) // the signature goes here once data is known
	body := len(dst)
	dst = mc.AppendVarInt(dst, int32(version))
	var ab [64]byte // an IPv6 address is at most 39 bytes; no string allocation
	addr := p.Addr.Unmap().WithZone("").AppendTo(ab[:0])
	dst = mc.AppendVarInt(dst, int32(len(addr)))
	dst = append(dst, addr...)
	dst = append(dst, p.Profile.ID[:]...)
	dst = mc.AppendString(dst, p.Profile.Name)
	dst = mc.AppendVarInt(dst, int32(len(p.Profile.Properties)))
	for _, prop := range p.Profile.Properties {
		dst = mc.AppendString(dst, prop.Name)
		dst = mc.AppendString(dst, prop.Value)
		dst = appendBool(dst, prop.Signature != "")
		if prop.Signature != "" {
			dst = mc.AppendString(dst, prop.Signature)
		}
	}
	if withKey {
		k := p.ChatKey
		dst = binary.BigEndian.AppendUint64(dst, uint64(k.ExpiresAt.UnixMilli()))
		dst = mc.AppendVarInt(dst, int32(len(k.PublicKey)))
		dst = append(dst, k.PublicKey...)
		dst = mc.AppendVarInt(dst, int32(len(k.Signature)))
		dst = append(dst, k.Signature...)
		if version == VelocityWithKeyV2 {
			dst = appendBool(dst, k.HasHolder)
			if k.HasHolder {
				dst = append(dst, k.Holder[:]...)
			}
		}
	}
	end := len(dst)
	h := v.pool.Get().(hash.Hash)
	h.Reset()
	h.Write(dst[body:end])
	dst = h.Sum(dst) // appended after the data, then moved to the front
	v.pool.Put(h)
	copy(dst[start:body], dst[end:])
	return dst[:end], nil
}

// responseSizeHint sizes the answer buffer so encoding does not regrow it.
func responseSizeHint(p Player) int {
	n := HMACSize + 5 + 1 + 45 + 16 + 1 + len(p.Profile.Name) + 5 + HMACSize
	for _, prop := range p.Profile.Properties {
		n += 3*3 + 1 + len(prop.Name) + len(prop.Value) + len(prop.Signature)
	}
	if k := p.ChatKey; k != nil {
		n += 8 + 10 + len(k.PublicKey) + len(k.Signature) + 17
	}
	return n
}

// addrString writes the address as Java's getHostAddress would for the same
// socket: IPv4-mapped IPv6 as plain IPv4, no zone.
func addrString(a netip.Addr) string {
	return a.Unmap().WithZone("").String()
}

// Forwarded is a decoded Velocity answer, what a backend learns.
type Forwarded struct {
	// Version is the forwarding version the proxy chose.
	Version int
	// Player is the forwarded identity.
	Player
}

// Verify is the backend's side (what Paper does): it checks the HMAC with
// this signer's secret, then decodes the data. maxVersion is the version the
// backend asked for; an answer above it is refused. Errors wrap
// ErrBadSignature or ErrMalformed.
func (v *Velocity) Verify(payload []byte, maxVersion int) (Forwarded, error) {
	if len(payload) < HMACSize {
		return Forwarded{}, fmt.Errorf("%w: %d bytes is shorter than the signature", ErrMalformed, len(payload))
	}
	sig, data := payload[:HMACSize], payload[HMACSize:]
	h := v.pool.Get().(hash.Hash)
	h.Reset()
	h.Write(data)
	var buf [HMACSize]byte
	ok := hmac.Equal(sig, h.Sum(buf[:0]))
	v.pool.Put(h)
	if !ok {
		return Forwarded{}, ErrBadSignature
	}
	return decodeVelocityData(data, maxVersion)
}

// decodeVelocityData reads the signed part of an answer.
func decodeVelocityData(data []byte, maxVersion int) (Forwarded, error) {
	c := &cursor{b: data}
	ver, err := c.varInt("version")
	if err != nil {
		return Forwarded{}, err
	}
	if ver < VelocityDefault || int(ver) > min(maxVersion, VelocityMaxVersion) {
		return Forwarded{}, fmt.Errorf("%w: version %d, this backend accepts 1-%d", ErrMalformed, ver, min(maxVersion, VelocityMaxVersion))
	}
	f := Forwarded{Version: int(ver)}
	addr, err := c.string(maxAddressChars, "address")
	if err != nil {
		return Forwarded{}, err
	}
	if f.Addr, err = netip.ParseAddr(addr); err != nil {
		return Forwarded{}, fmt.Errorf("%w: address %q is not an IP", ErrMalformed, addr)
	}
	if f.Profile.ID, err = c.uuid("uuid"); err != nil {
		return Forwarded{}, err
	}
	if f.Profile.Name, err = c.string(maxNameChars, "name"); err != nil {
		return Forwarded{}, err
	}
	n, err := c.varInt("property count")
	if err != nil {
		return Forwarded{}, err
	}
	// Each property takes at least 3 bytes, which bounds the count by the input.
	if n < 0 || int(n) > c.remaining()/3 {
		return Forwarded{}, fmt.Errorf("%w: %d properties in %d bytes", ErrMalformed, n, c.remaining())
	}
	if n > 0 {
		f.Profile.Properties = make([]auth.Property, 0, n)
	}
	for i := 0; i < int(n); i++ {
		var p auth.Property
		if p.Name, err = c.string(maxPropertyChars, "property name"); err != nil {
			return Forwarded{}, err
		}
		if p.Value, err = c.string(maxPropertyChars, "property value"); err != nil {
			return Forwarded{}, err
		}
		signed, err := c.bool("property signed")
		if err != nil {
			return Forwarded{}, err
		}
		if signed {
			if p.Signature, err = c.string(maxPropertyChars, "property signature"); err != nil {
				return Forwarded{}, err
			}
		}
		f.Profile.Properties = append(f.Profile.Properties, p)
	}
	if f.Version == VelocityWithKey || f.Version == VelocityWithKeyV2 {
		k := &ChatKey{}
		ms, err := c.int64("key expiry")
		if err != nil {
			return Forwarded{}, err
		}
		k.ExpiresAt = time.UnixMilli(ms).UTC()
		if k.PublicKey, err = c.byteArray(maxKeyBytes, "public key"); err != nil {
			return Forwarded{}, err
		}
		if k.Signature, err = c.byteArray(maxKeySigBytes, "key signature"); err != nil {
			return Forwarded{}, err
		}
		if f.Version == VelocityWithKeyV2 {
			if k.HasHolder, err = c.bool("key holder present"); err != nil {
				return Forwarded{}, err
			}
			if k.HasHolder {
				if k.Holder, err = c.uuid("key holder"); err != nil {
					return Forwarded{}, err
				}
			}
		}
		f.ChatKey = k
	}
	if c.remaining() != 0 {
		return Forwarded{}, fmt.Errorf("%w: %d bytes after the forwarded data", ErrMalformed, c.remaining())
	}
	return f, nil
}
