package mc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// maxChatJSONLen bounds a login disconnect component (vanilla: 262144 characters).
const maxChatJSONLen = 262144

// EncodeLoginDisconnect returns a login-state disconnect frame showing text,
// so the proxy can refuse a player with a readable reason.
func EncodeLoginDisconnect(text string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Encoding a struct with one string field cannot fail.
	_ = enc.Encode(struct {
		Text string `json:"text"`
	}{text})
	return EncodeLoginDisconnectJSON(bytes.TrimRight(buf.Bytes(), "\n"))
}

// EncodeLoginDisconnectJSON returns a login-state disconnect frame carrying an
// already-built chat component, for operators who configure rich kick messages.
func EncodeLoginDisconnectJSON(component []byte) []byte {
	return AppendFrame(nil, 0x00, appendBytesString(nil, component))
}

// ParseLoginDisconnect recognises a backend's login disconnect while peeking
// at its first login packet; ok is false for any other packet. text is the
// component flattened to plain text.
func ParseLoginDisconnect(f Frame) (text string, ok bool) {
	if f.ID != 0x00 {
		return "", false
	}
	c := cursor{b: f.Payload}
	js, err := c.stringBytes(maxChatJSONLen)
	if err != nil || c.rest() != 0 || !json.Valid(js) {
		return "", false
	}
	return DescriptionText(js), true
}

// DescriptionText flattens a chat component (string, object with text/extra,
// or array) to plain text for logs and the CLI. Legacy § codes inside strings
// are kept; StripColorCodes removes them. Objects without "text" fall back to
// "fallback", then the English text of a known vanilla "translate" key, then
// the key itself. Invalid JSON yields "".
func DescriptionText(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return ""
	}
	var sb strings.Builder
	flattenChat(&sb, v)
	return sb.String()
}

// vanillaTexts is the English text of the translatable messages vanilla sends
// before a player is in game. Modern vanilla sends "server is full" as
// {"translate":"multiplayer.disconnect.server_full"}: flattened to the bare key it
// would match no full_kick_patterns, and a player shown it would read the key.
var vanillaTexts = map[string]string{
	"multiplayer.disconnect.server_full": "The server is full!",
}

func flattenChat(sb *strings.Builder, v any) {
	switch x := v.(type) {
	case string:
		sb.WriteString(x)
	case json.Number:
		sb.WriteString(x.String())
	case bool:
		fmt.Fprint(sb, x)
	case []any:
		for _, e := range x {
			flattenChat(sb, e)
		}
	case map[string]any:
		switch t := x["text"].(type) {
		case string, json.Number, bool:
			flattenChat(sb, t)
		default:
			if s, ok := x["fallback"].(string); ok {
				sb.WriteString(s)
			} else if s, ok := x["translate"].(string); ok {
				if en, vanilla := vanillaTexts[s]; vanilla {
					s = en
				}
				sb.WriteString(s)
			}
		}
		if extra, ok := x["extra"].([]any); ok {
			for _, e := range extra {
				flattenChat(sb, e)
			}
		}
	}
}

// StripColorCodes removes legacy §x formatting codes so MOTDs print cleanly
// in a terminal; a trailing lone § is dropped too.
func StripColorCodes(s string) string {
	if !strings.ContainsRune(s, '§') {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s))
	skip := false
	for _, r := range s {
		switch {
		case skip:
			skip = false
		case r == '§':
			skip = true
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}
