package mc_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// nmpVersions are the versions node-minecraft-protocol checks our command
// codecs against: strings for parsers (1.13–1.18), each id table from 1.19.
var nmpVersions = []string{"1.13.2", "1.16.5", "1.18.2", "1.19", "1.19.2", "1.19.4", "1.20.4", "1.20.6", "1.21.1", "1.21.4"}

// encodeScript has nmp serialize a vanilla-like command tree (integer, double,
// entity, score holder, resource and greedy string parsers, a redirect, custom
// suggestions) for a version, and print the packet (id + payload) as hex.
const encodeScript = `
const { createSerializer } = require('minecraft-protocol/src/transforms/serializer')
const mcData = require('minecraft-data')(process.argv[1])
const version = process.argv[1]
const flagsType = mcData.protocol.types.command_node[1][0].type[1]
const fl = (type, exec, redirect, suggest) => {
  const f = {}
  for (const field of flagsType) f[field.name] = 0
  f.command_node_type = type
  f.has_command = exec ? 1 : 0
  f.has_redirect_node = redirect ? 1 : 0
  f.has_custom_suggestions = suggest ? 1 : 0
  return f
}
const ranged = (min, max) => ({ flags: { unused: 0, max_present: max === undefined ? 0 : 1, min_present: min === undefined ? 0 : 1 }, min, max })
const parsers = JSON.stringify(mcData.protocol.types.command_node)
const has = (name) => parsers.includes('"' + name + '"')
const nodes = [
  { flags: fl(0), children: [1, 3, 5, 7, 9] },
  { flags: fl(1), children: [2], extraNodeData: { name: 'give' } },
  { flags: fl(2, true), children: [], extraNodeData: { name: 'count', parser: 'brigadier:integer', properties: ranged(1, 64) } },
  { flags: fl(1), children: [4], extraNodeData: { name: 'speed' } },
  { flags: fl(2, true, false, true), children: [], extraNodeData: { name: 'value', parser: 'brigadier:double', properties: ranged(0.5) , suggestionType: 'minecraft:ask_server' } },
  { flags: fl(1), children: [6], extraNodeData: { name: 'kill' } },
  { flags: fl(2, true), children: [], extraNodeData: { name: 'targets', parser: 'minecraft:entity', properties: { unused: 0, onlyAllowPlayers: 0, onlyAllowEntities: 0 } } },
  { flags: fl(1), children: [8], extraNodeData: { name: 'say' } },
  { flags: fl(2, true), children: [], extraNodeData: { name: 'message', parser: 'brigadier:string', properties: 'GREEDY_PHRASE' } },
  { flags: fl(1, false, true), children: [], redirectNode: 1, extraNodeData: { name: 'g' } }
]
if (has('minecraft:resource')) {
  nodes[0].children.push(10)
  nodes.push({ flags: fl(1), children: [11], extraNodeData: { name: 'summon' } })
  nodes.push({ flags: fl(2, true), children: [], extraNodeData: { name: 'entity', parser: 'minecraft:resource', properties: { registry: 'minecraft:entity_type' } } })
}
nodes[0].children.push(nodes.length)
nodes.push({ flags: fl(1), children: [nodes.length + 1], extraNodeData: { name: 'scoreboard' } })
nodes.push({ flags: fl(2, true), children: [], extraNodeData: { name: 'holder', parser: 'minecraft:score_holder', properties: { unused: 0, allowMultiple: 1 } } })
const s = createSerializer({ state: 'play', isServer: true, version })
const buf = s.createPacketBuffer({ name: 'declare_commands', params: { nodes, rootIndex: 0 } })
process.stdout.write(buf.toString('hex'))
`

// nmpTree has nmp encode the tree of encodeScript for version and returns the payload.
func nmpTree(t *testing.T, h *nmp.Harness, version string, p mc.Protocol) []byte {
	t.Helper()
	cmd := exec.Command(h.Node, "-e", encodeScript, version)
	cmd.Dir = h.Dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(h.Dir, "node_modules"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: nmp could not encode the tree: %v\n%s", version, err, stderr.String())
	}
	pk, err := hex.DecodeString(string(out))
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(pk)
	id, err := mc.ReadVarInt(r)
	n := len(pk) - r.Len()
	want, _ := mc.PacketID(p, mc.PlayState, mc.Clientbound, mc.PacketDeclareCommands)
	if err != nil || id != want {
		t.Fatalf("%s: nmp wrote packet id %#x, our registry says %#x", version, id, want)
	}
	return pk[n:]
}

// A tree nmp encodes, with every kind of parser property, decodes and encodes
// again byte-exact; with the proxy's nodes added, nmp reads all of it back and
// finds them under the root.
func TestCommandTreeAgainstNMP(t *testing.T) {
	h := nmp.Setup(t)
	dec := h.StartDecoder(t)
	for _, v := range nmpVersions {
		p := protocolOf(t, v)
		payload := nmpTree(t, h, v, p)
		tree, err := mc.DecodeCommandTree(payload, p)
		if err != nil {
			t.Fatalf("%s: our decoder refused nmp's tree: %v", v, err)
		}
		again, err := tree.AppendPayload(nil)
		if err != nil || !bytes.Equal(again, payload) {
			t.Fatalf("%s: decode→encode is not byte-exact (%v)\n got %x\nwant %x", v, err, again, payload)
		}
		tree.RemoveRootChild("say")
		srv := tree.AddLiteral(tree.Root, "server", true)
		if _, err := tree.AddArgument(srv, "server", mc.ArgWord, true, true); err != nil {
			t.Fatal(err)
		}
		kick := tree.AddLiteral(tree.Root, "kick", false)
		who, _ := tree.AddArgument(kick, "player", mc.ArgWord, true, true)
		if _, err := tree.AddArgument(who, "reason", mc.ArgGreedy, false, true); err != nil {
			t.Fatal(err)
		}
		merged, err := tree.AppendPayload(nil)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := mc.PacketID(p, mc.PlayState, mc.Clientbound, mc.PacketDeclareCommands)
		res := dec.Decode(v, "play", [][]byte{append(mc.AppendVarInt(nil, id), merged...)})[0]
		if res.Error != "" || res.Read != res.Length || res.Name != "declare_commands" {
			t.Fatalf("%s: nmp could not read the merged tree: %+v", v, res)
		}
		roots := rootNames(t, res.Params)
		for _, want := range []string{"server", "kick", "give", "kill"} {
			if !slices.Contains(roots, want) {
				t.Errorf("%s: nmp finds %v under the root, want %q among them", v, roots, want)
			}
		}
		if slices.Contains(roots, "say") {
			t.Errorf("%s: a removed root child is still linked: %v", v, roots)
		}
	}
}

func rootNames(t *testing.T, params map[string]any) []string {
	t.Helper()
	b, _ := json.Marshal(params)
	var tree struct {
		Nodes []struct {
			Children []int `json:"children"`
			Extra    struct {
				Name string `json:"name"`
			} `json:"extraNodeData"`
		} `json:"nodes"`
		Root int `json:"rootIndex"`
	}
	if err := json.Unmarshal(b, &tree); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range tree.Nodes[tree.Root].Children {
		out = append(out, tree.Nodes[c].Extra.Name)
	}
	return out
}

// The tab complete answers the proxy writes are what nmp reads, for every form.
func TestTabCompleteAgainstNMP(t *testing.T) {
	dec := nmp.Setup(t).StartDecoder(t)
	for _, v := range append([]string{"1.8.8", "1.12.2"}, nmpVersions...) {
		p := protocolOf(t, v)
		resp := mc.TabCompleteResponse{TransactionID: 7, Start: 8, Length: 2, Matches: []mc.TabMatch{
			{Text: "lobby"}, {Text: "survival", Tooltip: mc.TextComponent("12 players")},
		}}
		payload, err := resp.AppendPayload(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := mc.PacketID(p, mc.PlayState, mc.Clientbound, mc.PacketTabCompleteResponse)
		res := dec.Decode(v, "play", [][]byte{append(mc.AppendVarInt(nil, id), payload...)})[0]
		if res.Error != "" || res.Read != res.Length || res.Name != "tab_complete" {
			t.Fatalf("%s: nmp could not read our tab complete: %+v", v, res)
		}
		b, _ := json.Marshal(res.Params)
		if !strings.Contains(string(b), "survival") {
			t.Errorf("%s: nmp read %s", v, b)
		}
		back, err := mc.DecodeTabCompleteResponse(payload, p)
		if err != nil || len(back.Matches) != 2 || back.Matches[1].Text != "survival" {
			t.Errorf("%s: our decoder read %+v, %v", v, back, err)
		}
	}
}

// The ids the registry gives the command packets are minecraft-data's.
func TestCommandPacketIDsAreMinecraftData(t *testing.T) {
	h := nmp.Setup(t)
	data := filepath.Join(h.Dir, "node_modules", "minecraft-data", "minecraft-data", "data")
	var paths struct {
		PC map[string]map[string]string `json:"pc"`
	}
	raw, err := os.ReadFile(filepath.Join(data, "dataPaths.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &paths); err != nil {
		t.Fatal(err)
	}
	names := map[mc.PacketType][2]string{ // serverbound/clientbound name in minecraft-data
		mc.PacketDeclareCommands: {"", "declare_commands"}, mc.PacketTabCompleteRequest: {"tab_complete", ""},
		mc.PacketTabCompleteResponse: {"", "tab_complete"}, mc.PacketChatCommand: {"chat_command", ""},
		mc.PacketChatCommandSigned: {"chat_command_signed", ""}, mc.PacketChatAck: {"message_acknowledgement", ""},
	}
	checked := 0
	for _, p := range mc.KnownProtocols() {
		for _, v := range p.Names() {
			dir, ok := paths.PC[v]["protocol"]
			if !ok {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(data, dir, "protocol.json"))
			if err != nil {
				t.Fatal(err)
			}
			ids := packetIDs(t, raw)
			chat := "chat"
			if p.AtLeast(mc.V1_19) {
				chat = "chat_message"
			}
			all := map[mc.PacketType][2]string{mc.PacketChatMessage: {chat, ""}}
			for k, n := range names {
				all[k] = n
			}
			for typ, n := range all {
				for d, name := range n {
					if name == "" {
						continue
					}
					want, inData := ids[d][name]
					got, inReg := mc.PacketID(p, mc.PlayState, mc.Direction(d), typ)
					if inData != inReg || (inData && want != got) {
						t.Errorf("%s %s: registry %#x (%v), minecraft-data %#x (%v)", v, typ, got, inReg, want, inData)
					}
				}
			}
			checked++
			break
		}
	}
	if checked < 30 {
		t.Fatalf("only %d versions checked", checked)
	}
}

func packetIDs(t *testing.T, raw []byte) [2]map[string]int32 {
	t.Helper()
	var proto struct {
		Play map[string]struct {
			Types map[string]json.RawMessage `json:"types"`
		} `json:"play"`
	}
	if err := json.Unmarshal(raw, &proto); err != nil {
		t.Fatal(err)
	}
	var out [2]map[string]int32
	for d, side := range []string{"toServer", "toClient"} {
		out[d] = map[string]int32{}
		var packet []json.RawMessage
		if err := json.Unmarshal(proto.Play[side].Types["packet"], &packet); err != nil {
			t.Fatal(err)
		}
		var fields []struct {
			Type []json.RawMessage `json:"type"`
		}
		_ = json.Unmarshal(packet[1], &fields)
		var mapper struct {
			Mappings map[string]string `json:"mappings"`
		}
		_ = json.Unmarshal(fields[0].Type[1], &mapper)
		for hexID, name := range mapper.Mappings {
			var id int32
			for _, c := range strings.TrimPrefix(hexID, "0x") {
				id = id*16 + int32(strings.IndexRune("0123456789abcdef", c|0x20))
			}
			out[d][name] = id
		}
	}
	return out
}

func protocolOf(t *testing.T, version string) mc.Protocol {
	t.Helper()
	for _, p := range mc.KnownProtocols() {
		if slices.Contains(p.Names(), version) {
			return p
		}
	}
	t.Fatalf("unknown version %s", version)
	return 0
}

// Hostile trees are refused with an error, never a panic.
func TestCommandTreeRefusesBadInput(t *testing.T) {
	p := mc.V1_21_4
	node := func(b ...byte) []byte { return b }
	cases := map[string][]byte{
		"empty":              {},
		"no nodes":           node(0x00),
		"huge count":         node(0xff, 0xff, 0xff, 0x7f),
		"truncated":          node(0x01, 0x00),
		"child out of range": node(0x01, 0x00, 0x01, 0x05, 0x00),
		"root out of range":  node(0x01, 0x00, 0x00, 0x03),
		"node type 3":        node(0x01, 0x03, 0x00, 0x00),
		"unknown parser":     node(0x02, 0x00, 0x01, 0x01, 0x02, 0x00, 0x01, 'x', 0x7f, 0x00),
		"redirect out":       node(0x01, 0x08, 0x00, 0x09, 0x00),
		"trailing bytes":     node(0x01, 0x00, 0x00, 0x00, 0x00),
		"many children":      node(0x01, 0x00, 0xff, 0xff, 0x03),
	}
	for name, payload := range cases {
		if _, err := mc.DecodeCommandTree(payload, p); err == nil || !errors.Is(err, mc.ErrMalformed) && !errors.Is(err, mc.ErrVarIntTooLong) {
			t.Errorf("%s: err = %v, want a malformed-packet error", name, err)
		}
	}
	if _, err := mc.DecodeCommandTree(node(0x02, 0x02, 0x00, 0x01, 'x', 0x0b, 'f', 'o', 'r', 'g', 'e', ':', 'e', 'n', 'u', 'm', 's', 0x00, 0x01), mc.V1_16_4); err == nil {
		t.Error("a modded parser of 1.16 was accepted: its properties cannot be skipped")
	}
}

func FuzzDecodeCommandTree(f *testing.F) {
	var tree mc.CommandTree
	seed := []byte{0x01, 0x00, 0x00, 0x00}
	tree, _ = mc.DecodeCommandTree(seed, mc.V1_21_4)
	lit := tree.AddLiteral(tree.Root, "server", true)
	_, _ = tree.AddArgument(lit, "name", mc.ArgWord, true, true)
	full, _ := tree.AppendPayload(nil)
	f.Add(seed, uint16(mc.V1_21_4))
	f.Add(full, uint16(mc.V1_21_4))
	f.Add(full, uint16(mc.V1_16_4))
	f.Fuzz(func(t *testing.T, payload []byte, proto uint16) {
		p := mc.Protocol(proto)
		if _, ok := mc.RegistryFor(p); !ok || !p.AtLeast(mc.V1_13) {
			return
		}
		tree, err := mc.DecodeCommandTree(payload, p)
		if err != nil {
			return
		}
		// A re-encoded tree is canonical (a padded VarInt comes out short) and
		// reads back to the same bytes.
		again, err := tree.AppendPayload(nil)
		if err != nil {
			t.Fatalf("a decoded tree does not encode: %v", err)
		}
		tree2, err := mc.DecodeCommandTree(again, p)
		if err != nil {
			t.Fatalf("our own encoding does not decode: %x: %v", again, err)
		}
		if third, _ := tree2.AppendPayload(nil); !bytes.Equal(third, again) {
			t.Fatalf("encode is not stable: %x → %x", again, third)
		}
	})
}

// The command a player typed comes out of every form of the chat packets, and
// the acknowledgement a 1.19.3+ command carries is read past its signatures.
func TestChatCommandForms(t *testing.T) {
	str := func(s string) []byte { return mc.AppendString(nil, s) }
	if cmd, ok, err := mc.DecodeChatCommand(mc.PacketChatMessage, str("/server lobby"), mc.V1_12_2); !ok || err != nil || cmd != "server lobby" {
		t.Errorf("1.12 chat: %q %v %v", cmd, ok, err)
	}
	if _, ok, _ := mc.DecodeChatCommand(mc.PacketChatMessage, str("hello"), mc.V1_12_2); ok {
		t.Error("a chat line was read as a command")
	}
	if _, ok, _ := mc.DecodeChatCommand(mc.PacketChatMessage, str("/x"), mc.V1_19_4); ok {
		t.Error("a 1.19+ chat message was read as a command")
	}
	// 1.19.3-1.20.4 chat_command: command, timestamp, salt, 1 signature, offset 3, acknowledged.
	signed := str("msg Steve hi")
	signed = append(signed, make([]byte, 16)...)
	signed = mc.AppendVarInt(signed, 1)
	signed = append(append(signed, str("message")...), make([]byte, 256)...)
	signed = append(mc.AppendVarInt(signed, 3), 0, 0, 0)
	if cmd, ok, _ := mc.DecodeChatCommand(mc.PacketChatCommand, signed, mc.V1_19_4); !ok || cmd != "msg Steve hi" {
		t.Errorf("1.19.4 chat_command: %q", cmd)
	}
	if off, ok := mc.ChatCommandAckOffset(mc.PacketChatCommand, signed, mc.V1_19_4); !ok || off != 3 {
		t.Errorf("offset = %d %v, want 3", off, ok)
	}
	if off, ok := mc.ChatCommandAckOffset(mc.PacketChatCommandSigned, append(signed, 0x2a), mc.V1_21_5); !ok || off != 3 {
		t.Errorf("1.21.5 signed offset = %d %v, want 3", off, ok)
	}
	if _, ok := mc.ChatCommandAckOffset(mc.PacketChatCommand, str("server lobby"), mc.V1_20_5); ok {
		t.Error("an unsigned 1.20.5 command has no acknowledgement")
	}
	if _, ok := mc.ChatCommandAckOffset(mc.PacketChatCommand, signed[:40], mc.V1_19_4); ok {
		t.Error("a truncated command gave an offset")
	}
	ack, _ := mc.ChatAck{Offset: 3}.AppendPayload(nil, mc.V1_20_3)
	if !bytes.Equal(ack, []byte{3}) {
		t.Errorf("ack = %x", ack)
	}
	for _, p := range []mc.Protocol{mc.V1_7_2, mc.V1_8, mc.V1_12_2, mc.V1_13, mc.V1_21_4} {
		req := mc.TabCompleteRequest{TransactionID: 4, Text: "/server su"}
		back, err := mc.DecodeTabCompleteRequest(req.AppendPayload(nil, p), p)
		if err != nil || back.Text != req.Text || (p.AtLeast(mc.V1_13) && back.TransactionID != 4) {
			t.Errorf("%d: tab request round trip %+v %v", p, back, err)
		}
	}
}

// The other command codecs survive anything a client or a backend sends.
func FuzzCommandPackets(f *testing.F) {
	f.Add([]byte{0x07, 0x01, 0x02, 0x01, 0x03, 'a', 'b', 'c', 0x00}, uint16(mc.V1_21_4))
	f.Add([]byte{0x0c, '/', 's', 'e', 'r', 'v', 'e', 'r', ' ', 'l', 'o', 'b', 'b'}, uint16(mc.V1_12_2))
	f.Fuzz(func(t *testing.T, payload []byte, proto uint16) {
		p := mc.Protocol(proto)
		if _, ok := mc.RegistryFor(p); !ok {
			return
		}
		for _, typ := range []mc.PacketType{mc.PacketChatMessage, mc.PacketChatCommand, mc.PacketChatCommandSigned} {
			_, _, _ = mc.DecodeChatCommand(typ, payload, p)
			_, _ = mc.ChatCommandAckOffset(typ, payload, p)
		}
		_, _ = mc.DecodeTabCompleteRequest(payload, p)
		if resp, err := mc.DecodeTabCompleteResponse(payload, p); err == nil {
			if _, err := resp.AppendPayload(nil, p); err != nil {
				t.Fatalf("a decoded answer does not encode: %v", err)
			}
		}
	})
}
