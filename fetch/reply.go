package fetch

import (
	"bufio"
	"fmt"
	"io"
	"math/bits"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// An answer that carries an EB's body or txs — a closure is 12 MB — is
// written as it is read from the store (protocol.Streamed), never built
// whole: the server reads the body, which names every tx and its size, so
// it knows the answer's length before its first byte; then it reads the
// txs a chunk at a time and writes each chunk before it reads the next.
// Before it reads the body it holds room for the body and one chunk of
// the host's bound on the bytes its servers hold (protocol.Session.Hold),
// and it gives them back once the answer is written: whatever number of
// peers ask and do not read, the answers hold that bound at most.

// replyChunk is how much of an answer's txs the server reads and writes
// at a time: 128 KiB, eight 16 kB txs, half a yamux stream's window.
const replyChunk = 128 << 10

// bodyGuess is the body an answer holds room for before it knows the
// body's size (a request by EB hash): a full closure of 16 kB txs has a
// 28 kB body. A larger body is read again once its room is held.
const bodyGuess = 64 << 10

// txGuess is the largest tx an answer holds room for before it has read
// the body: the genesis' largest tx, 16 KiB.
const txGuess = 16 << 10

// reply is one answer that carries an EB's body or txs.
type reply struct {
	store Store
	hash  block.Hash // the EB's
	body  []byte     // its body: the hashes and sizes of its txs
	sel   selection  // the txs it carries

	shape
	count   int // txs selected
	txBytes int // their encoding: heads and bytes
	maxTx   int // the largest selected
}

// shape lays an answer out: the encoding before the EB's body, whether the
// body follows as it is, and whether the selected txs follow, as a list
// of byte strings.
type shape struct {
	msg      protocol.Message // as OnMessage sees it: the txs left out
	pre      []byte
	sendBody bool
	list     bool
}

var _ protocol.Streamed = (*reply)(nil)

func (r *reply) Message() protocol.Message { return r.msg }

func (r *reply) Len() int {
	n := len(r.pre)
	if r.sendBody {
		n += len(r.body)
	}
	if r.list {
		n += headLen(r.count) + r.txBytes
	}
	return n
}

// bufSize is the buffer the answer is written through: one chunk, or the
// whole answer if smaller.
func (r *reply) bufSize() int { return min(replyChunk, r.Len()) }

// held is what the answer holds while it is written: its body, its
// buffer, and the tx just read and being copied into it.
func (r *reply) held() int { return len(r.body) + r.bufSize() + r.maxTx }

// Encode writes the answer through a buffer of one chunk: the body goes
// as it is, the txs are read from the store as the buffer takes them.
func (r *reply) Encode(w io.Writer) error {
	bw := bufio.NewWriterSize(w, r.bufSize())
	if _, err := bw.Write(r.pre); err != nil {
		return err
	}
	if r.sendBody {
		if _, err := bw.Write(r.body); err != nil {
			return err
		}
	}
	if r.list {
		var head [9]byte
		if _, err := bw.Write(block.AppendHead(head[:0], 4, uint64(r.count))); err != nil {
			return err
		}
		err := r.eachSelected(func(i int, h block.Hash, size int) error {
			tx, ok, err := r.store.Tx(h)
			switch {
			case err != nil:
				return err
			case !ok:
				// Held when the answer began: pruned since, by the node.
				return fmt.Errorf("fetch: tx %d (%s) of EB %s gone while it was being sent", i, h.Short(), r.hash.Short())
			case len(tx) != size:
				return fmt.Errorf("fetch: the stored tx %d (%s) of EB %s is %d bytes, its body says %d", i, h.Short(), r.hash.Short(), len(tx), size)
			}
			if _, err := bw.Write(block.AppendHead(head[:0], majorBytes, uint64(size))); err != nil {
				return err
			}
			_, err = bw.Write(tx)
			return err
		})
		if err != nil {
			return err
		}
	}
	return bw.Flush()
}

// measure walks the body once: the txs selected, their encoding's size,
// the largest. An offset beyond the body is the client's violation.
func (r *reply) measure() error {
	n, _, err := bodyEntries(r.body)
	if err != nil {
		return fmt.Errorf("fetch: the stored body of EB %s: %w", r.hash.Short(), err)
	}
	if last := r.sel.last(n); last >= n {
		return fmt.Errorf("%w: offset %d of EB %s with %d txs", ErrBadRequest, last, r.hash.Short(), n)
	}
	r.count, r.txBytes, r.maxTx = 0, 0, 0
	return r.eachSelected(func(_ int, _ block.Hash, size int) error {
		r.count++
		r.txBytes += headLen(size) + size
		r.maxTx = max(r.maxTx, size)
		return nil
	})
}

// eachSelected calls fn with the offset, hash and size of each selected
// tx, in body order.
func (r *reply) eachSelected(fn func(i int, h block.Hash, size int) error) error {
	n, rest, err := bodyEntries(r.body)
	if err != nil {
		return fmt.Errorf("fetch: the stored body of EB %s: %w", r.hash.Short(), err)
	}
	c := r.sel.cursor()
	for i := range n {
		var h block.Hash
		var size int
		if h, size, rest, err = nextEntry(rest); err != nil {
			return fmt.Errorf("fetch: the stored body of EB %s: entry %d: %w", r.hash.Short(), i, err)
		}
		if c.has(i) {
			if err := fn(i, h, size); err != nil {
				return err
			}
		}
	}
	return nil
}

// bodyEntries reads the head of a stored EB body: its map { hash => size },
// bare (the prototype's) or in a one-element array (the CIP's). The body
// passed block.DecodeEBBody when it was stored; this only walks it.
func bodyEntries(body []byte) (n int, entries []byte, err error) {
	if len(body) > 0 && body[0]>>5 == 4 {
		one, rest, err := block.ReadDefiniteHead(body, 4)
		if err != nil || one != 1 {
			return 0, nil, fmt.Errorf("not a map, nor one in a one-element array")
		}
		body = rest
	}
	count, rest, err := block.ReadDefiniteHead(body, majorMap)
	if err != nil {
		return 0, nil, err
	}
	if count > uint64(len(rest)/35) { // an entry is at least 35 bytes
		return 0, nil, fmt.Errorf("%d entries in %d bytes", count, len(rest))
	}
	return int(count), rest, nil
}

// nextEntry reads one entry: a 32-byte hash and an unsigned size.
func nextEntry(b []byte) (h block.Hash, size int, rest []byte, err error) {
	n, rest, err := block.ReadDefiniteHead(b, majorBytes)
	if err != nil || n != uint64(len(h)) || len(rest) < len(h) {
		return h, 0, nil, fmt.Errorf("not a %d-byte hash", len(h))
	}
	copy(h[:], rest)
	s, rest, err := block.ReadDefiniteHead(rest[len(h):], majorUint)
	if err != nil || s > 1<<32-1 {
		return h, 0, nil, fmt.Errorf("not a tx size")
	}
	return h, int(s), rest, nil
}

// headLen is the length of the head of a byte string or array of n.
func headLen(n int) int {
	var b [9]byte
	return len(block.AppendHead(b[:0], majorBytes, uint64(n)))
}

// selection is the txs of an EB an answer carries: none (its zero value),
// all, or those a bitmap names.
type selection struct {
	all bool
	bm  Bitmaps
}

// last is the largest offset selected of an EB of n txs, -1 for none.
func (sel selection) last(n int) int {
	switch {
	case sel.all:
		return n - 1
	case len(sel.bm) == 0:
		return -1
	}
	w := sel.bm[len(sel.bm)-1]
	return 64*int(w.Index) + 63 - bits.TrailingZeros64(w.Mask)
}

func (sel selection) cursor() *cursor { return &cursor{sel: sel} }

// cursor answers, for ascending offsets, whether each is selected.
type cursor struct {
	sel selection
	w   int // the first window not behind the last offset asked
}

func (c *cursor) has(i int) bool {
	if c.sel.all {
		return true
	}
	bm := c.sel.bm
	for c.w < len(bm) && int(bm[c.w].Index) < i/64 {
		c.w++
	}
	return c.w < len(bm) && int(bm[c.w].Index) == i/64 && bm[c.w].Mask&(1<<(63-i%64)) != 0
}
