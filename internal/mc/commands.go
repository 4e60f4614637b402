package mc

import (
	"fmt"
	"slices"
	"strings"
)

// The Declare Commands packet (1.13+): the brigadier node graph the client
// completes and colours commands with. The proxy reads a backend's tree, adds
// its own commands under the root and writes it again; parsers' properties are
// kept as raw bytes so every node the proxy does not touch goes out byte-exact.

// Node flags.
const (
	NodeRoot       byte = 0x00
	NodeLiteral    byte = 0x01
	NodeArgument   byte = 0x02
	nodeTypeMask   byte = 0x03
	NodeExecutable byte = 0x04
	NodeRedirect   byte = 0x08
	NodeSuggests   byte = 0x10
)

// Limits a hostile backend cannot exceed.
const (
	maxCommandNodes    = 1 << 16
	maxCommandChildren = 1 << 16
	maxNodeNameLen     = 32767
)

// CommandNode is one node of the graph.
type CommandNode struct {
	Flags    byte
	Children []int32
	Redirect int32 // with NodeRedirect
	Name     string
	// Parser names an argument's parser: a registry id from 1.19 (ParserID), an
	// identifier before (ParserName).
	ParserID   int32
	ParserName string
	// Props are the parser's properties as they came.
	Props []byte
	// Suggestions is the suggestion provider (with NodeSuggests).
	Suggestions string
}

// Type is the node's kind: NodeRoot, NodeLiteral or NodeArgument.
func (n *CommandNode) Type() byte { return n.Flags & nodeTypeMask }

// CommandTree is a Declare Commands packet.
type CommandTree struct {
	Nodes []CommandNode
	Root  int32
	proto Protocol
}

type propKind uint8

const (
	propNone propKind = iota
	propFloat
	propDouble
	propInt
	propLong
	propVarInt
	propByte
	propBool
	propInt32
	propIdentifier
)

type parserInfo struct {
	name string
	kind propKind
}

type parserList struct {
	from    Protocol
	parsers []parserInfo
}

// parsersFor is the id table of protocol p (1.19+).
func parsersFor(p Protocol) []parserInfo {
	var out []parserInfo
	for _, l := range parsersByID {
		if l.from <= p {
			out = l.parsers
		}
	}
	return out
}

// ArgKind is the kind of argument the proxy adds to a tree.
type ArgKind uint8

// The argument kinds the proxy's commands use.
const (
	ArgWord   ArgKind = iota // one word (brigadier:string, single word)
	ArgGreedy                // the rest of the line (brigadier:string, greedy phrase)
)

// DecodeCommandTree reads a Declare Commands payload of protocol p.
func DecodeCommandTree(payload []byte, p Protocol) (CommandTree, error) {
	c := &cursor{b: payload}
	count, err := c.varInt()
	if err != nil {
		return CommandTree{}, err
	}
	if count < 1 || count > maxCommandNodes {
		return CommandTree{}, fmt.Errorf("mc: %d command nodes: %w", count, ErrMalformed)
	}
	t := CommandTree{Nodes: make([]CommandNode, 0, min(int(count), c.rest())), proto: p}
	byID := []parserInfo(nil)
	if p.AtLeast(V1_19) {
		byID = parsersFor(p)
	}
	for range count {
		n, err := readNode(c, p, byID)
		if err != nil {
			return CommandTree{}, err
		}
		t.Nodes = append(t.Nodes, n)
	}
	if t.Root, err = c.varInt(); err != nil {
		return CommandTree{}, err
	}
	if err := c.end(); err != nil {
		return CommandTree{}, err
	}
	return t, t.check()
}

// check refuses indexes outside the node list.
func (t *CommandTree) check() error {
	n := int32(len(t.Nodes))
	if t.Root < 0 || t.Root >= n {
		return fmt.Errorf("mc: command root %d of %d nodes: %w", t.Root, n, ErrMalformed)
	}
	for i := range t.Nodes {
		nd := &t.Nodes[i]
		for _, ch := range nd.Children {
			if ch < 0 || ch >= n {
				return fmt.Errorf("mc: command node %d has child %d of %d nodes: %w", i, ch, n, ErrMalformed)
			}
		}
		if nd.Flags&NodeRedirect != 0 && (nd.Redirect < 0 || nd.Redirect >= n) {
			return fmt.Errorf("mc: command node %d redirects to %d of %d nodes: %w", i, nd.Redirect, n, ErrMalformed)
		}
	}
	return nil
}

func readNode(c *cursor, p Protocol, byID []parserInfo) (CommandNode, error) {
	var n CommandNode
	var err error
	if n.Flags, err = c.u8(); err != nil {
		return n, err
	}
	kids, err := c.varInt()
	if err != nil {
		return n, err
	}
	if kids < 0 || kids > maxCommandChildren || int(kids) > c.rest() {
		return n, fmt.Errorf("mc: command node with %d children: %w", kids, ErrMalformed)
	}
	n.Children = make([]int32, kids)
	for i := range n.Children {
		if n.Children[i], err = c.varInt(); err != nil {
			return n, err
		}
	}
	if n.Flags&NodeRedirect != 0 {
		if n.Redirect, err = c.varInt(); err != nil {
			return n, err
		}
	}
	switch n.Type() {
	case NodeRoot:
	case NodeLiteral, NodeArgument:
		if n.Name, err = c.string(maxNodeNameLen); err != nil {
			return n, err
		}
	default:
		return n, fmt.Errorf("mc: command node of type 3: %w", ErrMalformed)
	}
	if n.Type() == NodeArgument {
		var kind propKind
		if byID != nil {
			if n.ParserID, err = c.varInt(); err != nil {
				return n, err
			}
			if n.ParserID < 0 || int(n.ParserID) >= len(byID) {
				return n, fmt.Errorf("mc: unknown argument parser %d for protocol %d: %w", n.ParserID, p, ErrMalformed)
			}
			kind = byID[n.ParserID].kind
		} else {
			if n.ParserName, err = c.string(maxNodeNameLen); err != nil {
				return n, err
			}
			k, ok := parsersByName[n.ParserName]
			if !ok {
				return n, fmt.Errorf("mc: unknown argument parser %q: %w", n.ParserName, ErrMalformed)
			}
			kind = k
		}
		start := c.off
		if err := skipProps(c, kind); err != nil {
			return n, err
		}
		n.Props = c.b[start:c.off:c.off]
	}
	if n.Flags&NodeSuggests != 0 {
		if n.Suggestions, err = c.string(maxNodeNameLen); err != nil {
			return n, err
		}
	}
	return n, nil
}

// skipProps reads past a parser's properties.
func skipProps(c *cursor, k propKind) error {
	var err error
	rangeOf := func(width int) error {
		flags, err := c.u8()
		if err != nil {
			return err
		}
		n := 0
		if flags&0x01 != 0 {
			n += width
		}
		if flags&0x02 != 0 {
			n += width
		}
		_, err = c.take(n)
		return err
	}
	switch k {
	case propNone:
	case propFloat, propInt:
		err = rangeOf(4)
	case propDouble, propLong:
		err = rangeOf(8)
	case propVarInt:
		_, err = c.varInt()
	case propByte, propBool:
		_, err = c.u8()
	case propInt32:
		_, err = c.take(4)
	case propIdentifier:
		_, err = c.string(maxNodeNameLen)
	}
	return err
}

// AppendPayload writes the tree as a Declare Commands payload of its protocol.
func (t CommandTree) AppendPayload(dst []byte) ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	dst = AppendVarInt(dst, int32(len(t.Nodes)))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		dst = append(dst, n.Flags)
		dst = AppendVarInt(dst, int32(len(n.Children)))
		for _, ch := range n.Children {
			dst = AppendVarInt(dst, ch)
		}
		if n.Flags&NodeRedirect != 0 {
			dst = AppendVarInt(dst, n.Redirect)
		}
		if n.Type() != NodeRoot {
			dst = AppendString(dst, n.Name)
		}
		if n.Type() == NodeArgument {
			if t.proto.AtLeast(V1_19) {
				dst = AppendVarInt(dst, n.ParserID)
			} else {
				dst = AppendString(dst, n.ParserName)
			}
			dst = append(dst, n.Props...)
		}
		if n.Flags&NodeSuggests != 0 {
			dst = AppendString(dst, n.Suggestions)
		}
	}
	return AppendVarInt(dst, t.Root), nil
}

// NewCommandTree is an empty tree (its root alone) for protocol p, for a
// server of the proxy's own (the limbo) to declare its few commands.
func NewCommandTree(p Protocol) CommandTree {
	return CommandTree{Nodes: []CommandNode{{Flags: NodeRoot}}, proto: p}
}

// Protocol is the version the tree was read for.
func (t *CommandTree) Protocol() Protocol { return t.proto }

// RootChild finds the root's child called name (any case).
func (t *CommandTree) RootChild(name string) (int32, bool) {
	for _, ch := range t.Nodes[t.Root].Children {
		if strings.EqualFold(t.Nodes[ch].Name, name) && t.Nodes[ch].Type() == NodeLiteral {
			return ch, true
		}
	}
	return 0, false
}

// RemoveRootChild unlinks the root's children called name (the nodes stay, so
// other indexes keep their meaning).
func (t *CommandTree) RemoveRootChild(name string) {
	root := &t.Nodes[t.Root]
	root.Children = slices.DeleteFunc(root.Children, func(ch int32) bool {
		return strings.EqualFold(t.Nodes[ch].Name, name) && t.Nodes[ch].Type() == NodeLiteral
	})
}

func (t *CommandTree) add(parent int32, n CommandNode) int32 {
	id := int32(len(t.Nodes))
	t.Nodes = append(t.Nodes, n)
	t.Nodes[parent].Children = append(t.Nodes[parent].Children, id)
	return id
}

// AddLiteral adds a literal node under parent and returns its index.
func (t *CommandTree) AddLiteral(parent int32, name string, executable bool) int32 {
	f := NodeLiteral
	if executable {
		f |= NodeExecutable
	}
	return t.add(parent, CommandNode{Flags: f, Name: name})
}

// AddArgument adds a string argument node under parent: one word or the rest of
// the line; askServer makes the client ask for suggestions as it is typed.
func (t *CommandTree) AddArgument(parent int32, name string, kind ArgKind, askServer, executable bool) (int32, error) {
	n := CommandNode{Flags: NodeArgument, Name: name, ParserName: "brigadier:string"}
	if t.proto.AtLeast(V1_19) {
		id := slices.IndexFunc(parsersFor(t.proto), func(pi parserInfo) bool { return pi.name == "brigadier:string" })
		if id < 0 {
			return 0, fmt.Errorf("mc: protocol %d has no brigadier:string parser", t.proto)
		}
		n.ParserID, n.ParserName = int32(id), ""
	}
	mode := int32(0) // single word
	if kind == ArgGreedy {
		mode = 2
	}
	n.Props = AppendVarInt(nil, mode)
	if executable {
		n.Flags |= NodeExecutable
	}
	if askServer {
		n.Flags |= NodeSuggests
		n.Suggestions = "minecraft:ask_server"
	}
	return t.add(parent, n), nil
}
