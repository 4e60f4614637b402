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
	var buf []byte
	for _, pk := range pks {
		var err error
		if buf, err = c.appendFrameLocked(buf, pk.ID, pk.Payload); err != nil {
			return err
		}
	}
	return c.writeLocked(buf, true)
}
