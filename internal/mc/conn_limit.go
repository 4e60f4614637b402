package mc

// ReadLimit is the packet size bound in force (see SetReadLimit), so a caller
// that lowers it for a while (the limbo) can put it back.
func (c *Conn) ReadLimit() int { return c.readLimit }
