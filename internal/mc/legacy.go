package mc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
)

// LegacyForm tells which pre-1.7 server list ping a client sent, because the
// reply format the client understands depends on it.
type LegacyForm int

// The three legacy ping forms.
const (
	// LegacyBeta is Beta 1.8 to 1.3: a lone 0xFE; the reply is "motd§online§max".
	LegacyBeta LegacyForm = iota
	// Legacy14 is 1.4 and 1.5: 0xFE 0x01; the reply is the "§1" NUL-separated form.
	Legacy14
	// Legacy16 is 1.6: 0xFE 0x01 0xFA plus an MC|PingHost plugin message naming the host.
	Legacy16
)

// String names the form for logs.
func (f LegacyForm) String() string {
	switch f {
	case LegacyBeta:
		return "beta"
	case Legacy14:
		return "1.4"
	case Legacy16:
		return "1.6"
	}
	return "LegacyForm(" + strconv.Itoa(int(f)) + ")"
}

// Legacy packet bytes.
const (
	legacyPingByte   = 0xFE
	legacyLoginByte  = 0x02
	legacyKickByte   = 0xFF
	legacyPluginByte = 0xFA
	legacyPingHost   = "MC|PingHost"
	// maxLegacyString bounds a legacy UTF-16 string in code units (Java short).
	maxLegacyString = 32767
)

// IsLegacyFirstByte reports whether the first byte of a connection starts a
// legacy ping (0xFE) or a legacy login (0x02) rather than a modern frame.
func IsLegacyFirstByte(b byte) bool { return b == legacyPingByte || b == legacyLoginByte }

// LegacyPing is a decoded pre-1.7 server list ping.
type LegacyPing struct {
	// Form is which of the three request layouts the client used.
	Form LegacyForm
	// Protocol is the client's protocol (1.6 form only).
	Protocol byte
	// Host is the host the player typed (1.6 form only), used for routing.
	Host string
	// Port is the port the player typed (1.6 form only).
	Port int32
}

// legacyReader reads fixed-size legacy fields and keeps every byte consumed.
type legacyReader struct {
	r   *bufio.Reader
	raw []byte
}

func (l *legacyReader) read(n int) ([]byte, error) {
	start := len(l.raw)
	l.raw = append(l.raw, make([]byte, n)...)
	m, err := io.ReadFull(l.r, l.raw[start:])
	l.raw = l.raw[:start+m]
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return l.raw[start:], nil
}

func (l *legacyReader) u8() (byte, error) {
	p, err := l.read(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

func (l *legacyReader) u16() (uint16, error) {
	p, err := l.read(2)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint16(p), nil
}

func (l *legacyReader) i32() (int32, error) {
	p, err := l.read(4)
	if err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(p)), nil
}

// string16 reads a short-prefixed UTF-16BE string of at most maxChars units.
func (l *legacyReader) string16(maxChars int) (string, error) {
	n, err := l.u16()
	if err != nil {
		return "", err
	}
	if int(n) > maxChars {
		return "", fmt.Errorf("string of %d characters exceeds %d: %w", n, maxChars, ErrStringTooLong)
	}
	p, err := l.read(2 * int(n))
	if err != nil {
		return "", err
	}
	return decodeUTF16BE(p), nil
}

// ReadLegacyPing consumes a legacy ping from r; the caller has peeked the
// 0xFE but not consumed it. It returns the raw bytes consumed so the proxy can
// relay them in one write.
//
// Optional bytes are detected with r.Buffered(), never by waiting: after 0xFE,
// if nothing else is buffered (or the next byte is not 0x01) the ping is
// LegacyBeta; after 0xFE 0x01, if nothing else is buffered (or the next byte
// is not 0xFA) it is Legacy14. Only the 1.6 form, once 0xFA is seen, reads on
// until complete, so the caller's read deadline must still be set. A 1.6
// client whose bytes arrive split is answered in the 1.4 form, which it reads.
func ReadLegacyPing(r *bufio.Reader) (LegacyPing, []byte, error) {
	b, err := r.ReadByte()
	if err != nil {
		return LegacyPing{}, nil, fmt.Errorf("mc: legacy ping: %w", err)
	}
	l := legacyReader{r: r, raw: append(make([]byte, 0, 64), b)}
	if b != legacyPingByte {
		return LegacyPing{}, nil, fmt.Errorf("mc: legacy ping: first byte 0x%02x, want 0xfe: %w", b, ErrMalformed)
	}
	if next, ok := peekBuffered(r); !ok || next != 0x01 {
		return LegacyPing{Form: LegacyBeta}, l.raw, nil
	}
	_, _ = l.u8() // the buffered 0x01
	if next, ok := peekBuffered(r); !ok || next != legacyPluginByte {
		return LegacyPing{Form: Legacy14}, l.raw, nil
	}
	_, _ = l.u8() // the buffered 0xFA
	p, err := readPingHost(&l)
	if err != nil {
		return LegacyPing{}, nil, fmt.Errorf("mc: legacy 1.6 ping: %w", err)
	}
	return p, l.raw, nil
}

// peekBuffered returns the next byte only if it is already buffered.
func peekBuffered(r *bufio.Reader) (byte, bool) {
	if r.Buffered() == 0 {
		return 0, false
	}
	p, err := r.Peek(1)
	if err != nil {
		return 0, false
	}
	return p[0], true
}

func readPingHost(l *legacyReader) (LegacyPing, error) {
	channel, err := l.string16(len(legacyPingHost))
	if err != nil {
		return LegacyPing{}, fmt.Errorf("channel: %w", err)
	}
	if channel != legacyPingHost {
		return LegacyPing{}, fmt.Errorf("channel %q, want %q: %w", channel, legacyPingHost, ErrMalformed)
	}
	dataLen, err := l.u16()
	if err != nil {
		return LegacyPing{}, fmt.Errorf("data length: %w", err)
	}
	p := LegacyPing{Form: Legacy16}
	if p.Protocol, err = l.u8(); err != nil {
		return LegacyPing{}, fmt.Errorf("protocol: %w", err)
	}
	if p.Host, err = l.string16(MaxServerAddressLen); err != nil {
		return LegacyPing{}, fmt.Errorf("host: %w", err)
	}
	if p.Port, err = l.i32(); err != nil {
		return LegacyPing{}, fmt.Errorf("port: %w", err)
	}
	if want := 7 + 2*len(utf16.Encode([]rune(p.Host))); int(dataLen) != want {
		return LegacyPing{}, fmt.Errorf("data length %d, fields take %d: %w", dataLen, want, ErrMalformed)
	}
	return p, nil
}

// EncodeLegacyPing returns a client's legacy ping in the given form, for the
// CLI's --legacy mode and tests. Host, Port and Protocol are used by Legacy16 only.
func EncodeLegacyPing(p LegacyPing) []byte {
	switch p.Form {
	case LegacyBeta:
		return []byte{legacyPingByte}
	case Legacy14:
		return []byte{legacyPingByte, 0x01}
	}
	host := truncateUTF16(utf16.Encode([]rune(p.Host)), MaxServerAddressLen)
	b := []byte{legacyPingByte, 0x01, legacyPluginByte}
	b = appendString16(b, utf16.Encode([]rune(legacyPingHost)))
	b = binary.BigEndian.AppendUint16(b, uint16(7+2*len(host)))
	b = append(b, p.Protocol)
	b = appendString16(b, host)
	return binary.BigEndian.AppendUint32(b, uint32(p.Port))
}

// LegacyStatus is what a legacy ping reply carries.
type LegacyStatus struct {
	// Protocol is the server's protocol number (1.4+ form only).
	Protocol int32
	// Version is the server's version name (1.4+ form only).
	Version string
	// MOTD is the message of the day, § codes included.
	MOTD string
	// Online is the number of players online.
	Online int
	// Max is the player slot count.
	Max int
}

// EncodeLegacyPingReply returns the 0xFF reply a legacy client of the given
// form understands. The Beta form cannot carry § inside the MOTD, so colour
// codes are stripped there; NULs are removed from fields of the 1.4+ form.
func EncodeLegacyPingReply(form LegacyForm, s LegacyStatus) []byte {
	var msg string
	if form == LegacyBeta {
		motd := strings.ReplaceAll(StripColorCodes(s.MOTD), "§", "")
		msg = motd + "§" + strconv.Itoa(s.Online) + "§" + strconv.Itoa(s.Max)
	} else {
		clean := func(v string) string { return strings.ReplaceAll(v, "\x00", "") }
		msg = strings.Join([]string{"§1", strconv.Itoa(int(s.Protocol)), clean(s.Version),
			clean(s.MOTD), strconv.Itoa(s.Online), strconv.Itoa(s.Max)}, "\x00")
	}
	return EncodeLegacyKick(msg)
}

// EncodeLegacyKick returns a 0xFF kick packet, to refuse a legacy login with a
// reason. Reasons over 32767 UTF-16 units are truncated.
func EncodeLegacyKick(reason string) []byte {
	units := truncateUTF16(utf16.Encode([]rune(reason)), maxLegacyString)
	return appendString16([]byte{legacyKickByte}, units)
}

// ParseLegacyPingReply decodes a complete 0xFF reply in either form.
func ParseLegacyPingReply(b []byte) (LegacyStatus, error) {
	if len(b) < 3 || b[0] != legacyKickByte {
		return LegacyStatus{}, fmt.Errorf("mc: legacy ping reply: want 0xff and a length: %w", ErrMalformed)
	}
	n := int(binary.BigEndian.Uint16(b[1:3]))
	if len(b) != 3+2*n {
		return LegacyStatus{}, fmt.Errorf("mc: legacy ping reply: %d bytes for %d characters: %w", len(b), n, ErrMalformed)
	}
	s, err := parseLegacyReplyString(decodeUTF16BE(b[3:]))
	if err != nil {
		return LegacyStatus{}, fmt.Errorf("mc: legacy ping reply: %w", err)
	}
	return s, nil
}

// ReadLegacyPingReply reads one 0xFF reply from a stream and decodes it, for
// the CLI talking to a legacy server.
func ReadLegacyPingReply(r io.Reader) (LegacyStatus, error) {
	var hdr [3]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return LegacyStatus{}, fmt.Errorf("mc: legacy ping reply: %w", err)
	}
	n := int(binary.BigEndian.Uint16(hdr[1:]))
	b := append(hdr[:], make([]byte, 2*n)...)
	if _, err := io.ReadFull(r, b[3:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return LegacyStatus{}, fmt.Errorf("mc: legacy ping reply: %w", err)
	}
	return ParseLegacyPingReply(b)
}

func parseLegacyReplyString(msg string) (LegacyStatus, error) {
	var s LegacyStatus
	var online, maxp string
	if rest, ok := strings.CutPrefix(msg, "§1\x00"); ok {
		f := strings.Split(rest, "\x00")
		if len(f) != 5 {
			return LegacyStatus{}, fmt.Errorf("%d fields in 1.4 reply, want 5: %w", len(f), ErrMalformed)
		}
		p, err := strconv.ParseInt(f[0], 10, 32)
		if err != nil {
			return LegacyStatus{}, fmt.Errorf("protocol %q: %w", f[0], ErrMalformed)
		}
		s.Protocol, s.Version, s.MOTD, online, maxp = int32(p), f[1], f[2], f[3], f[4]
	} else {
		i := strings.LastIndex(msg, "§")
		if i < 0 {
			return LegacyStatus{}, fmt.Errorf("no § separators in beta reply: %w", ErrMalformed)
		}
		maxp, msg = msg[i+len("§"):], msg[:i]
		j := strings.LastIndex(msg, "§")
		if j < 0 {
			return LegacyStatus{}, fmt.Errorf("one § separator in beta reply, want 2: %w", ErrMalformed)
		}
		s.MOTD, online = msg[:j], msg[j+len("§"):]
	}
	var err error
	if s.Online, err = strconv.Atoi(online); err != nil {
		return LegacyStatus{}, fmt.Errorf("online count %q: %w", online, ErrMalformed)
	}
	if s.Max, err = strconv.Atoi(maxp); err != nil {
		return LegacyStatus{}, fmt.Errorf("max count %q: %w", maxp, ErrMalformed)
	}
	return s, nil
}

// LegacyLogin is a decoded pre-1.7 login handshake (first byte 0x02), read so
// the legacy handler can route and ban-check before relaying it.
type LegacyLogin struct {
	// Protocol is the client's protocol (1.3+ form only; 0 for older clients).
	Protocol byte
	// Username is the player name the client claims.
	Username string
	// Host is the host the player typed.
	Host string
	// Port is the port the player typed.
	Port int32
}

// maxLegacyLoginString bounds the pre-1.3 "user;host:port" string.
const maxLegacyLoginString = MaxPlayerNameLen + 1 + MaxServerAddressLen + 6

// ReadLegacyLogin consumes a legacy login handshake (0x02 peeked, not
// consumed) and returns the raw bytes consumed for relaying. Two layouts are
// accepted: 1.3–1.6 (0x02, protocol byte, username, host, int32 port) and
// Beta 1.8–1.2 (0x02, one string "user;host:port"). They are told apart by
// the byte after 0x02: the old form starts a short string length whose high
// byte is 0, while 1.3+ protocol numbers are never 0.
func ReadLegacyLogin(r *bufio.Reader) (LegacyLogin, []byte, error) {
	b, err := r.ReadByte()
	if err != nil {
		return LegacyLogin{}, nil, fmt.Errorf("mc: legacy login: %w", err)
	}
	l := legacyReader{r: r, raw: append(make([]byte, 0, 64), b)}
	if b != legacyLoginByte {
		return LegacyLogin{}, nil, fmt.Errorf("mc: legacy login: first byte 0x%02x, want 0x02: %w", b, ErrMalformed)
	}
	next, err := r.Peek(1)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return LegacyLogin{}, nil, fmt.Errorf("mc: legacy login: %w", err)
	}
	var ll LegacyLogin
	if next[0] == 0 {
		err = readOldLegacyLogin(&l, &ll)
	} else {
		err = readNewLegacyLogin(&l, &ll)
	}
	if err != nil {
		return LegacyLogin{}, nil, fmt.Errorf("mc: legacy login: %w", err)
	}
	return ll, l.raw, nil
}

func readNewLegacyLogin(l *legacyReader, ll *LegacyLogin) error {
	var err error
	if ll.Protocol, err = l.u8(); err != nil {
		return fmt.Errorf("protocol: %w", err)
	}
	if ll.Username, err = l.string16(MaxPlayerNameLen); err != nil {
		return fmt.Errorf("username: %w", err)
	}
	if ll.Host, err = l.string16(MaxServerAddressLen); err != nil {
		return fmt.Errorf("host: %w", err)
	}
	if ll.Port, err = l.i32(); err != nil {
		return fmt.Errorf("port: %w", err)
	}
	return nil
}

func readOldLegacyLogin(l *legacyReader, ll *LegacyLogin) error {
	s, err := l.string16(maxLegacyLoginString)
	if err != nil {
		return err
	}
	user, addr, _ := strings.Cut(s, ";")
	if user == "" || len([]rune(user)) > MaxPlayerNameLen {
		return fmt.Errorf("username %q: %w", user, ErrMalformed)
	}
	ll.Username = user
	ll.Host = addr
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		port, err := strconv.ParseInt(addr[i+1:], 10, 32)
		if err != nil {
			return fmt.Errorf("port %q: %w", addr[i+1:], ErrMalformed)
		}
		ll.Host, ll.Port = addr[:i], int32(port)
	}
	return nil
}

// EncodeLegacyLogin returns a 1.3–1.6 legacy login handshake, for tests and
// for relaying a login with a rewritten host.
func EncodeLegacyLogin(ll LegacyLogin) []byte {
	b := []byte{legacyLoginByte, ll.Protocol}
	b = appendString16(b, truncateUTF16(utf16.Encode([]rune(ll.Username)), MaxPlayerNameLen))
	b = appendString16(b, truncateUTF16(utf16.Encode([]rune(ll.Host)), MaxServerAddressLen))
	return binary.BigEndian.AppendUint32(b, uint32(ll.Port))
}

func appendString16(dst []byte, units []uint16) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(units)))
	for _, u := range units {
		dst = binary.BigEndian.AppendUint16(dst, u)
	}
	return dst
}

// truncateUTF16 cuts units to at most n without splitting a surrogate pair.
func truncateUTF16(units []uint16, n int) []uint16 {
	if len(units) <= n {
		return units
	}
	if n > 0 && utf16.IsSurrogate(rune(units[n-1])) && units[n-1] < 0xDC00 {
		n--
	}
	return units[:n]
}

func decodeUTF16BE(p []byte) string {
	units := make([]uint16, len(p)/2)
	for i := range units {
		units[i] = binary.BigEndian.Uint16(p[2*i:])
	}
	return string(utf16.Decode(units))
}
