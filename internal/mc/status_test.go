package mc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

const sampleStatus = `{"version":{"name":"1.21.1","protocol":767},"players":{"max":100,"online":2,"sample":[{"name":"Notch","id":"069a79f4-44e9-4726-a5be-fca90e38aaf5"}]},"description":{"text":"§aHello","extra":[{"text":" world"}]},"favicon":"data:image/png;base64,AAAA"}`

func TestStatusRequest(t *testing.T) {
	if got := EncodeStatusRequest(); !bytes.Equal(got, []byte{0x01, 0x00}) {
		t.Fatalf("EncodeStatusRequest = %x", got)
	}
	tests := []struct {
		name string
		in   []byte
		err  error
	}{
		{"valid", EncodeStatusRequest(), nil},
		{"ping instead", EncodePing(1), ErrMalformed},
		{"payload", AppendFrame(nil, 0, []byte{1}), ErrMalformed},
		{"eof", nil, io.EOF},
		{"oversized", AppendFrame(nil, 0, make([]byte, 100)), ErrFrameTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := ReadStatusRequest(newReader(tc.in)); !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
		})
	}
}

func TestStatusResponse(t *testing.T) {
	favicon := `{"description":"x","favicon":"data:image/png;base64,` + strings.Repeat("A", 100_000) + `"}`
	tests := []struct {
		name string
		in   []byte
		want string
		err  error
	}{
		{name: "sample", in: EncodeStatusResponse([]byte(sampleStatus)), want: sampleStatus},
		{name: "100 KiB favicon", in: EncodeStatusResponse([]byte(favicon)), want: favicon},
		{name: "not json", in: EncodeStatusResponse([]byte("{nope")), err: ErrMalformed},
		{name: "wrong id", in: AppendFrame(nil, 1, AppendString(nil, "{}")), err: ErrMalformed},
		{name: "trailing", in: AppendFrame(nil, 0, append(AppendString(nil, "{}"), 0)), err: ErrMalformed},
		{name: "too long", in: EncodeStatusResponse([]byte(`"` + strings.Repeat("a", MaxStatusJSONLen) + `"`)), err: ErrStringTooLong},
		{name: "truncated", in: EncodeStatusResponse([]byte(sampleStatus))[:50], err: io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadStatusResponse(newReader(tc.in))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %d bytes, %v", len(got), err)
			}
		})
	}
}

func TestParseStatusResponse(t *testing.T) {
	s, err := ParseStatusResponse([]byte(sampleStatus))
	if err != nil {
		t.Fatal(err)
	}
	if s.Version.Name != "1.21.1" || s.Version.Protocol != 767 || s.Players.Max != 100 || s.Players.Online != 2 ||
		len(s.Players.Sample) != 1 || s.Players.Sample[0].Name != "Notch" || s.Favicon == "" {
		t.Fatalf("parsed %+v", s)
	}
	if got := DescriptionText(s.Description); got != "§aHello world" {
		t.Fatalf("description %q", got)
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := ParseStatusResponse(out); err != nil || again.Players.Online != 2 {
		t.Fatalf("re-marshal round trip: %v", err)
	}
	if _, err := ParseStatusResponse([]byte("[")); !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
}

func TestPing(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 1 << 62, -1 << 63} {
		got, err := ReadPing(newReader(EncodePing(v)))
		if err != nil || got != v {
			t.Fatalf("ReadPing(EncodePing(%d)) = %d, %v", v, got, err)
		}
	}
	bad := [][]byte{EncodeStatusRequest(), AppendFrame(nil, 1, make([]byte, 7)), AppendFrame(nil, 1, make([]byte, 9))}
	for _, b := range bad {
		if _, err := ReadPing(newReader(b)); !errors.Is(err, ErrMalformed) {
			t.Fatalf("ReadPing(%x) err = %v, want ErrMalformed", b, err)
		}
	}
}

// scriptedConn replays canned server bytes and records each client write.
type scriptedConn struct {
	in     io.Reader
	writes [][]byte
}

func (c *scriptedConn) Read(p []byte) (int, error) { return c.in.Read(p) }
func (c *scriptedConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, bytes.Clone(p))
	return len(p), nil
}

func TestQueryStatus(t *testing.T) {
	tests := []struct {
		name   string
		server []byte
		err    error
		json   bool
	}{
		{name: "full exchange", server: append(EncodeStatusResponse([]byte(sampleStatus)), EncodePing(99)...), json: true},
		{name: "no pong", server: EncodeStatusResponse([]byte(sampleStatus)), err: ErrNoPong, json: true},
		{name: "bad pong", server: append(EncodeStatusResponse([]byte(sampleStatus)), EncodeStatusRequest()...), err: ErrNoPong, json: true},
		{name: "no response", server: nil, err: io.EOF},
		{name: "garbage", server: []byte{0x03, 0x00, 0x01, '{'}, err: ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn := &scriptedConn{in: bytes.NewReader(tc.server)}
			js, rtt, err := QueryStatus(conn, "mc.example.com", 25565, 767)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if tc.json != (string(js) == sampleStatus) {
				t.Fatalf("json = %q", js)
			}
			if rtt < 0 {
				t.Fatalf("rtt = %v", rtt)
			}
			// The handshake and status request go out in one write.
			r := newReader(conn.writes[0])
			h, _, err := ReadHandshake(r)
			if err != nil || h != (Handshake{767, "mc.example.com", 25565, StateStatus}) {
				t.Fatalf("first write handshake %+v, %v", h, err)
			}
			if err := ReadStatusRequest(r); err != nil {
				t.Fatalf("first write status request: %v", err)
			}
			if r.Buffered() != 0 {
				t.Fatal("extra bytes in first write")
			}
			if tc.json {
				if len(conn.writes) != 2 {
					t.Fatalf("%d writes, want 2", len(conn.writes))
				}
				if _, err := ReadPing(newReader(conn.writes[1])); err != nil {
					t.Fatalf("second write is not a ping: %v", err)
				}
			}
		})
	}
}

func FuzzReadStatusResponse(f *testing.F) {
	f.Add(EncodeStatusResponse([]byte(sampleStatus)))
	f.Add(EncodeStatusResponse([]byte(`"plain"`)))
	f.Add(EncodeStatusResponse([]byte(`{`)))
	f.Add(AppendFrame(nil, 0, []byte{0xff, 0xff, 0xff, 0xff, 0x07}))
	f.Fuzz(func(t *testing.T, b []byte) {
		js, err := ReadStatusResponse(newReader(b))
		if err != nil {
			return
		}
		if !json.Valid(js) || len(js) > MaxStatusJSONLen {
			t.Fatalf("accepted invalid status JSON %q", js)
		}
		back, err := ReadStatusResponse(newReader(EncodeStatusResponse(js)))
		if err != nil || !bytes.Equal(back, js) {
			t.Fatalf("round trip failed: %v", err)
		}
		_, _ = ParseStatusResponse(js)
	})
}
