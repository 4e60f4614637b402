package bungeechannel

import (
	"fmt"
	"strings"
)

// listSeparator joins PlayerList and GetServers entries, as BungeeCord's
// Util.csv does; plugins split on it.
const listSeparator = ", "

// Reply is the proxy's answer to a request, sent back to the asking backend on
// the same channel. Which fields are written depends on Op.
type Reply struct {
	Op Op
	// Player is the player an IPOther, UUIDOther or GetPlayerServer is about.
	Player string
	// Server is the server of PlayerCount and PlayerList ("ALL" for the whole
	// proxy), GetServer, GetPlayerServer ("" for a player who is not online)
	// and ServerIP.
	Server string
	// Host and Port are the player's address (IP, IPOther: Port is a 32-bit
	// int) or the server's (ServerIP: Port is an unsigned short).
	Host string
	Port int
	// Count is PlayerCount's number.
	Count int
	// List holds PlayerList's names or GetServers' server names.
	List []string
	// UUID is UUID's and UUIDOther's answer, without dashes as BungeeCord writes it.
	UUID string
}

// HasReply reports whether op is answered at all; the write operations and
// Forward are not.
func (o Op) HasReply() bool {
	switch o {
	case OpIP, OpIPOther, OpPlayerCount, OpPlayerList, OpGetServers, OpGetServer,
		OpGetPlayerServer, OpUUID, OpUUIDOther, OpServerIP:
		return true
	}
	return false
}

// AppendTo appends the reply as BungeeCord writes it. It fails when a string
// does not fit writeUTF (ErrTooLong) or a port is out of range.
func (p Reply) AppendTo(dst []byte) ([]byte, error) {
	if !p.Op.HasReply() {
		return dst, fmt.Errorf("%s has no reply", p.Op)
	}
	out, err := p.appendTo(dst)
	if err != nil {
		return dst, fmt.Errorf("%s reply: %w", p.Op, err)
	}
	return out, nil
}

func (p Reply) appendTo(dst []byte) ([]byte, error) {
	dst, err := appendUTF(dst, p.Op.String())
	if err != nil {
		return dst, err
	}
	switch p.Op {
	case OpIP, OpIPOther:
		if p.Op == OpIPOther {
			if dst, err = appendUTF(dst, p.Player); err != nil {
				return dst, err
			}
		}
		if p.Port < 0 || p.Port > 0xFFFF {
			return dst, fmt.Errorf("port %d out of range", p.Port)
		}
		dst, err = appendUTF(dst, p.Host)
		return appendInt32(dst, int32(p.Port)), err
	case OpPlayerCount:
		if p.Count < 0 || p.Count > 1<<31-1 {
			return dst, fmt.Errorf("count %d out of range", p.Count)
		}
		dst, err = appendUTF(dst, p.Server)
		return appendInt32(dst, int32(p.Count)), err
	case OpPlayerList:
		return appendUTFs(dst, p.Server, strings.Join(p.List, listSeparator))
	case OpGetServers:
		return appendUTF(dst, strings.Join(p.List, listSeparator))
	case OpGetServer:
		return appendUTF(dst, p.Server)
	case OpGetPlayerServer:
		return appendUTFs(dst, p.Player, p.Server)
	case OpUUID:
		return appendUTF(dst, p.UUID)
	case OpUUIDOther:
		return appendUTFs(dst, p.Player, p.UUID)
	case OpServerIP:
		if p.Port < 0 || p.Port > 0xFFFF {
			return dst, fmt.Errorf("port %d out of range", p.Port)
		}
		dst, err = appendUTFs(dst, p.Server, p.Host)
		return appendUint16(dst, uint16(p.Port)), err
	}
	return dst, nil
}

// DecodeReply parses a reply as the asking plugin reads it; for test backends
// and tools. It never panics and reads nothing past payload.
func DecodeReply(payload []byte) (Reply, error) {
	r := reader{b: payload}
	sub, err := r.utf("subchannel")
	if err != nil {
		return Reply{}, fmt.Errorf("reply: %w", err)
	}
	p := Reply{Op: ParseOp(sub)}
	if !p.Op.HasReply() {
		return Reply{}, fmt.Errorf("reply on subchannel %q, which has none: %w", truncate(sub, 64), ErrMalformed)
	}
	var list string
	var n int32
	var port uint16
	switch p.Op {
	case OpIP:
		if p.Host, err = r.utf("host"); err == nil {
			n, err = r.int32("port")
			p.Port = int(n)
		}
	case OpIPOther:
		if p.Player, err = r.utf("player"); err == nil {
			if p.Host, err = r.utf("host"); err == nil {
				n, err = r.int32("port")
				p.Port = int(n)
			}
		}
	case OpPlayerCount:
		if p.Server, err = r.utf("server"); err == nil {
			n, err = r.int32("count")
			p.Count = int(n)
		}
	case OpPlayerList:
		if p.Server, err = r.utf("server"); err == nil {
			list, err = r.utf("players")
			p.List = splitList(list)
		}
	case OpGetServers:
		list, err = r.utf("servers")
		p.List = splitList(list)
	case OpGetServer:
		p.Server, err = r.utf("server")
	case OpGetPlayerServer:
		if p.Player, err = r.utf("player"); err == nil {
			p.Server, err = r.utf("server")
		}
	case OpUUID:
		p.UUID, err = r.utf("uuid")
	case OpUUIDOther:
		if p.Player, err = r.utf("player"); err == nil {
			p.UUID, err = r.utf("uuid")
		}
	case OpServerIP:
		if p.Server, err = r.utf("server"); err == nil {
			if p.Host, err = r.utf("host"); err == nil {
				port, err = r.uint16("port")
				p.Port = int(port)
			}
		}
	}
	if err != nil {
		return Reply{}, fmt.Errorf("%s reply: %w", p.Op, err)
	}
	return p, nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, listSeparator)
}
