package txcache

// Stats is a snapshot of the cache's size, for status and metrics.
type Stats struct {
	Announcements  int
	Bodies         int // announced EBs, inserted or not
	InsertedBodies int
	Txs            int    // tx entries in the table
	TxCapacity     int    // slots of the table (Options.TxCapacity, plus a probe's overhang)
	TableBytes     int    // memory of the table: its keys and state words
	RefusedInserts uint64 // tx inserts the table had no room for (false misses)
}

// Stats reports the cache's current size. It does not wait for writers'
// tx-table work.
func (c *Cache) Stats() Stats {
	c.bodiesMu.RLock()
	s := Stats{Announcements: len(c.announcements), Bodies: len(c.bodies)}
	for _, b := range c.bodies {
		if b.state == BodyInserted {
			s.InsertedBodies++
		}
	}
	c.bodiesMu.RUnlock()
	s.Txs = int(c.txs.used.Load())
	s.TxCapacity = len(c.txs.meta)
	s.TableBytes = s.TxCapacity * SlotBytes
	s.RefusedInserts = c.txs.refused.Load()
	return s
}
