package mc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func be16(v int) []byte   { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
func vi(v int) []byte     { return AppendVarInt(nil, int32(v)) }
func str(s string) []byte { return AppendString(nil, s) }

var (
	testPubKey = bytes.Repeat([]byte{0x30}, 162)
	testToken  = []byte{9, 8, 7, 6}
)

// Hand-built wire layouts per version, so an encoder and decoder that agree
// with each other but not with vanilla would still fail.
func TestEncryptionRequestWire(t *testing.T) {
	req := EncryptionRequest{ServerID: "", PublicKey: testPubKey, VerifyToken: testToken, ShouldAuthenticate: true}
	tests := []struct {
		p    Protocol
		want []byte
	}{
		{V1_7_2, cat(str(""), be16(162), testPubKey, be16(4), testToken)},
		{V1_7_6, cat(str(""), be16(162), testPubKey, be16(4), testToken)},
		{V1_8, cat(str(""), vi(162), testPubKey, vi(4), testToken)},
		{V1_20_3, cat(str(""), vi(162), testPubKey, vi(4), testToken)},
		{V1_20_5, cat(str(""), vi(162), testPubKey, vi(4), testToken, []byte{1})},
		{V26_3, cat(str(""), vi(162), testPubKey, vi(4), testToken, []byte{1})},
	}
	for _, tc := range tests {
		if got := req.AppendPayload(nil, tc.p); !bytes.Equal(got, tc.want) {
			t.Errorf("%v: encoded %x, want %x", tc.p, got, tc.want)
		}
		got, err := DecodeEncryptionRequest(tc.want, tc.p)
		if err != nil || !reflect.DeepEqual(got, req) {
			t.Errorf("%v: decoded %+v, %v", tc.p, got, err)
		}
	}
	noAuth := cat(str("srv"), vi(1), []byte{1}, vi(1), []byte{2}, []byte{0})
	got, err := DecodeEncryptionRequest(noAuth, V1_21)
	if err != nil || got.ShouldAuthenticate || got.ServerID != "srv" {
		t.Fatalf("shouldAuthenticate=false: %+v, %v", got, err)
	}
}

func TestEncryptionResponseWire(t *testing.T) {
	secret := bytes.Repeat([]byte{0xAA}, 128)
	token := bytes.Repeat([]byte{0xBB}, 128)
	sig := bytes.Repeat([]byte{0xCC}, 256)
	plain := EncryptionResponse{SharedSecret: secret, VerifyToken: token}
	signed := EncryptionResponse{SharedSecret: secret, Signed: true, Salt: -5, Signature: sig}
	tests := []struct {
		name string
		p    Protocol
		v    EncryptionResponse
		want []byte
	}{
		{"1.7 short arrays", V1_7_6, plain, cat(be16(128), secret, be16(128), token)},
		{"1.8", V1_8, plain, cat(vi(128), secret, vi(128), token)},
		{"1.18.2", V1_18_2, plain, cat(vi(128), secret, vi(128), token)},
		{"1.19 token", V1_19, plain, cat(vi(128), secret, []byte{1}, vi(128), token)},
		{"1.19.2 signed", V1_19_1, signed, cat(vi(128), secret, []byte{0}, be64(-5), vi(256), sig)},
		{"1.19 signed", V1_19, signed, cat(vi(128), secret, []byte{0}, be64(-5), vi(256), sig)},
		{"1.19.3", V1_19_3, plain, cat(vi(128), secret, vi(128), token)},
		{"1.21", V1_21, plain, cat(vi(128), secret, vi(128), token)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.v.AppendPayload(nil, tc.p); !bytes.Equal(got, tc.want) {
				t.Fatalf("encoded %x\nwant    %x", got, tc.want)
			}
			got, err := DecodeEncryptionResponse(tc.want, tc.p)
			if err != nil || !reflect.DeepEqual(got, tc.v) {
				t.Fatalf("decoded %+v, %v", got, err)
			}
		})
	}
}

var testProps = []Property{
	{Name: "textures", Value: "eyJ0aW1lc3RhbXAiOjE=", Signature: "c2lnbmF0dXJl"},
	{Name: "unsigned", Value: "dmFsdWU="},
}

func TestLoginSuccessWire(t *testing.T) {
	session := [16]byte{0xEE, 1, 2, 3}
	ls := LoginSuccess{UUID: testUUID, Name: "Notch", Properties: testProps, SessionID: session}
	props := cat(vi(2), str("textures"), str("eyJ0aW1lc3RhbXAiOjE="), []byte{1}, str("c2lnbmF0dXJl"),
		str("unsigned"), str("dmFsdWU="), []byte{0})
	tests := []struct {
		p    Protocol
		want []byte
		keep func(LoginSuccess) LoginSuccess // what survives this layout
	}{
		{V1_7_2, cat(str("069a79f444e94726a5befca90e38aaf5"), str("Notch")), noPropsNoSession},
		{V1_7_6, cat(str("069a79f4-44e9-4726-a5be-fca90e38aaf5"), str("Notch")), noPropsNoSession},
		{V1_15_2, cat(str("069a79f4-44e9-4726-a5be-fca90e38aaf5"), str("Notch")), noPropsNoSession},
		{V1_16, cat(testUUID[:], str("Notch")), noPropsNoSession},
		{V1_18_2, cat(testUUID[:], str("Notch")), noPropsNoSession},
		{V1_19, cat(testUUID[:], str("Notch"), props), noSession},
		{V1_20_3, cat(testUUID[:], str("Notch"), props), noSession},
		{V1_20_5, cat(testUUID[:], str("Notch"), props, []byte{1}), noSession},
		{V1_21, cat(testUUID[:], str("Notch"), props, []byte{1}), noSession},
		{V1_21_2, cat(testUUID[:], str("Notch"), props), noSession},
		{V26_1, cat(testUUID[:], str("Notch"), props), noSession},
		{V26_2, cat(testUUID[:], str("Notch"), props, session[:]), same},
		{V26_3, cat(testUUID[:], str("Notch"), props, session[:]), same},
	}
	for _, tc := range tests {
		if got := ls.AppendPayload(nil, tc.p); !bytes.Equal(got, tc.want) {
			t.Errorf("%v: encoded %x\nwant %x", tc.p, got, tc.want)
		}
		got, err := DecodeLoginSuccess(tc.want, tc.p)
		if err != nil || !reflect.DeepEqual(got, tc.keep(ls)) {
			t.Errorf("%v: decoded %+v, %v", tc.p, got, err)
		}
	}
	// 1.20.5–1.21.1 must carry the flag; without it the packet is short.
	if _, err := DecodeLoginSuccess(cat(testUUID[:], str("Notch"), props), V1_20_5); !errors.Is(err, ErrMalformed) {
		t.Errorf("1.20.5 without strict-error-handling: %v", err)
	}
	if _, err := DecodeLoginSuccess(cat(str("not-a-uuid"), str("Notch")), V1_12_2); !errors.Is(err, ErrMalformed) {
		t.Errorf("bad string uuid: %v", err)
	}
}

func noPropsNoSession(l LoginSuccess) LoginSuccess {
	l.Properties, l.SessionID = nil, [16]byte{}
	return l
}
func noSession(l LoginSuccess) LoginSuccess { l.SessionID = [16]byte{}; return l }
func same(l LoginSuccess) LoginSuccess      { return l }

func TestSmallLoginPackets(t *testing.T) {
	sc := SetCompression{Threshold: 256}
	if got := sc.AppendPayload(nil); !bytes.Equal(got, []byte{0x80, 0x02}) {
		t.Errorf("set compression = %x", got)
	}
	if got, err := DecodeSetCompression([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}); err != nil || got.Threshold != -1 {
		t.Errorf("threshold -1: %+v, %v", got, err)
	}
	req := LoginPluginRequest{MessageID: 7, Channel: "velocity:player_info", Data: []byte{4}}
	wantReq := cat(vi(7), str("velocity:player_info"), []byte{4})
	if got := req.AppendPayload(nil); !bytes.Equal(got, wantReq) {
		t.Errorf("plugin request = %x", got)
	}
	if got, err := DecodeLoginPluginRequest(wantReq); err != nil || !reflect.DeepEqual(got, req) {
		t.Errorf("plugin request decoded %+v, %v", got, err)
	}
	if got, err := DecodeLoginPluginRequest(cat(vi(1), str("x"))); err != nil || len(got.Data) != 0 {
		t.Errorf("plugin request without data: %+v, %v", got, err)
	}
	resp := LoginPluginResponse{MessageID: 7, Successful: true, Data: []byte("forwarded")}
	wantResp := cat(vi(7), []byte{1}, []byte("forwarded"))
	if got := resp.AppendPayload(nil); !bytes.Equal(got, wantResp) {
		t.Errorf("plugin response = %x", got)
	}
	if got, err := DecodeLoginPluginResponse(wantResp); err != nil || !reflect.DeepEqual(got, resp) {
		t.Errorf("plugin response decoded %+v, %v", got, err)
	}
	notUnderstood := LoginPluginResponse{MessageID: 3}
	if got := notUnderstood.AppendPayload(nil); !bytes.Equal(got, []byte{3, 0}) {
		t.Errorf("not understood = %x", got)
	}
	if _, err := DecodeLoginPluginResponse([]byte{3, 0, 1}); !errors.Is(err, ErrMalformed) {
		t.Errorf("data after an unsuccessful response: %v", err)
	}
	if err := DecodeEmpty(nil); err != nil {
		t.Errorf("empty: %v", err)
	}
	if err := DecodeEmpty([]byte{0}); !errors.Is(err, ErrMalformed) {
		t.Errorf("non-empty: %v", err)
	}
}

// Every prefix of a valid encoding must fail cleanly, and so must a byte of
// trailing garbage: no panic, an error matching ErrMalformed.
func TestLoginPacketsTruncatedAndTrailing(t *testing.T) {
	decoders := loginDecoders()
	for _, p := range []Protocol{V1_7_2, V1_8, V1_12_2, V1_16, V1_19, V1_19_1, V1_20_2, V1_20_5, V1_21, V1_21_4, V26_2} {
		for name, enc := range loginSamples(p) {
			dec := decoders[name]
			if err := dec(enc, p); err != nil {
				t.Fatalf("%v %s: valid encoding rejected: %v", p, name, err)
			}
			for cut := range len(enc) {
				err := dec(enc[:cut], p)
				if err == nil {
					if name == "plugin request" || name == "plugin response" {
						continue // data runs to the end of the packet, so shorter is still valid
					}
					t.Fatalf("%v %s: accepted %d of %d bytes", p, name, cut, len(enc))
				}
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrStringTooLong) && !errors.Is(err, ErrVarIntTooLong) {
					t.Fatalf("%v %s cut at %d: %v is not a classified error", p, name, cut, err)
				}
			}
			if name == "plugin request" || (name == "plugin response") {
				continue
			}
			if err := dec(append(enc, 0), p); !errors.Is(err, ErrMalformed) {
				t.Fatalf("%v %s: trailing byte: %v", p, name, err)
			}
		}
	}
}

func loginSamples(p Protocol) map[string][]byte {
	return map[string][]byte{
		"encryption request":  EncryptionRequest{ServerID: "x", PublicKey: testPubKey, VerifyToken: testToken, ShouldAuthenticate: true}.AppendPayload(nil, p),
		"encryption response": EncryptionResponse{SharedSecret: testPubKey[:128], VerifyToken: testToken}.AppendPayload(nil, p),
		"signed response":     EncryptionResponse{SharedSecret: testPubKey[:128], Signed: true, Salt: 1, Signature: testToken}.AppendPayload(nil, p),
		"login success":       LoginSuccess{UUID: testUUID, Name: "Notch", Properties: testProps}.AppendPayload(nil, p),
		"set compression":     SetCompression{Threshold: 256}.AppendPayload(nil),
		"plugin request":      LoginPluginRequest{MessageID: 1, Channel: "a:b", Data: []byte{1, 2}}.AppendPayload(nil),
		"plugin response":     LoginPluginResponse{MessageID: 1, Successful: true, Data: []byte{1}}.AppendPayload(nil),
	}
}

func loginDecoders() map[string]func([]byte, Protocol) error {
	resp := func(b []byte, p Protocol) error { _, err := DecodeEncryptionResponse(b, p); return err }
	return map[string]func([]byte, Protocol) error{
		"encryption request":  func(b []byte, p Protocol) error { _, err := DecodeEncryptionRequest(b, p); return err },
		"encryption response": resp,
		"signed response":     resp,
		"login success":       func(b []byte, p Protocol) error { _, err := DecodeLoginSuccess(b, p); return err },
		"set compression":     func(b []byte, _ Protocol) error { _, err := DecodeSetCompression(b); return err },
		"plugin request":      func(b []byte, _ Protocol) error { _, err := DecodeLoginPluginRequest(b); return err },
		"plugin response":     func(b []byte, _ Protocol) error { _, err := DecodeLoginPluginResponse(b); return err },
	}
}

func TestLoginPacketBounds(t *testing.T) {
	huge := bytes.Repeat([]byte{1}, maxLoginBytes+1)
	if _, err := DecodeEncryptionRequest(cat(str(""), vi(len(huge)), huge, vi(0)), V1_8); !errors.Is(err, ErrMalformed) {
		t.Errorf("oversized key: %v", err)
	}
	if _, err := DecodeEncryptionRequest(cat(str(strings.Repeat("s", 21)), vi(0), vi(0)), V1_8); !errors.Is(err, ErrStringTooLong) {
		t.Errorf("21-character server id: %v", err)
	}
	if _, err := DecodeEncryptionResponse(cat(be16(0xFFFF), []byte{1}), V1_7_6); !errors.Is(err, ErrMalformed) {
		t.Errorf("negative 1.7 array length: %v", err)
	}
	if _, err := DecodeLoginSuccess(cat(testUUID[:], str("Notch"), vi(maxProperties+1)), V1_19); !errors.Is(err, ErrMalformed) {
		t.Errorf("too many properties: %v", err)
	}
	if _, err := DecodeLoginSuccess(cat(testUUID[:], str(strings.Repeat("n", 17)), vi(0)), V1_19); !errors.Is(err, ErrStringTooLong) {
		t.Errorf("17-character name: %v", err)
	}
	if _, err := DecodeLoginPluginRequest(cat(vi(1), str("c"), make([]byte, maxLoginPluginData+1))); !errors.Is(err, ErrMalformed) {
		t.Errorf("oversized plugin data: %v", err)
	}
}

func TestUUIDForms(t *testing.T) {
	if got := FormatUUID(testUUID); got != "069a79f4-44e9-4726-a5be-fca90e38aaf5" {
		t.Fatalf("FormatUUID = %s", got)
	}
	for _, s := range []string{"069a79f4-44e9-4726-a5be-fca90e38aaf5", "069a79f444e94726a5befca90e38aaf5", "069A79F444E94726A5BEFCA90E38AAF5"} {
		if u, err := ParseUUID(s); err != nil || u != testUUID {
			t.Errorf("ParseUUID(%s) = %x, %v", s, u, err)
		}
	}
	for _, s := range []string{"", "069a79f4-44e9-4726-a5be-fca90e38aaf", "069a79f4044e9-4726-a5be-fca90e38aaf5", "zz9a79f444e94726a5befca90e38aaf5"} {
		if _, err := ParseUUID(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseUUID(%q): %v", s, err)
		}
	}
}

// fuzzProtocol maps a fuzz byte onto a known protocol.
func fuzzProtocol(b byte) Protocol {
	ps := KnownProtocols()
	return ps[int(b)%len(ps)]
}

func fuzzSeedLogin(f *testing.F, name string) {
	for i, p := range KnownProtocols() {
		if i%4 != 0 && p != V1_19 && p != V1_19_1 && p != V1_20_5 && p != V26_2 {
			continue
		}
		f.Add(loginSamples(p)[name], byte(i))
	}
}

func FuzzDecodeEncryptionRequest(f *testing.F) {
	fuzzSeedLogin(f, "encryption request")
	f.Fuzz(func(t *testing.T, b []byte, pb byte) {
		p := fuzzProtocol(pb)
		v, err := DecodeEncryptionRequest(b, p)
		if err != nil {
			return
		}
		back, err := DecodeEncryptionRequest(v.AppendPayload(nil, p), p)
		if err != nil || !reflect.DeepEqual(back, v) {
			t.Fatalf("%v: %+v re-decoded as %+v, %v", p, v, back, err)
		}
	})
}

func FuzzDecodeEncryptionResponse(f *testing.F) {
	fuzzSeedLogin(f, "encryption response")
	fuzzSeedLogin(f, "signed response")
	f.Fuzz(func(t *testing.T, b []byte, pb byte) {
		p := fuzzProtocol(pb)
		v, err := DecodeEncryptionResponse(b, p)
		if err != nil {
			return
		}
		if v.Signed && (p.Before(V1_19) || p.AtLeast(V1_19_3)) {
			t.Fatalf("%v: signed form outside 1.19-1.19.2", p)
		}
		back, err := DecodeEncryptionResponse(v.AppendPayload(nil, p), p)
		if err != nil || !reflect.DeepEqual(back, v) {
			t.Fatalf("%v: %+v re-decoded as %+v, %v", p, v, back, err)
		}
	})
}

func FuzzDecodeLoginSuccess(f *testing.F) {
	fuzzSeedLogin(f, "login success")
	f.Fuzz(func(t *testing.T, b []byte, pb byte) {
		p := fuzzProtocol(pb)
		v, err := DecodeLoginSuccess(b, p)
		if err != nil {
			return
		}
		back, err := DecodeLoginSuccess(v.AppendPayload(nil, p), p)
		if err != nil || !reflect.DeepEqual(back, v) {
			t.Fatalf("%v: %+v re-decoded as %+v, %v", p, v, back, err)
		}
	})
}

func FuzzDecodeSetCompression(f *testing.F) {
	f.Add([]byte{0x80, 0x02})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeSetCompression(b)
		if err != nil {
			return
		}
		if back, err := DecodeSetCompression(v.AppendPayload(nil)); err != nil || back != v {
			t.Fatalf("%+v re-decoded as %+v, %v", v, back, err)
		}
	})
}

func FuzzDecodeLoginPlugin(f *testing.F) {
	f.Add(loginSamples(V1_13)["plugin request"], true)
	f.Add(loginSamples(V1_13)["plugin response"], false)
	f.Add([]byte{3, 0}, false)
	f.Fuzz(func(t *testing.T, b []byte, request bool) {
		if request {
			v, err := DecodeLoginPluginRequest(b)
			if err != nil {
				return
			}
			if back, err := DecodeLoginPluginRequest(v.AppendPayload(nil)); err != nil || !reflect.DeepEqual(back, v) {
				t.Fatalf("%+v re-decoded as %+v, %v", v, back, err)
			}
			return
		}
		v, err := DecodeLoginPluginResponse(b)
		if err != nil {
			return
		}
		if back, err := DecodeLoginPluginResponse(v.AppendPayload(nil)); err != nil || !reflect.DeepEqual(back, v) {
			t.Fatalf("%+v re-decoded as %+v, %v", v, back, err)
		}
	})
}
