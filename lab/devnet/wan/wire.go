package wan

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leiosnode/leiosnode/lab/devnet/layout"
)

const (
	// maxChunk bounds one read. On a limited wire a chunk is also at most
	// chunkTime of serialisation (and at least a packet), so that a large
	// read does not hold its first bytes back behind its last ones much
	// longer than a link's packets would.
	maxChunk, minChunk = 64 << 10, 1500
	chunkTime          = 2 * time.Millisecond
	// A direction may hold, beyond the bytes its wire has in flight
	// (bandwidth × latency), a socket buffer's worth or slackTime of the
	// wire's bytes if more: enough that the wire does not idle while the
	// deliverer is a little late on a loaded machine.
	bufferSlack = 256 << 10
	slackTime   = 50 * time.Millisecond
	// unlimitedInFlight bounds a direction of a wire without a bandwidth
	// limit.
	unlimitedInFlight = 4 << 20
	// queuedChunks bounds the chunks between a reader and its deliverer;
	// the bytes in flight bound them first unless chunks are tiny.
	queuedChunks = 4096
	// maxBatch bounds the chunks one write takes (writev's limit is 1024).
	maxBatch = 64
)

// wire is one direction of a link: the bytes one node sends the other
// over every connection between them. It serialises them one after the
// other at its bandwidth and delivers each chunk its latency after it has
// finished serialising.
type wire struct {
	shape layout.LinkShape

	mu   sync.Mutex
	free time.Time // when the chunks taken so far have finished serialising
}

// arrival takes a chunk of n bytes read at now onto the wire and says when
// it arrives. An idle wire banks no time: a chunk never starts before it
// was read.
func (w *wire) arrival(n int, now time.Time) time.Time {
	if w.shape.BytesPerSecond <= 0 {
		return now.Add(w.shape.Latency)
	}
	serialise := time.Duration(int64(n) * int64(time.Second) / w.shape.BytesPerSecond)
	w.mu.Lock()
	start := now
	if w.free.After(now) {
		start = w.free
	}
	w.free = start.Add(serialise)
	done := w.free
	w.mu.Unlock()
	return done.Add(w.shape.Latency)
}

// chunkSize is how much one read of a connection over w takes at most.
func (w *wire) chunkSize() int {
	if w.shape.BytesPerSecond <= 0 {
		return maxChunk
	}
	return int(min(max(w.shape.BytesPerSecond*int64(chunkTime)/int64(time.Second), minChunk), maxChunk))
}

// inFlightLimit is how many bytes one direction of a connection over w
// may hold, read but not yet delivered.
func (w *wire) inFlightLimit() int {
	if w.shape.BytesPerSecond <= 0 {
		return unlimitedInFlight
	}
	perSecond := w.shape.BytesPerSecond
	return int(perSecond*int64(w.shape.Latency)/int64(time.Second) + max(bufferSlack, perSecond*int64(slackTime)/int64(time.Second)))
}

// counters are one direction of a link's bytes: taken from the sender
// (entered) and handed to the receiver (delivered).
type counters struct {
	entered, delivered atomic.Uint64
}

// carried is one connection a proxy carries: the accepted half and the
// dialed one. Closing it closes both, once.
type carried struct {
	in, out net.Conn
	done    chan struct{}
	once    sync.Once
}

func newCarried(in, out net.Conn) *carried {
	return &carried{in: in, out: out, done: make(chan struct{})}
}

func (c *carried) close() {
	c.once.Do(func() {
		close(c.done)
		c.in.Close()
		c.out.Close()
	})
}

// chunk is bytes read, and when they arrive.
type chunk struct {
	data []byte
	at   time.Time
}

// pump carries src's bytes to dst over w until either side closes or c
// is closed, then closes c (libp2p never half-closes a connection: one
// direction's end is the connection's). The reader stops reading while the
// bytes in flight are at their limit, so that a slow receiver holds the
// sender up.
func pump(c *carried, src, dst net.Conn, w *wire, count *counters) {
	defer c.close()
	queue := make(chan chunk, queuedChunks)
	var inFlight atomic.Int64
	freed := make(chan struct{}, 1) // a deliverer's wake-up of a reader at the limit
	var deliverer sync.WaitGroup
	deliverer.Go(func() { deliver(c, dst, queue, &inFlight, freed, count) })
	read(c, src, w, queue, &inFlight, freed, count)
	close(queue)
	deliverer.Wait()
}

// read reads src into queue, each chunk timed by w.
func read(c *carried, src net.Conn, w *wire, queue chan<- chunk, inFlight *atomic.Int64, freed <-chan struct{}, count *counters) {
	limit, buf := int64(w.inFlightLimit()), make([]byte, w.chunkSize())
	for {
		room := limit - inFlight.Load()
		for room <= 0 {
			select {
			case <-freed:
			case <-c.done:
				return
			}
			room = limit - inFlight.Load()
		}
		n, err := src.Read(buf[:min(room, int64(len(buf)))])
		if n > 0 {
			ch := chunk{data: bytes.Clone(buf[:n]), at: w.arrival(n, time.Now())}
			inFlight.Add(int64(n))
			count.entered.Add(uint64(n))
			select {
			case queue <- ch:
			case <-c.done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// deliver writes each chunk of queue to dst when it arrives, until queue
// is closed and drained or the connection fails. Chunks due together go
// in one write. A chunk is counted delivered as it is handed to dst, so
// that what the receiver has read is never more than the count.
func deliver(c *carried, dst net.Conn, queue <-chan chunk, inFlight *atomic.Int64, freed chan<- struct{}, count *counters) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var next *chunk // taken from the queue, not due yet
	for {
		first := next
		if first == nil {
			ch, ok := <-queue
			if !ok {
				return
			}
			first = &ch
		}
		next = nil
		if wait := time.Until(first.at); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-c.done:
				return
			}
		}
		batch, n := net.Buffers{first.data}, len(first.data)
	gather:
		for len(batch) < maxBatch {
			select {
			case ch, ok := <-queue:
				if !ok {
					break gather // the next receive ends the loop
				}
				if time.Until(ch.at) > 0 {
					next = &ch
					break gather
				}
				batch, n = append(batch, ch.data), n+len(ch.data)
			default:
				break gather
			}
		}
		count.delivered.Add(uint64(n))
		if _, err := batch.WriteTo(dst); err != nil {
			c.close()
			return
		}
		inFlight.Add(-int64(n))
		select {
		case freed <- struct{}{}:
		default:
		}
	}
}
