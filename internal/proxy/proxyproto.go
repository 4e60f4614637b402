package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"

	proxyproto "github.com/pires/go-proxyproto"
)

var (
	v1Sig = []byte("PROXY ")
	v2Sig = []byte("\r\n\r\n\x00\r\nQUIT\n")
)

// readProxyHeader reads the PROXY protocol header (v1 or v2) in the connection's own
// goroutine. Trusted peers must send one; a header from any other peer is refused so
// a spoofed header can never set the client IP. Afterwards the raw connection is used
// as is, so forwarding still reaches splice.
func (p *door) readProxyHeader(cn *conn) (netip.AddrPort, error) {
	peer := cn.client
	if !trusted(cn.st.trusted, peer.Addr().Unmap()) {
		looks, err := looksLikeProxyHeader(cn)
		switch {
		case looks:
			return peer, fmt.Errorf("PROXY header from untrusted peer %s", peer.Addr())
		case err != nil:
			// It began like a header and went quiet: the header's budget is spent, and
			// the connection's one deadline is not restarted for the handshake.
			return peer, fmt.Errorf("untrusted peer %s stalled after %q: %w", peer.Addr(), cn.partial(), err)
		}
		return peer, nil
	}
	hdr, err := proxyproto.Read(cn.br)
	if err != nil {
		return peer, fmt.Errorf("PROXY header from trusted peer %s: %w", peer.Addr(), err)
	}
	if hdr.Command.IsLocal() {
		return peer, nil // health checks of the load balancer itself
	}
	src, _, ok := hdr.TCPAddrs()
	if !ok {
		return peer, errors.New("PROXY header carries no TCP source address")
	}
	return src.AddrPort(), nil
}

// looksLikeProxyHeader tells a PROXY header from a Minecraft handshake by its
// first bytes. A handshake that merely starts with 'P' (a length of 80) or '\r'
// sends its signature-length prefix at once, so a peer that stalls there (err) is
// one to close, not to wait for again.
func looksLikeProxyHeader(cn *conn) (bool, error) {
	first, err := cn.br.Peek(1)
	if err != nil || (first[0] != 'P' && first[0] != '\r') {
		return false, nil
	}
	sig := v2Sig
	if first[0] == 'P' {
		sig = v1Sig
	}
	b, err := cn.br.Peek(len(sig))
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return false, err
		}
		return false, nil
	}
	return bytes.Equal(b, sig), nil
}

// partial is what the client has sent so far, for a log line (at most 16 bytes).
func (cn *conn) partial() []byte {
	b, _ := cn.br.Peek(min(cn.br.Buffered(), 16))
	return b
}

func trusted(list []netip.Prefix, ip netip.Addr) bool {
	for _, p := range list {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// proxyHeader builds the PROXY v2 header sent to a backend: the real client as source,
// the backend connection's own address as destination.
func proxyHeader(client netip.AddrPort, backend net.Conn) []byte {
	src := net.TCPAddrFromAddrPort(client)
	dst, _ := backend.RemoteAddr().(*net.TCPAddr)
	if dst == nil {
		dst = &net.TCPAddr{}
	}
	// go-proxyproto needs both addresses in the same family.
	if (src.IP.To4() == nil) != (dst.IP.To4() == nil) {
		if src.IP.To4() != nil {
			dst = &net.TCPAddr{IP: net.IPv6zero, Port: dst.Port}
			src = &net.TCPAddr{IP: src.IP.To16(), Port: src.Port}
		} else {
			dst = &net.TCPAddr{IP: dst.IP.To16(), Port: dst.Port}
		}
	}
	b, err := proxyproto.HeaderProxyFromAddrs(2, src, dst).Format()
	if err != nil {
		return nil
	}
	return b
}

// localProxyHeader is a PROXY v2 header with the LOCAL command: a connection the
// proxy makes on its own behalf (a health probe), with no client to name.
func localProxyHeader() []byte {
	b, _ := (&proxyproto.Header{Version: 2, Command: proxyproto.LOCAL, TransportProtocol: proxyproto.UNSPEC}).Format()
	return b
}
