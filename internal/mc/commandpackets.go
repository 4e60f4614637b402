package mc

import (
	"encoding/json"
	"fmt"
	"strings"
)

// maxChatLen is the longest chat line or command a client may send (vanilla's
// limit is 256 characters; a command block's 32767).
const maxChatLen = 32767

// DecodeChatCommand reads the command a player typed, without its '/': from
// chat_command and chat_command_signed (1.19+), or from the chat packet when
// its text starts with '/' (before 1.19). isCommand is false for a chat line.
func DecodeChatCommand(t PacketType, payload []byte, p Protocol) (cmd string, isCommand bool, err error) {
	c := &cursor{b: payload}
	switch t {
	case PacketChatCommand, PacketChatCommandSigned:
		cmd, err = c.string(maxChatLen)
		return cmd, err == nil, err
	case PacketChatMessage:
		if p.AtLeast(V1_19) {
			return "", false, nil // 1.19+ commands have packets of their own
		}
		text, err := c.string(maxChatLen)
		if err != nil {
			return "", false, err
		}
		if !strings.HasPrefix(text, "/") {
			return "", false, nil
		}
		return text[1:], true, nil
	}
	return "", false, fmt.Errorf("mc: %s is not a chat packet", t)
}

// signatureLen is a 1.19.3+ message signature's fixed size.
const signatureLen = 256

// ChatCommandAckOffset reads the last-seen update a 1.19.3+ command carries:
// how many chat messages the client acknowledges with it. ok is false for
// versions and packets without one.
func ChatCommandAckOffset(t PacketType, payload []byte, p Protocol) (offset int32, ok bool) {
	if !p.AtLeast(V1_19_3) || (t != PacketChatCommand && t != PacketChatCommandSigned) {
		return 0, false
	}
	if t == PacketChatCommand && p.AtLeast(V1_20_5) {
		return 0, false // unsigned from 1.20.5: no last-seen update
	}
	c := &cursor{b: payload}
	r := &fieldReader{c: c}
	_ = field(r, func() (string, error) { return c.string(maxChatLen) })
	r.i64() // timestamp
	r.i64() // salt
	n := field(r, c.varInt)
	if r.err != nil || n < 0 || n > 8 {
		return 0, false
	}
	for range n {
		_ = field(r, func() (string, error) { return c.string(16) })
		_ = field(r, func() ([]byte, error) { return c.take(signatureLen) })
	}
	offset = field(r, c.varInt)
	return offset, r.err == nil && offset >= 0
}

// ChatAck is the serverbound message acknowledgement (1.19.3+ form): the
// number of chat messages the client has seen since its last update.
type ChatAck struct{ Offset int32 }

// AppendPayload writes the acknowledgement for protocol p (1.19.3+ only).
func (a ChatAck) AppendPayload(dst []byte, p Protocol) ([]byte, error) {
	if !p.AtLeast(V1_19_3) {
		return nil, fmt.Errorf("mc: protocol %d acknowledges chat another way", p)
	}
	return AppendVarInt(dst, a.Offset), nil
}

// TabCompleteRequest is what a client asks to complete.
type TabCompleteRequest struct {
	// TransactionID ties the answer to the request (1.13+).
	TransactionID int32
	// Text is everything typed, a command's '/' included.
	Text string
}

// DecodeTabCompleteRequest reads a serverbound tab complete of protocol p.
func DecodeTabCompleteRequest(payload []byte, p Protocol) (TabCompleteRequest, error) {
	c := &cursor{b: payload}
	var req TabCompleteRequest
	var err error
	if p.AtLeast(V1_13) {
		if req.TransactionID, err = c.varInt(); err != nil {
			return req, err
		}
	}
	// The fields after the text (assume-command, the block looked at, before
	// 1.13) say nothing the proxy needs.
	req.Text, err = c.string(maxChatLen)
	return req, err
}

// AppendPayload writes the request for protocol p (tests and injected requests).
func (req TabCompleteRequest) AppendPayload(dst []byte, p Protocol) []byte {
	if p.AtLeast(V1_13) {
		dst = AppendVarInt(dst, req.TransactionID)
	}
	dst = AppendString(dst, req.Text)
	if p.AtLeast(V1_9) {
		dst = append(dst, 0) // assume command: false
	}
	if p.AtLeast(V1_8) && !p.AtLeast(V1_13) {
		dst = append(dst, 0) // no block looked at
	}
	return dst
}

// TabMatch is one suggestion; Tooltip (1.13+) is an optional text component.
type TabMatch struct {
	Text    string
	Tooltip json.RawMessage
}

// TabCompleteResponse answers a completion. Before 1.13 it is the matches
// only, each replacing the last word typed; from 1.13 Start and Length say which
// part of the request's text the matches replace.
type TabCompleteResponse struct {
	TransactionID int32
	Start, Length int32
	Matches       []TabMatch
}

// maxTabMatches bounds a decoded answer.
const maxTabMatches = 1 << 12

// DecodeTabCompleteResponse reads a clientbound tab complete of protocol p.
func DecodeTabCompleteResponse(payload []byte, p Protocol) (TabCompleteResponse, error) {
	c := &cursor{b: payload}
	r := &fieldReader{c: c}
	var resp TabCompleteResponse
	modern := p.AtLeast(V1_13)
	if modern {
		resp.TransactionID = field(r, c.varInt)
		resp.Start = field(r, c.varInt)
		resp.Length = field(r, c.varInt)
	}
	n := field(r, c.varInt)
	if r.err != nil {
		return resp, r.err
	}
	if n < 0 || n > maxTabMatches || int(n) > c.rest() {
		return resp, fmt.Errorf("mc: %d completions: %w", n, ErrMalformed)
	}
	for range n {
		m := TabMatch{Text: field(r, func() (string, error) { return c.string(maxChatLen) })}
		if modern && r.boolean() {
			m.Tooltip = r.component(p)
		}
		if r.err != nil {
			return resp, r.err
		}
		resp.Matches = append(resp.Matches, m)
	}
	if err := c.end(); err != nil {
		return resp, err
	}
	return resp, nil
}

// AppendPayload writes the answer for protocol p.
func (resp TabCompleteResponse) AppendPayload(dst []byte, p Protocol) ([]byte, error) {
	modern := p.AtLeast(V1_13)
	if modern {
		dst = AppendVarInt(dst, resp.TransactionID)
		dst = AppendVarInt(dst, resp.Start)
		dst = AppendVarInt(dst, resp.Length)
	}
	dst = AppendVarInt(dst, int32(len(resp.Matches)))
	for _, m := range resp.Matches {
		dst = AppendString(dst, m.Text)
		if !modern {
			continue
		}
		if m.Tooltip == nil {
			dst = append(dst, 0)
			continue
		}
		var err error
		if dst, err = appendComponent(append(dst, 1), m.Tooltip, p); err != nil {
			return nil, err
		}
	}
	return dst, nil
}
