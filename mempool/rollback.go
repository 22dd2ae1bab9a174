package mempool

import (
	"context"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// giveBackWait bounds how long giving back one tx waits for room: Run syncs
// no more until it is done.
const giveBackWait = time.Second

// abandonedSince asks the chain (Options.Abandoned) for the txs of the
// blocks it no longer holds since old was its tip. A failure is logged, not
// fatal: it costs only txs their submitters must send again.
func (m *Mempool) abandonedSince(old block.Tip) []*ledger.Tx {
	if m.opts.Abandoned == nil {
		return nil
	}
	txs, err := m.opts.Abandoned(old)
	if err != nil {
		m.opts.Logger.Warn("mempool: reading what a rollback abandoned", "since", old, "err", err)
		return nil
	}
	return txs
}

// giveBack adds again, after a rollback, what the fork that lost took from
// the mempool.
//
// A tx in a block on a losing fork left the mempool when that block was
// selected; so did, at this sync, every tx that spends its outputs (a chain
// of txs). Both are still valid on the winning chain once the first is
// back, so the abandoned txs are added again, oldest first, then the txs the
// sync dropped, in their old order: every dependent after what it spends —
// those admitted while the sync ran too, which no snapshot from before it
// held. Without a rollback, a
// dropped tx is one the new blocks included or conflict with, and stays
// dropped. Failures are expected (a tx the winning chain also holds) and
// ignored.
func (m *Mempool) giveBack(ctx context.Context, abandoned, dropped []*ledger.Tx) {
	txs := append(abandoned[:len(abandoned):len(abandoned)], dropped...)
	readded := 0
	for _, tx := range txs {
		addCtx, cancel := context.WithTimeout(ctx, giveBackWait)
		// Their witnesses were verified when this node admitted them or
		// applied their blocks: a rollback of a CertRB gives back thousands,
		// and verifying each again kept them out of every mempool for
		// seconds.
		if m.add(addCtx, tx, m.opts.Reapply, true) == nil {
			readded++
		}
		cancel()
	}
	m.opts.Logger.Info("rollback: txs back in the mempool", "abandoned", len(abandoned), "candidates", len(txs), "readded", readded)
}
