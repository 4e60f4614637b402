package mc

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// Text the proxy shows a player in play: chat lines, the action bar and
// titles. Components are held as JSON; on the wire they are JSON strings
// before 1.20.3 and NBT from 1.20.3 (see nbt.go).

// readComponent reads a chat component of protocol p as JSON.
func (r *fieldReader) component(p Protocol) json.RawMessage {
	if r.err != nil {
		return nil
	}
	if p.AtLeast(V1_20_3) {
		js, err := componentNBTToJSON(r.c)
		r.err = err
		return js
	}
	js, err := r.c.stringBytes(maxChatJSONLen)
	if err == nil && !json.Valid(js) {
		err = fmt.Errorf("component is not JSON: %w", ErrMalformed)
	}
	r.err = err
	return append(json.RawMessage(nil), js...)
}

// appendComponent appends a JSON chat component in p's form.
func appendComponent(dst []byte, js json.RawMessage, p Protocol) ([]byte, error) {
	if p.AtLeast(V1_20_3) {
		return componentJSONToNBT(dst, js)
	}
	if !json.Valid(js) {
		return nil, fmt.Errorf("mc: chat component is not JSON: %w", ErrMalformed)
	}
	if len(js) > maxChatJSONLen {
		return nil, fmt.Errorf("mc: chat component of %d bytes exceeds %d: %w", len(js), maxChatJSONLen, ErrStringTooLong)
	}
	return appendBytesString(dst, js), nil
}

// TextComponent builds the JSON component showing plain text (legacy §
// formatting codes inside it still work), for the proxy's own messages.
func TextComponent(text string) json.RawMessage {
	return appendJSONObject1(nil, "text", text)
}

// SystemChat is a message from the server (not from a player): a chat line,
// or the action bar text above the hotbar. Before 1.19 it is the chat message
// packet with a position; from 1.19 the system chat packet.
type SystemChat struct {
	Message json.RawMessage
	// ActionBar shows Message above the hotbar instead of in chat (1.8+).
	ActionBar bool
}

// Chat positions before 1.19.
const (
	chatPositionSystem   = 1
	chatPositionGameInfo = 2
)

// DecodeSystemChat parses the packet of protocol p.
func DecodeSystemChat(payload []byte, p Protocol) (SystemChat, error) {
	if err := checkLayout(p, "system chat"); err != nil {
		return SystemChat{}, err
	}
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	var m SystemChat
	m.Message = r.component(p)
	switch {
	case p.Before(V1_8):
	case p.Before(V1_19):
		m.ActionBar = r.u8() == chatPositionGameInfo
		if p.AtLeast(V1_16) {
			r.uuid()
		}
	case p.Before(V1_19_1):
		m.ActionBar = r.varInt() == chatPositionGameInfo
	default:
		m.ActionBar = r.boolean()
	}
	err := r.err
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return SystemChat{}, fmt.Errorf("mc: system chat: %w", err)
	}
	return m, nil
}

// AppendPayload appends the packet in p's layout. 1.7 has no action bar.
func (m SystemChat) AppendPayload(dst []byte, p Protocol) ([]byte, error) {
	if err := checkLayout(p, "system chat"); err != nil {
		return nil, err
	}
	if m.ActionBar && p.Before(V1_8) {
		return nil, fmt.Errorf("%w: 1.7 has no action bar", ErrNoLayout)
	}
	dst, err := appendComponent(dst, m.Message, p)
	if err != nil {
		return nil, err
	}
	pos := byte(chatPositionSystem)
	if m.ActionBar {
		pos = chatPositionGameInfo
	}
	switch {
	case p.Before(V1_8):
	case p.Before(V1_19):
		dst = append(dst, pos)
		if p.AtLeast(V1_16) {
			dst = append(dst, make([]byte, 16)...) // sender: nobody
		}
	case p.Before(V1_19_1):
		dst = AppendVarInt(dst, int32(pos)) // chat type ids: 1 system, 2 game info
	default:
		dst = appendBool(dst, m.ActionBar)
	}
	return dst, nil
}

// TitleAction is what a title packet does, independent of the version's
// numbering.
type TitleAction uint8

// Title actions.
const (
	// TitleShow shows Text as the big title (with the subtitle set before it).
	TitleShow TitleAction = iota + 1
	// TitleSubtitle sets the line under the title.
	TitleSubtitle
	// TitleActionBar shows Text above the hotbar (1.11+ as a title action,
	// 1.8–1.10 through the chat packet).
	TitleActionBar
	// TitleTimes sets the fade-in, stay and fade-out in ticks.
	TitleTimes
	// TitleHide hides the title.
	TitleHide
	// TitleReset hides the title and resets its texts and times.
	TitleReset
)

// Title is one title change. A switch resets the old server's titles with
// Title{Action: TitleReset}; the limbo shows its messages with the others.
type Title struct {
	Action                TitleAction
	Text                  json.RawMessage
	FadeIn, Stay, FadeOut int32
}

// legacy title action numbers: 1.8–1.10 and 1.11–1.16 (which added the
// action bar as 2 and moved the rest up).
func titleActionNumber(a TitleAction, p Protocol) (int32, bool) {
	old := map[TitleAction]int32{TitleShow: 0, TitleSubtitle: 1, TitleTimes: 2, TitleHide: 3, TitleReset: 4}
	if p.AtLeast(V1_11) {
		old = map[TitleAction]int32{TitleShow: 0, TitleSubtitle: 1, TitleActionBar: 2, TitleTimes: 3, TitleHide: 4, TitleReset: 5}
	}
	n, ok := old[a]
	return n, ok
}

// Packet encodes the title change for protocol p: the one title packet before
// 1.17, one of the five title packets after. 1.7 has no titles.
func (t Title) Packet(p Protocol) (Packet, error) {
	if err := checkLayout(p, "title"); err != nil {
		return Packet{}, err
	}
	if p.Before(V1_8) {
		return Packet{}, fmt.Errorf("%w: 1.7 has no titles", ErrNoLayout)
	}
	if t.Action == TitleActionBar && p.Before(V1_11) {
		payload, err := SystemChat{Message: t.Text, ActionBar: true}.AppendPayload(nil, p)
		return Packet{PacketSystemChat, payload}, err
	}
	times := func(dst []byte) []byte {
		dst = binary.BigEndian.AppendUint32(dst, uint32(t.FadeIn))
		dst = binary.BigEndian.AppendUint32(dst, uint32(t.Stay))
		return binary.BigEndian.AppendUint32(dst, uint32(t.FadeOut))
	}
	if p.Before(V1_17) {
		n, ok := titleActionNumber(t.Action, p)
		if !ok {
			return Packet{}, fmt.Errorf("mc: title action %d unknown", t.Action)
		}
		dst := AppendVarInt(nil, n)
		switch t.Action {
		case TitleShow, TitleSubtitle, TitleActionBar:
			var err error
			if dst, err = appendComponent(dst, t.Text, p); err != nil {
				return Packet{}, err
			}
		case TitleTimes:
			dst = times(dst)
		}
		return Packet{PacketTitle, dst}, nil
	}
	switch t.Action {
	case TitleShow, TitleSubtitle, TitleActionBar:
		ty := map[TitleAction]PacketType{TitleShow: PacketSetTitleText, TitleSubtitle: PacketSetSubtitleText, TitleActionBar: PacketSetActionBarText}[t.Action]
		dst, err := appendComponent(nil, t.Text, p)
		return Packet{ty, dst}, err
	case TitleTimes:
		return Packet{PacketSetTitleTimes, times(nil)}, nil
	case TitleHide, TitleReset:
		return Packet{PacketClearTitles, appendBool(nil, t.Action == TitleReset)}, nil
	}
	return Packet{}, fmt.Errorf("mc: title action %d unknown", t.Action)
}

// DecodeTitle parses any title packet of protocol p (t says which one it is,
// from Registry.Type); a 1.8–1.10 action bar arrives as SystemChat instead.
func DecodeTitle(t PacketType, payload []byte, p Protocol) (Title, error) {
	if err := checkLayout(p, "title"); err != nil {
		return Title{}, err
	}
	c := cursor{b: payload}
	r := fieldReader{c: &c}
	var ti Title
	readTimes := func() { ti.FadeIn, ti.Stay, ti.FadeOut = r.i32(), r.i32(), r.i32() }
	switch t {
	case PacketTitle:
		if p.Before(V1_8) || p.AtLeast(V1_17) {
			return Title{}, fmt.Errorf("%w: the title packet exists in 1.8–1.16", ErrNoLayout)
		}
		n := r.varInt()
		for a := TitleShow; a <= TitleReset; a++ {
			if m, ok := titleActionNumber(a, p); ok && m == n && r.err == nil {
				ti.Action = a
			}
		}
		switch ti.Action {
		case TitleShow, TitleSubtitle, TitleActionBar:
			ti.Text = r.component(p)
		case TitleTimes:
			readTimes()
		case 0:
			if r.err == nil {
				r.err = fmt.Errorf("title action %d: %w", n, ErrMalformed)
			}
		}
	case PacketSetTitleText, PacketSetSubtitleText, PacketSetActionBarText:
		ti.Action = map[PacketType]TitleAction{PacketSetTitleText: TitleShow, PacketSetSubtitleText: TitleSubtitle, PacketSetActionBarText: TitleActionBar}[t]
		ti.Text = r.component(p)
	case PacketSetTitleTimes:
		ti.Action = TitleTimes
		readTimes()
	case PacketClearTitles:
		ti.Action = TitleHide
		if r.boolean() {
			ti.Action = TitleReset
		}
	default:
		return Title{}, fmt.Errorf("mc: %s is not a title packet", t)
	}
	err := r.err
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return Title{}, fmt.Errorf("mc: title: %w", err)
	}
	return ti, nil
}
