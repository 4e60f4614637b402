package bungeechannel

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func seedRequests(f *testing.F) {
	for _, c := range requestCases {
		f.Add([]byte(c.wire))
	}
	for name, b := range loadJava(f) {
		if strings.HasPrefix(name, "req-") {
			f.Add(b)
		}
	}
	f.Add([]byte(u("Forward") + u("ALL") + u("c") + "\x80\x00"))
	f.Add([]byte("\x00\x07Connect\x00\x02\xED\xA0"))
	f.Add([]byte{})
}

// FuzzDecodeRequest: no input panics or reads past the payload, and whatever
// decodes encodes to bytes that decode to the same request.
func FuzzDecodeRequest(f *testing.F) {
	seedRequests(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		req, err := DecodeRequest(payload)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownSubchannel) {
				t.Fatalf("error of no known kind: %v", err)
			}
			return
		}
		if len(req.Data) > MaxForwardData {
			t.Fatalf("%d bytes of forward data", len(req.Data))
		}
		enc, err := req.AppendTo(nil)
		if err != nil {
			t.Fatalf("decoded request does not encode: %+v: %v", req, err)
		}
		again, err := DecodeRequest(enc)
		if err != nil || !reflect.DeepEqual(again, req) {
			t.Fatalf("round trip: %+v -> %+v, %v", req, again, err)
		}
	})
}

// FuzzDecodeReply: same for replies, which test backends read.
func FuzzDecodeReply(f *testing.F) {
	for _, c := range replyCases {
		f.Add([]byte(c.wire))
	}
	for name, b := range loadJava(f) {
		if strings.HasPrefix(name, "reply-") {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		r, err := DecodeReply(payload)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error of no known kind: %v", err)
			}
			return
		}
		enc, err := r.AppendTo(nil)
		if err != nil {
			// IP's port is a whole int on the wire; only 0-65535 is written.
			if r.Port < 0 || r.Port > 0xFFFF || r.Count < 0 {
				return
			}
			t.Fatalf("decoded reply does not encode: %+v: %v", r, err)
		}
		again, err := DecodeReply(enc)
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("round trip: %+v -> %+v, %v", r, again, err)
		}
	})
}

// FuzzModifiedUTF8: every valid Go string short enough survives writeUTF and
// readUTF unchanged.
func FuzzModifiedUTF8(f *testing.F) {
	for _, s := range []string{"", "lobby", "a\x00b", "é§€", "😀\U0010FFFF", "\uFFFF\uFFFD"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc, err := appendUTF(nil, s)
		if err != nil {
			if modifiedUTF8Len(s) <= maxUTF {
				t.Fatalf("refused a %d-byte string: %v", modifiedUTF8Len(s), err)
			}
			return
		}
		if len(enc) != 2+modifiedUTF8Len(s) {
			t.Fatalf("length %d, predicted %d", len(enc)-2, modifiedUTF8Len(s))
		}
		r := reader{b: enc}
		back, err := r.utf("s")
		want := strings.ToValidUTF8(s, "\uFFFD")
		if !utf8.ValidString(s) {
			// Each invalid byte becomes its own U+FFFD, as range does.
			var b strings.Builder
			for _, c := range s {
				b.WriteRune(c)
			}
			want = b.String()
		}
		if err != nil || back != want || r.off != len(enc) {
			t.Fatalf("%q came back as %q (%v)", s, back, err)
		}
	})
}

// FuzzHandle: no request, however hostile, panics the Handler or makes it answer
// with something that does not decode.
func FuzzHandle(f *testing.F) {
	seedRequests(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		h := Handler{Proxy: network(), Permissions: allowAll()}
		op, reply, _ := h.Handle(context.Background(), notch, payload)
		if reply == nil {
			return
		}
		r, err := DecodeReply(reply)
		if err != nil || r.Op != op {
			t.Fatalf("reply to %s does not decode: % x: %v", op, reply, err)
		}
		if !bytes.HasPrefix(reply, []byte{0, byte(len(op.String()))}) {
			t.Fatalf("reply does not start with its subchannel: % x", reply)
		}
	})
}
