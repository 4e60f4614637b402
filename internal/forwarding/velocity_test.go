package forwarding

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
)

var (
	testSecret = []byte("s3cr3t-forwarding")
	notchID    = auth.UUID{0x06, 0x9a, 0x79, 0xf4, 0x44, 0xe9, 0x47, 0x26, 0xa5, 0xbe, 0xfc, 0xa9, 0x0e, 0x38, 0xaa, 0xf5}
)

func notch() Player {
	return Player{
		Addr: netip.MustParseAddr("127.0.0.1"),
		Profile: auth.Profile{
			ID:   notchID,
			Name: "Notch",
			Properties: []auth.Property{
				{Name: "textures", Value: "dmFs", Signature: "c2ln"},
				{Name: "x", Value: "y"},
			},
		},
	}
}

func testKeyFor(holder bool) *ChatKey {
	k := &ChatKey{
		ExpiresAt: time.UnixMilli(0x0102030405060708).UTC(),
		PublicKey: []byte{0xAA, 0xBB, 0xCC},
		Signature: []byte{0xDD, 0xEE},
	}
	if holder {
		k.Holder, k.HasHolder = notchID, true
	}
	return k
}

func newVelocity(t testing.TB, secret []byte) *Velocity {
	t.Helper()
	v, err := NewVelocity(secret)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// signed is the expected answer computed with crypto/hmac directly, not through the pool.
func signed(secret, data []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(data)
	return append(m.Sum(nil), data...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// The version 1 layout, written out by hand.
var notchV1Data = cat(
	[]byte{0x01},                      // version 1
	[]byte{0x09}, []byte("127.0.0.1"), // address
	notchID[:],                    // uuid
	[]byte{0x05}, []byte("Notch"), // name
	[]byte{0x02},                     // two properties
	[]byte{0x08}, []byte("textures"), // name
	[]byte{0x04}, []byte("dmFs"), // value
	[]byte{0x01, 0x04}, []byte("c2ln"), // signed, signature
	[]byte{0x01}, []byte("x"), // name
	[]byte{0x01}, []byte("y"), // value
	[]byte{0x00}, // unsigned
)

func TestVelocityBytes(t *testing.T) {
	v := newVelocity(t, testSecret)
	keyTail := cat(
		[]byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}, // expiry, big-endian millis
		[]byte{0x03, 0xAA, 0xBB, 0xCC},                         // public key
		[]byte{0x02, 0xDD, 0xEE},                               // key signature
	)
	withVersion := func(ver byte, tail ...[]byte) []byte {
		d := append([]byte{ver}, notchV1Data[1:]...)
		return cat(append([][]byte{d}, tail...)...)
	}
	for _, tc := range []struct {
		name    string
		version int
		key     *ChatKey
		data    []byte
	}{
		{"v1", VelocityDefault, nil, notchV1Data},
		{"v1 ignores a key", VelocityDefault, testKeyFor(true), notchV1Data},
		{"v4", VelocityLazySession, nil, withVersion(4)},
		{"v2 carries the key", VelocityWithKey, testKeyFor(true), withVersion(2, keyTail)},
		{"v3 with holder", VelocityWithKeyV2, testKeyFor(true), withVersion(3, keyTail, []byte{0x01}, notchID[:])},
		{"v3 without holder", VelocityWithKeyV2, testKeyFor(false), withVersion(3, keyTail, []byte{0x00})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := notch()
			p.ChatKey = tc.key
			got, err := v.AppendResponse(nil, tc.version, p)
			if err != nil {
				t.Fatal(err)
			}
			if want := signed(testSecret, tc.data); !bytes.Equal(got, want) {
				t.Fatalf("answer\n got %x\nwant %x", got, want)
			}
			// And the backend's side reads back what was sent.
			f, err := v.Verify(got, VelocityMaxVersion)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := Forwarded{Version: tc.version, Player: p}
			switch tc.version {
			case VelocityDefault, VelocityLazySession:
				want.ChatKey = nil // these versions never carry the key
			case VelocityWithKey:
				k := *tc.key // version 2 has no holder field
				k.Holder, k.HasHolder = auth.UUID{}, false
				want.ChatKey = &k
			}
			if !reflect.DeepEqual(f, want) {
				t.Fatalf("decoded\n got %+v\nwant %+v", f, want)
			}
		})
	}
}

// Appending keeps what dst already held.
func TestVelocityAppendKeepsPrefix(t *testing.T) {
	v := newVelocity(t, testSecret)
	got, err := v.AppendResponse([]byte("prefix"), VelocityDefault, notch())
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]byte("prefix"), signed(testSecret, notchV1Data)...); !bytes.Equal(got, want) {
		t.Fatalf("got %x\nwant %x", got, want)
	}
}

func TestVelocityAddresses(t *testing.T) {
	v := newVelocity(t, testSecret)
	for in, want := range map[string]string{
		"::ffff:203.0.113.9": "203.0.113.9", // as Java reports a v4 client on a dual-stack socket
		"fe80::1%eth0":       "fe80::1",     // zones mean nothing to the backend
		"2001:db8::1":        "2001:db8::1",
	} {
		p := notch()
		p.Addr = netip.MustParseAddr(in)
		out, err := v.AppendResponse(nil, VelocityDefault, p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := v.Verify(out, 1)
		if err != nil || f.Addr.String() != want {
			t.Errorf("%s forwarded as %v (%v), want %s", in, f.Addr, err, want)
		}
	}
}

// Velocity's findForwardingVersion, case by case.
func TestNegotiateVersion(t *testing.T) {
	key := testKeyFor(true)
	for _, tc := range []struct {
		requested int
		protocol  int32
		key       *ChatKey
		want      int
	}{
		{1, 767, nil, 1},
		{4, 767, nil, 4},
		{9, 767, nil, 4}, // clamped to what we speak
		{3, 767, nil, 1}, // a 1.19.3+ client never gets 2 or 3
		{2, 761, key, 1},
		{0, 767, nil, 1},
		{-1, 767, nil, 1},
		{4, 759, key, 2}, // 1.19 key (revision 1)
		{2, 759, key, 2},
		{1, 759, key, 1},
		{4, 759, nil, 1},
		{4, 760, key, 3}, // 1.19.1/1.19.2 key (revision 2)
		{3, 760, key, 3},
		{2, 760, key, 1}, // a revision-2 key does not fit version 2
		{4, 760, nil, 1},
		{4, 758, key, 1}, // 1.18.2 has no keys
		{4, 393, nil, 1}, // 1.13
	} {
		got, err := NegotiateVersion(tc.requested, tc.protocol, tc.key)
		if err != nil || got != tc.want {
			t.Errorf("NegotiateVersion(%d, %d, key=%v) = %d, %v; want %d", tc.requested, tc.protocol, tc.key != nil, got, err, tc.want)
		}
	}
	for _, proto := range []int32{392, 340, 47, 5} {
		if _, err := NegotiateVersion(4, proto, nil); !errors.Is(err, ErrClientTooOld) {
			t.Errorf("protocol %d: err = %v, want ErrClientTooOld", proto, err)
		}
		if err := CheckVelocityClient(proto); !errors.Is(err, ErrClientTooOld) {
			t.Errorf("CheckVelocityClient(%d) = %v", proto, err)
		}
	}
	if err := CheckVelocityClient(MinVelocityProtocol); err != nil {
		t.Errorf("1.13 refused: %v", err)
	}
}

func TestRequestedVersion(t *testing.T) {
	for _, tc := range []struct {
		payload []byte
		want    int
	}{
		{nil, 1},
		{[]byte{4}, 4},
		{[]byte{1}, 1},
		{[]byte{0xff}, -1}, // signed, as Java reads it; negotiation then gives 1
		{[]byte{4, 0}, 1},  // not one byte: Velocity ignores it
		{RequestPayload(3), 3},
	} {
		if got := RequestedVersion(tc.payload); got != tc.want {
			t.Errorf("RequestedVersion(%x) = %d, want %d", tc.payload, got, tc.want)
		}
	}
}

func TestVelocityResponse(t *testing.T) {
	v := newVelocity(t, testSecret)
	p := notch()
	p.ChatKey = testKeyFor(true)
	for _, tc := range []struct {
		request  []byte
		protocol int32
		want     int
	}{
		{RequestPayload(4), 767, 4},
		{nil, 767, 1},
		{RequestPayload(4), 760, 3},
		{RequestPayload(2), 759, 2},
	} {
		out, ver, err := v.Response(tc.request, tc.protocol, p)
		if err != nil || ver != tc.want {
			t.Fatalf("Response(%x, %d) version %d, %v; want %d", tc.request, tc.protocol, ver, err, tc.want)
		}
		f, err := v.Verify(out, RequestedVersion(tc.request))
		if err != nil || f.Version != tc.want || f.Profile.Name != "Notch" {
			t.Fatalf("Verify: %+v, %v", f, err)
		}
	}
	if _, _, err := v.Response(RequestPayload(4), 340, p); !errors.Is(err, ErrClientTooOld) {
		t.Fatalf("1.12.2 client: err = %v", err)
	}
}

func TestVelocityRefusals(t *testing.T) {
	v := newVelocity(t, testSecret)
	good, err := v.AppendResponse(nil, VelocityLazySession, notch())
	if err != nil {
		t.Fatal(err)
	}
	t.Run("wrong secret", func(t *testing.T) {
		if _, err := newVelocity(t, []byte("another-secret")).Verify(good, 4); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("err = %v, want ErrBadSignature", err)
		}
	})
	t.Run("tampered data", func(t *testing.T) {
		bad := bytes.Clone(good)
		bad[len(bad)-1] ^= 1
		if _, err := v.Verify(bad, 4); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("err = %v, want ErrBadSignature", err)
		}
	})
	t.Run("tampered signature", func(t *testing.T) {
		bad := bytes.Clone(good)
		bad[0] ^= 1
		if _, err := v.Verify(bad, 4); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("err = %v, want ErrBadSignature", err)
		}
	})
	t.Run("version above what the backend asked", func(t *testing.T) {
		if _, err := v.Verify(good, 1); !errors.Is(err, ErrMalformed) {
			t.Fatalf("err = %v, want ErrMalformed", err)
		}
	})
	t.Run("shorter than a signature", func(t *testing.T) {
		if _, err := v.Verify(good[:20], 4); !errors.Is(err, ErrMalformed) {
			t.Fatalf("err = %v, want ErrMalformed", err)
		}
	})
	t.Run("every truncation", func(t *testing.T) {
		p := notch()
		p.ChatKey = testKeyFor(true)
		full, _ := v.AppendResponse(nil, VelocityWithKeyV2, p)
		data := full[HMACSize:]
		for n := 0; n < len(data); n++ {
			if _, err := v.Verify(signed(testSecret, data[:n]), 4); !errors.Is(err, ErrMalformed) {
				t.Fatalf("data cut to %d bytes: err = %v, want ErrMalformed", n, err)
			}
		}
		if _, err := v.Verify(signed(testSecret, append(bytes.Clone(data), 0)), 4); !errors.Is(err, ErrMalformed) {
			t.Fatalf("trailing byte: err = %v", err)
		}
	})
	t.Run("bad fields", func(t *testing.T) {
		mut := func(f func(d []byte) []byte) []byte { return signed(testSecret, f(bytes.Clone(notchV1Data))) }
		for name, payload := range map[string][]byte{
			"version 0":        mut(func(d []byte) []byte { d[0] = 0; return d }),
			"version 5":        mut(func(d []byte) []byte { d[0] = 5; return d }),
			"address not IP":   mut(func(d []byte) []byte { copy(d[2:], "127.0.0.x"); return d }),
			"name too long":    signed(testSecret, cat([]byte{1, 9}, []byte("127.0.0.1"), notchID[:], []byte{17}, []byte(strings.Repeat("a", 17)), []byte{0})),
			"boolean 2":        mut(func(d []byte) []byte { d[len(d)-1] = 2; return d }),
			"property count":   mut(func(d []byte) []byte { d[1+10+16+6] = 0x7f; return d }),
			"name not UTF-8":   signed(testSecret, cat([]byte{1, 9}, []byte("127.0.0.1"), notchID[:], []byte{2, 0xff, 0xfe}, []byte{0})),
			"huge varint":      signed(testSecret, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01}),
			"negative address": signed(testSecret, cat([]byte{1}, []byte{0xff, 0xff, 0xff, 0xff, 0x0f})),
		} {
			if _, err := v.Verify(payload, 4); !errors.Is(err, ErrMalformed) {
				t.Errorf("%s: err = %v, want ErrMalformed", name, err)
			}
		}
	})
}

func TestVelocityEncodeErrors(t *testing.T) {
	if _, err := NewVelocity(nil); !errors.Is(err, ErrEmptySecret) {
		t.Fatalf("NewVelocity(nil) = %v", err)
	}
	v := newVelocity(t, testSecret)
	noAddr := notch()
	noAddr.Addr = netip.Addr{}
	for name, call := range map[string]func() ([]byte, error){
		"version 0":        func() ([]byte, error) { return v.AppendResponse(nil, 0, notch()) },
		"version 5":        func() ([]byte, error) { return v.AppendResponse(nil, 5, notch()) },
		"v2 without a key": func() ([]byte, error) { return v.AppendResponse(nil, 2, notch()) },
		"v3 without a key": func() ([]byte, error) { return v.AppendResponse(nil, 3, notch()) },
		"no address":       func() ([]byte, error) { return v.AppendResponse(nil, 1, noAddr) },
	} {
		if out, err := call(); err == nil || len(out) != 0 {
			t.Errorf("%s: %x, %v; want an error and nothing appended", name, out, err)
		}
	}
}

// The pooled HMAC states must not mix answers under concurrency (run with -race).
func TestVelocityConcurrent(t *testing.T) {
	v := newVelocity(t, testSecret)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				p := notch()
				p.Profile.Name = strings.Repeat("a", 1+(g+i)%16)
				out, err := v.AppendResponse(nil, VelocityDefault, p)
				if err == nil {
					var f Forwarded
					f, err = v.Verify(out, 1)
					if err == nil && f.Profile.Name != p.Profile.Name {
						err = errors.New("name mixed up")
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// FuzzVelocityData feeds arbitrary signed data to the backend-side decoder:
// no panic, and whatever decodes encodes back to something that decodes the same.
func FuzzVelocityData(f *testing.F) {
	v := newVelocity(f, testSecret)
	p := notch()
	p.ChatKey = testKeyFor(true)
	for _, ver := range []int{1, 2, 3, 4} {
		out, err := v.AppendResponse(nil, ver, p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(out[HMACSize:])
	}
	f.Add([]byte{})
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := v.Verify(signed(testSecret, data), VelocityMaxVersion)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		again, err := v.AppendResponse(nil, got.Version, got.Player)
		if err != nil {
			t.Fatalf("re-encode of %+v: %v", got, err)
		}
		back, err := v.Verify(again, VelocityMaxVersion)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		// A signed property with an empty signature re-encodes as unsigned; both read as "".
		if !reflect.DeepEqual(normalize(back), normalize(got)) {
			t.Fatalf("round trip changed\n got %+v\nwant %+v", back, got)
		}
	})
}

func normalize(f Forwarded) Forwarded {
	f.Addr = f.Addr.Unmap().WithZone("")
	return f
}

// A realistic Mojang profile: a textures value and a 4096-bit signature in base64.
func benchPlayer() Player {
	p := notch()
	p.Profile.Properties = []auth.Property{{
		Name:      "textures",
		Value:     strings.Repeat("ewogICJ0aW1lc3RhbXAiIDogMTY", 16),
		Signature: strings.Repeat("aBcD", 171),
	}}
	return p
}

// BenchmarkVelocityResponse is one forwarding answer: Response allocates its
// buffer; AppendReused reuses one (a pooled frame buffer); NaiveBaseline keys
// a new HMAC per answer and builds with bytes.Buffer, the straightforward way.
func BenchmarkVelocityResponse(b *testing.B) {
	v := newVelocity(b, testSecret)
	p := benchPlayer()
	req := RequestPayload(4)
	b.Run("Response", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := v.Response(req, 767, p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendReused", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			var err error
			if buf, err = v.AppendResponse(buf[:0], 4, p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("NaiveBaseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			naiveResponse(testSecret, 4, p)
		}
	})
}

func naiveResponse(secret []byte, version int, p Player) []byte {
	var data bytes.Buffer
	writeVarInt := func(v int) {
		for v >= 0x80 {
			data.WriteByte(byte(v) | 0x80)
			v >>= 7
		}
		data.WriteByte(byte(v))
	}
	writeString := func(s string) { writeVarInt(len(s)); data.WriteString(s) }
	writeVarInt(version)
	writeString(p.Addr.String())
	data.Write(p.Profile.ID[:])
	writeString(p.Profile.Name)
	writeVarInt(len(p.Profile.Properties))
	for _, prop := range p.Profile.Properties {
		writeString(prop.Name)
		writeString(prop.Value)
		if prop.Signature != "" {
			data.WriteByte(1)
			writeString(prop.Signature)
		} else {
			data.WriteByte(0)
		}
	}
	m := hmac.New(sha256.New, secret)
	m.Write(data.Bytes())
	return append(m.Sum(nil), data.Bytes()...)
}

// The baseline must produce the same bytes, or the comparison means nothing.
func TestNaiveBaselineAgrees(t *testing.T) {
	v := newVelocity(t, testSecret)
	ours, err := v.AppendResponse(nil, 4, benchPlayer())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ours, naiveResponse(testSecret, 4, benchPlayer())) {
		t.Fatal("baseline encodes differently")
	}
}
