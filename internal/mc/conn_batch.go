package mc

// OutPacket is one packet of a WritePackets burst.
type OutPacket struct {
	ID      int32
	Payload []byte
}

// WritePackets frames several packets and writes them with a single Write
// (one system call, one encryption pass), so a burst the proxy sends itself
// (titles and an action bar, a join sequence) costs what one packet does.
// Packets are framed as WritePacket frames them.
func (c *Conn) WritePackets(pks ...OutPacket) error {
	if len(pks) == 0 {
		return nil
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	scratch := framePool.Get().(*[]byte) // framed in, written, given back
	defer putScratch(scratch)
	for _, pk := range pks {
		buf, err := c.appendFrameLocked(*scratch, pk.ID, pk.Payload)
		if err != nil {
			return err
		}
		*scratch = buf
	}
	return c.writeLocked(*scratch, true)
}
