// Command gen writes the limbo's bundled registry data: for every protocol
// from 1.16 whose vanilla registries PrismarineJS/minecraft-data (MIT)
// captured, the registry codec (1.16–1.20.4) or the synchronised registries
// (1.20.5+) as binary network NBT, gzip-compressed and deduplicated, plus
// registries_gen.go naming the file of each protocol. It reads the
// minecraft-data that test/nmp pins (run `npm ci --prefix test/nmp` first):
//
//	go generate ./internal/limbo
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// skipped are protocols whose minecraft-data capture is another release's:
// 1.21.5 made the entity variant registries required ("Registry must be
// non-empty"), which the borrowed 1.21.3 and 1.21.1 captures lack, so a
// vanilla client would refuse them. The limbo serves these versions from
// registries learnt from a backend (Registries.LearnConfiguration).
var skipped = map[mc.Protocol]string{
	mc.V1_21_5: "minecraft-data maps 1.21.5 to the 1.21.3 capture, which lacks the 1.21.5 variant registries",
	mc.V1_21_6: "minecraft-data maps 1.21.6 to the 1.21.3 capture, which lacks the 1.21.5 variant registries",
	mc.V1_21_7: "minecraft-data maps 1.21.8 to the 1.21.3 capture, which lacks the 1.21.5 variant registries",
	mc.V1_21_9: "minecraft-data's 1.21.9 capture is a copy of 1.21.1's (no variant registries)",
}

const (
	kindCodec      = 1 // one compound: the registry codec (1.16–1.20.4)
	kindRegistries = 2 // registries with their entries (1.20.5+)
	blobMagic      = "IRLD"
)

func main() {
	data := flag.String("data", "", "minecraft-data package directory (default: test/nmp/node_modules/minecraft-data under the module root)")
	out := flag.String("out", ".", "the internal/limbo directory")
	flag.Parse()
	if err := run(*data, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

type dataPath struct {
	LoginPacket string `json:"loginPacket"`
}

type entry struct {
	protocol mc.Protocol
	version  string // minecraft-data version whose capture is used
	capture  string // its directory (data/pc/...)
	file     string
}

func run(dataDir, outDir string) error {
	if dataDir == "" {
		root, err := moduleRoot()
		if err != nil {
			return err
		}
		dataDir = filepath.Join(root, "test", "nmp", "node_modules", "minecraft-data")
	}
	pkgVersion, err := packageVersion(dataDir)
	if err != nil {
		return fmt.Errorf("%w (run `npm ci --prefix test/nmp` first)", err)
	}
	var paths struct {
		PC map[string]dataPath `json:"pc"`
	}
	if err := readJSON(filepath.Join(dataDir, "minecraft-data", "data", "dataPaths.json"), &paths); err != nil {
		return err
	}
	blobDir := filepath.Join(outDir, "registrydata")
	if err := os.RemoveAll(blobDir); err != nil {
		return err
	}
	if err := os.MkdirAll(blobDir, 0o755); err != nil {
		return err
	}
	var entries []entry
	written := map[string]string{} // capture dir -> file
	for _, p := range mc.KnownProtocols() {
		if p.Before(mc.V1_16) || p > mc.NewestLayout {
			continue
		}
		if why := skipped[p]; why != "" {
			fmt.Fprintf(os.Stderr, "gen: %v not bundled: %s\n", p, why)
			continue
		}
		var version, capture string
		for _, name := range p.Names() {
			if dp, ok := paths.PC[name]; ok && dp.LoginPacket != "" {
				version, capture = name, dp.LoginPacket
				break
			}
		}
		if capture == "" {
			fmt.Fprintf(os.Stderr, "gen: %v not bundled: minecraft-data has no login packet capture\n", p)
			continue
		}
		kind := kindCodec
		if p.AtLeast(mc.V1_20_5) {
			kind = kindRegistries
		}
		key := fmt.Sprintf("%s#%d", capture, kind)
		file, ok := written[key]
		if !ok {
			blob, err := buildBlob(filepath.Join(dataDir, "minecraft-data", "data", capture, "loginPacket.json"), kind)
			if err != nil {
				return fmt.Errorf("%s: %w", capture, err)
			}
			if file, err = writeBlob(blobDir, blob); err != nil {
				return err
			}
			written[key] = file
		}
		entries = append(entries, entry{protocol: p, version: version, capture: capture, file: file})
	}
	return writeIndex(filepath.Join(outDir, "registries_gen.go"), pkgVersion, entries)
}

func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.mod above the working directory")
		}
	}
}

func packageVersion(dir string) (string, error) {
	var pkg struct {
		Version string `json:"version"`
		License string `json:"license"`
	}
	if err := readJSON(filepath.Join(dir, "package.json"), &pkg); err != nil {
		return "", err
	}
	if pkg.License != "MIT" {
		return "", fmt.Errorf("minecraft-data %s is licensed %q, not MIT: check before bundling", pkg.Version, pkg.License)
	}
	return pkg.Version, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// buildBlob converts the capture's registry codec into the blob format
// registries.go reads: magic, kind, then either one compound payload or the
// registries with their entries.
func buildBlob(path string, kind int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	root, err := parseOrdered(json.NewDecoder(f))
	if err != nil {
		return nil, err
	}
	codec := root.get("dimensionCodec")
	if codec == nil {
		return nil, errors.New("no dimensionCodec")
	}
	blob := append([]byte(blobMagic), byte(kind))
	if kind == kindCodec {
		if codec.get("type").str != "compound" {
			return nil, errors.New("dimensionCodec is not a compound")
		}
		payload, err := compoundPayload(nil, codec.get("value"))
		if err != nil {
			return nil, err
		}
		blob = mc.AppendVarInt(blob, int32(len(payload)))
		return append(blob, payload...), nil
	}
	blob = mc.AppendVarInt(blob, int32(len(codec.keys)))
	for i, id := range codec.keys {
		reg := codec.vals[i]
		if got := reg.get("id"); got == nil || got.str != id {
			return nil, fmt.Errorf("registry %s: id field does not match", id)
		}
		blob = mc.AppendString(blob, id)
		list := reg.get("entries")
		blob = mc.AppendVarInt(blob, int32(len(list.arr)))
		for _, e := range list.arr {
			blob = mc.AppendString(blob, e.get("key").str)
			v := e.get("value")
			if v == nil {
				blob = mc.AppendVarInt(blob, 0)
				continue
			}
			tag, err := tagOf(v)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", id, e.get("key").str, err)
			}
			blob = mc.AppendVarInt(blob, int32(len(tag)))
			blob = append(blob, tag...)
		}
	}
	return blob, nil
}

func writeBlob(dir string, blob []byte) (string, error) {
	sum := sha256.Sum256(blob)
	name := hex.EncodeToString(sum[:6]) + ".bin.gz"
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := zw.Write(blob); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return name, os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644)
}

func writeIndex(path, pkgVersion string, entries []entry) error {
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by gen from minecraft-data %s; DO NOT EDIT.\n\n", pkgVersion)
	b.WriteString("package limbo\n\nimport \"github.com/infrarust-go/infrarust/internal/mc\"\n\n")
	fmt.Fprintf(&b, "// minecraftDataVersion is the minecraft-data release the bundled registries come from.\nconst minecraftDataVersion = %q\n\n", pkgVersion)
	b.WriteString("// bundledFiles names, per protocol, the file of registrydata/ holding its\n// registries and the minecraft-data capture it was made from.\n")
	b.WriteString("var bundledFiles = map[mc.Protocol]bundledFile{\n")
	sort.Slice(entries, func(i, j int) bool { return entries[i].protocol < entries[j].protocol })
	for _, e := range entries {
		fmt.Fprintf(&b, "\tmc.%s: {%q, %q},\n", constName(e.protocol), e.file, e.capture)
	}
	b.WriteString("}\n")
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return err
	}
	return os.WriteFile(path, src, 0o644)
}

// constName is the mc constant naming p ("V1_20_5").
func constName(p mc.Protocol) string {
	return "V" + strings.ReplaceAll(p.Names()[0], ".", "_")
}

// node is a JSON value that keeps object keys in their order, so the NBT
// written keeps vanilla's field order.
type node struct {
	keys []string
	vals []*node
	arr  []*node
	str  string
	num  json.Number
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, '0' null
}

func (n *node) get(key string) *node {
	if n == nil {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

func parseOrdered(dec *json.Decoder) (*node, error) {
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	return parseValue(dec, tok)
}

func parseValue(dec *json.Decoder, tok json.Token) (*node, error) {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				vt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := parseValue(dec, vt)
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, kt.(string)), append(n.vals, v)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: 'a'}
			for dec.More() {
				vt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := parseValue(dec, vt)
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
			_, err := dec.Token()
			return n, err
		}
	case string:
		return &node{kind: 's', str: t}, nil
	case json.Number:
		return &node{kind: 'n', num: t}, nil
	case bool:
		return &node{kind: 'b'}, nil
	case nil:
		return &node{kind: '0'}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// prismarine-nbt's JSON: {"type": T, "value": V}; compounds map names to such
// objects, lists are {"type": elemType, "value": [raw values]}, longs are
// [high, low] int32 pairs.
var tagIDs = map[string]byte{
	"end": 0, "byte": 1, "short": 2, "int": 3, "long": 4, "float": 5, "double": 6,
	"byteArray": 7, "string": 8, "list": 9, "compound": 10, "intArray": 11, "longArray": 12,
}

// tagOf encodes a {"type","value"} node as a nameless root tag.
func tagOf(n *node) ([]byte, error) {
	t, ok := tagIDs[n.get("type").str]
	if !ok {
		return nil, fmt.Errorf("unknown NBT type %q", n.get("type").str)
	}
	return payload([]byte{t}, t, n.get("value"))
}

func compoundPayload(dst []byte, fields *node) ([]byte, error) {
	for i, k := range fields.keys {
		f := fields.vals[i]
		t, ok := tagIDs[f.get("type").str]
		if !ok {
			return nil, fmt.Errorf("%s: unknown NBT type %q", k, f.get("type").str)
		}
		dst = append(dst, t)
		dst = appendMUTF8(dst, k)
		var err error
		if dst, err = payload(dst, t, f.get("value")); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	return append(dst, 0), nil
}

func payload(dst []byte, t byte, v *node) ([]byte, error) {
	if v == nil {
		return nil, errors.New("missing value")
	}
	switch t {
	case 1, 2, 3:
		i, err := strconv.ParseInt(string(v.num), 10, 64)
		if err != nil {
			return nil, err
		}
		switch t {
		case 1:
			return append(dst, byte(int8(i))), nil
		case 2:
			return binary.BigEndian.AppendUint16(dst, uint16(int16(i))), nil
		}
		return binary.BigEndian.AppendUint32(dst, uint32(int32(i))), nil
	case 4:
		return appendLong(dst, v)
	case 5, 6:
		f, err := strconv.ParseFloat(string(v.num), 64)
		if err != nil {
			return nil, err
		}
		if t == 5 {
			return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(f))), nil
		}
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case 8:
		return appendMUTF8(dst, v.str), nil
	case 7, 11:
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v.arr)))
		for _, e := range v.arr {
			i, err := strconv.ParseInt(string(e.num), 10, 64)
			if err != nil {
				return nil, err
			}
			if t == 7 {
				dst = append(dst, byte(int8(i)))
			} else {
				dst = binary.BigEndian.AppendUint32(dst, uint32(int32(i)))
			}
		}
		return dst, nil
	case 12:
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v.arr)))
		for _, e := range v.arr {
			var err error
			if dst, err = appendLong(dst, e); err != nil {
				return nil, err
			}
		}
		return dst, nil
	case 9:
		et, ok := tagIDs[v.get("type").str]
		if !ok {
			return nil, fmt.Errorf("unknown list element type %q", v.get("type").str)
		}
		elems := v.get("value").arr
		if len(elems) == 0 {
			et = 0
		}
		dst = append(dst, et)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(elems)))
		for _, e := range elems {
			var err error
			if dst, err = payload(dst, et, e); err != nil {
				return nil, err
			}
		}
		return dst, nil
	case 10:
		return compoundPayload(dst, v)
	}
	return nil, fmt.Errorf("cannot encode NBT type %d", t)
}

func appendLong(dst []byte, v *node) ([]byte, error) {
	if len(v.arr) != 2 {
		return nil, errors.New("long is not a [high, low] pair")
	}
	hi, err1 := strconv.ParseInt(string(v.arr[0].num), 10, 64)
	lo, err2 := strconv.ParseInt(string(v.arr[1].num), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	return binary.BigEndian.AppendUint64(dst, uint64(uint32(int32(hi)))<<32|uint64(uint32(int32(lo)))), nil
}

// appendMUTF8 writes an NBT string (Java's modified UTF-8).
func appendMUTF8(dst []byte, s string) []byte {
	var body []byte
	for _, r := range s {
		switch {
		case r != 0 && r < 0x80:
			body = append(body, byte(r))
		case r < 0x800:
			body = append(body, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
		case r < 0x10000:
			body = append(body, 0xE0|byte(r>>12), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
		default:
			r -= 0x10000
			for _, u := range [2]rune{0xD800 + r>>10, 0xDC00 + r&0x3FF} {
				body = append(body, 0xE0|byte(u>>12), 0x80|byte(u>>6&0x3F), 0x80|byte(u&0x3F))
			}
		}
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(body)))
	return append(dst, body...)
}
