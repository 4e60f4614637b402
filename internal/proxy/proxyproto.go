package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"

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
func (p *Proxy) readProxyHeader(cn *conn) (netip.AddrPort, error) {
	peer := cn.client
	if !trusted(cn.st.trusted, peer.Addr().Unmap()) {
		if looksLikeProxyHeader(cn) {
			return peer, fmt.Errorf("PROXY header from untrusted peer %s", peer.Addr())
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

// looksLikeProxyHeader peeks without waiting for bytes a short Minecraft packet may never send.
func looksLikeProxyHeader(cn *conn) bool {
	first, err := cn.br.Peek(1)
	if err != nil || (first[0] != 'P' && first[0] != '\r') {
		return false
	}
	if b, err := cn.br.Peek(len(v1Sig)); err == nil && bytes.Equal(b, v1Sig) {
		return true
	}
	b, err := cn.br.Peek(len(v2Sig))
	return err == nil && bytes.Equal(b, v2Sig)
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
