package manager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// pingStatus reports whether a status exchange with addr succeeds, which is when
// a Minecraft server accepts players.
func pingStatus(ctx context.Context, addr string, timeout time.Duration) error {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return fmt.Errorf("address %q: bad port: %w", addr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, _, err := mc.QueryStatus(c, host, uint16(port), pingProtocol); err != nil && !errors.Is(err, mc.ErrNoPong) {
		return err
	}
	return nil
}
