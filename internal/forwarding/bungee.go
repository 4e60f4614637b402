package forwarding

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf16"

	"github.com/infrarust-go/infrarust/internal/auth"
)

// BungeeGuardTokenProperty is the property name the BungeeGuard plugin reads its token from.
const BungeeGuardTokenProperty = "bungeeguard-token"

// MaxBungeeHostLen is the longest server address a BungeeCord-forwarding
// backend reads (Spigot raises vanilla's 255 to Java's 32767 characters).
const MaxBungeeHostLen = 32767

// bungeeSep separates the fields inside the server-address field.
const bungeeSep = "\x00"

// ErrNoBungeeGuardToken means a BungeeGuard handshake carries no token (or
// more than one): the backend refuses it, as the BungeeGuard plugin does.
var ErrNoBungeeGuardToken = errors.New("forwarding: the handshake carries no single bungeeguard-token")

// BungeeCordHost is the handshake server address for BungeeCord forwarding:
// host NUL ip NUL undashed-uuid, then NUL and the properties as JSON only when
// the profile has any (BungeeCord's rule; offline players have none). host is
// cut at its first NUL, which drops a Forge marker the way BungeeCord does.
// The result must fit MaxBungeeHostLen.
func BungeeCordHost(host string, addr netip.Addr, p auth.Profile) (string, error) {
	return bungeeHost(host, addr, p.ID, p.Properties)
}

// BungeeGuardHost is BungeeCordHost with the token appended as a
// "bungeeguard-token" property, so the properties part is always present.
func BungeeGuardHost(host string, addr netip.Addr, p auth.Profile, token string) (string, error) {
	if token == "" {
		return "", fmt.Errorf("%w: bungee_guard forwarding needs a token", ErrEmptySecret)
	}
	props := make([]auth.Property, 0, len(p.Properties)+1)
	props = append(props, p.Properties...)
	props = append(props, auth.Property{Name: BungeeGuardTokenProperty, Value: token})
	return bungeeHost(host, addr, p.ID, props)
}

func bungeeHost(host string, addr netip.Addr, id auth.UUID, props []auth.Property) (string, error) {
	if !addr.IsValid() {
		return "", errors.New("forwarding: the player's address is unknown; bungeecord forwarding must carry it")
	}
	if i := strings.IndexByte(host, 0); i >= 0 {
		host = host[:i]
	}
	var b strings.Builder
	b.WriteString(host)
	b.WriteString(bungeeSep)
	b.WriteString(addrString(addr))
	b.WriteString(bungeeSep)
	b.WriteString(id.Undashed())
	if len(props) > 0 {
		js, err := propertiesJSON(props)
		if err != nil {
			return "", err
		}
		b.WriteString(bungeeSep)
		b.Write(js)
	}
	s := b.String()
	if n := utf16Len(s); n > MaxBungeeHostLen {
		return "", fmt.Errorf("forwarding: the forwarded server address is %d characters, over the backend's %d; the profile properties are too large", n, MaxBungeeHostLen)
	}
	return s, nil
}

// propertiesJSON writes [{"name":..,"value":..,"signature":..}] as
// BungeeCord's Gson does (signature left out when empty), without HTML
// escaping so base64 stays readable.
func propertiesJSON(props []auth.Property) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(props); err != nil {
		return nil, fmt.Errorf("forwarding: encode properties: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// BungeeForward is a decoded BungeeCord/BungeeGuard server address, what a
// backend with bungeecord: true learns.
type BungeeForward struct {
	// Host is the address the player typed (before the first NUL).
	Host string
	// Addr is the player's real IP.
	Addr netip.Addr
	// ID is the player's UUID.
	ID auth.UUID
	// Properties are the profile properties, BungeeGuard's token included.
	Properties []auth.Property
	// HasProperties reports whether the properties part was present at all.
	HasProperties bool
}

// ParseBungeeHost decodes a forwarded server address as Spigot does: three
// or four NUL-separated parts, an IP, an undashed UUID and optionally a JSON
// array of properties. Errors wrap ErrMalformed.
func ParseBungeeHost(s string) (BungeeForward, error) {
	if n := utf16Len(s); n > MaxBungeeHostLen {
		return BungeeForward{}, fmt.Errorf("%w: server address is %d characters, limit %d", ErrMalformed, n, MaxBungeeHostLen)
	}
	parts := strings.Split(s, bungeeSep)
	if len(parts) != 3 && len(parts) != 4 {
		return BungeeForward{}, fmt.Errorf("%w: server address has %d NUL-separated parts, want 3 or 4 (is the proxy forwarding?)", ErrMalformed, len(parts))
	}
	var f BungeeForward
	var err error
	f.Host = parts[0]
	if f.Addr, err = netip.ParseAddr(parts[1]); err != nil {
		return BungeeForward{}, fmt.Errorf("%w: forwarded address %q is not an IP", ErrMalformed, parts[1])
	}
	if len(parts[2]) != 32 {
		return BungeeForward{}, fmt.Errorf("%w: forwarded UUID %q is not 32 hex digits", ErrMalformed, parts[2])
	}
	if f.ID, err = auth.ParseUUID(parts[2]); err != nil {
		return BungeeForward{}, fmt.Errorf("%w: forwarded UUID: %v", ErrMalformed, err)
	}
	if len(parts) == 4 {
		f.HasProperties = true
		if err := json.Unmarshal([]byte(parts[3]), &f.Properties); err != nil {
			return BungeeForward{}, fmt.Errorf("%w: forwarded properties are not a JSON array of properties: %v", ErrMalformed, err)
		}
		for i, p := range f.Properties {
			if p.Name == "" {
				return BungeeForward{}, fmt.Errorf("%w: forwarded property %d has no name", ErrMalformed, i)
			}
		}
	}
	return f, nil
}

// BungeeGuardToken returns the single bungeeguard-token value, as the
// BungeeGuard plugin requires before it compares it with its allowed tokens.
func (f BungeeForward) BungeeGuardToken() (string, error) {
	token, n := "", 0
	for _, p := range f.Properties {
		if p.Name == BungeeGuardTokenProperty {
			token, n = p.Value, n+1
		}
	}
	if n != 1 {
		return "", fmt.Errorf("%w (found %d)", ErrNoBungeeGuardToken, n)
	}
	return token, nil
}
