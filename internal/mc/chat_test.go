package mc

import (
	"encoding/json"
	"testing"
)

func TestDescriptionText(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string
	}{
		{"plain string", `"§6A §lMinecraft§r Server"`, "§6A §lMinecraft§r Server"},
		{"object text", `{"text":"Hello"}`, "Hello"},
		{"object with extra", `{"text":"Hello","extra":[" ",{"text":"big","bold":true},{"text":" world","extra":["!"]}]}`, "Hello big world!"},
		{"array", `["a",{"text":"b"},["c",{"text":"d","extra":["e"]}]]`, "abcde"},
		{"translate fallback", `{"translate":"multiplayer.disconnect.kicked"}`, "multiplayer.disconnect.kicked"},
		{"known vanilla key in English", `{"translate":"multiplayer.disconnect.server_full"}`, "The server is full!"},
		{"translate with fallback text", `{"translate":"custom.key","fallback":"You were kicked"}`, "You were kicked"},
		{"text wins over translate", `{"text":"x","translate":"y"}`, "x"},
		{"empty text with extra", `{"text":"","extra":[{"text":"only"}]}`, "only"},
		{"number and bool", `[1,true]`, "1true"},
		{"unicode escapes", `{"text":"\u00a7cred \u2764"}`, "§cred ❤"},
		{"null", `null`, ""},
		{"invalid", `{"text":`, ""},
		{"empty", ``, ""},
		{"unknown shape ignored", `{"score":{"name":"x"}}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := DescriptionText(json.RawMessage(tc.raw)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStripColorCodes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"§aGreen §lbold§r", "Green bold"},
		{"§x§f§f§0§0§0§0hex", "hex"},
		{"trailing §", "trailing "},
		{"§§a", "a"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := StripColorCodes(tc.in); got != tc.want {
			t.Errorf("StripColorCodes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLoginDisconnect(t *testing.T) {
	tests := []struct {
		name string
		text string
	}{
		{"simple", "You are banned"},
		{"needs escaping", "quote \" backslash \\ newline \n tab \t <html> & §c"},
		{"unicode", "héllo ❤ 𝄞"},
		{"empty", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ReadFrame(newReader(EncodeLoginDisconnect(tc.text)), 0)
			if err != nil {
				t.Fatal(err)
			}
			c := cursor{b: f.Payload}
			js, err := c.stringBytes(maxChatJSONLen)
			if err != nil {
				t.Fatal(err)
			}
			var comp struct{ Text string }
			if err := json.Unmarshal(js, &comp); err != nil || comp.Text != tc.text {
				t.Fatalf("component %s: %v", js, err)
			}
			got, ok := ParseLoginDisconnect(f)
			if !ok || got != tc.text {
				t.Fatalf("ParseLoginDisconnect = %q, %v", got, ok)
			}
		})
	}
}

func TestParseLoginDisconnect(t *testing.T) {
	tests := []struct {
		name  string
		frame []byte
		text  string
		ok    bool
	}{
		{"rich component", EncodeLoginDisconnectJSON([]byte(`{"text":"Server ","extra":[{"text":"full","color":"red"}]}`)), "Server full", true},
		{"translate", EncodeLoginDisconnectJSON([]byte(`{"translate":"multiplayer.disconnect.server_full"}`)), "The server is full!", true},
		{"plain json string", EncodeLoginDisconnectJSON([]byte(`"bye"`)), "bye", true},
		{"encryption request", AppendFrame(nil, 0x01, []byte{0, 0, 0}), "", false},
		{"set compression", AppendFrame(nil, 0x03, AppendVarInt(nil, 256)), "", false},
		{"not json", EncodeLoginDisconnectJSON([]byte(`bye`)), "", false},
		{"trailing", AppendFrame(nil, 0, append(AppendString(nil, `"x"`), 1)), "", false},
		{"truncated string", AppendFrame(nil, 0, []byte{0x10, 'x'}), "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ReadFrame(newReader(tc.frame), 0)
			if err != nil {
				t.Fatal(err)
			}
			text, ok := ParseLoginDisconnect(f)
			if text != tc.text || ok != tc.ok {
				t.Fatalf("got %q, %v; want %q, %v", text, ok, tc.text, tc.ok)
			}
		})
	}
}

func FuzzDescriptionText(f *testing.F) {
	f.Add(`"§aplain"`)
	f.Add(`{"text":"a","extra":[{"text":"b"},"c"]}`)
	f.Add(`[{"translate":"k"},["x"]]`)
	f.Add(`{"text":`)
	f.Add(`[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]`)
	f.Fuzz(func(t *testing.T, raw string) {
		_ = DescriptionText(json.RawMessage(raw))
		_ = StripColorCodes(raw)
		fr, err := ReadFrame(newReader(EncodeLoginDisconnectJSON([]byte(raw))), 0)
		if err != nil {
			return // too large for a frame
		}
		if _, ok := ParseLoginDisconnect(fr); len(raw) <= maxChatJSONLen && ok != json.Valid([]byte(raw)) {
			t.Fatalf("ok = %v for %q", ok, raw)
		}
	})
}
