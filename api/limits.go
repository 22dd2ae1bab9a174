package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// The API's limits. A client that sends its request slowly, sends nothing,
// or holds its connection idle is cut off (Options.ReadHeaderTimeout,
// ReadTimeout, IdleTimeout); an upload's body must arrive within
// UploadGrace plus its length at MinUploadRate, and every write of an
// answer must be taken by the client within WriteTimeout plus its length
// at WriteRate. Requests in flight are counted in pools — all of them
// (MaxRequests), those with a body (MaxUploads), those whose answers grow
// with the chain (MaxLargeAnswers) — and one client address may be sending
// at most MaxUploadsPerClient bodies at once. A request over a full pool
// is answered 503 at once rather than queued, unless a request in that
// pool is misbehaving — an answer its client has not taken for a second,
// or an upload behind the minimum rate — and belongs to an address holding
// more of the pool than the newcomer's: the slowest such request is cut
// off and its slots go to the newcomer, which waits up to a second for one
// to fall behind rather than be refused. An address cut off for slowness
// takes no one's slot for a minute after (it still takes free ones), so
// slow clients on many addresses, reconnecting as each is cut, cannot
// shut out the clients that behave. So slow uploads and unread answers
// never hold the slots /status, /metrics and the lookups are answered
// from, nor shut out other clients' submits, and the memory the answers
// hold is bounded by MaxLargeAnswers pages (MaxAnswerBytes each) and the
// small answers.

// Defaults of the limits' options.
const (
	DefaultReadHeaderTimeout   = 5 * time.Second
	DefaultReadTimeout         = 10 * time.Second
	DefaultIdleTimeout         = 60 * time.Second
	DefaultMaxRequests         = 64
	DefaultMaxUploads          = DefaultMaxRequests / 2
	DefaultMaxUploadsPerClient = 4
	DefaultMaxLargeAnswers     = DefaultMaxRequests / 4
	// DefaultWriteTimeout and DefaultWriteRate size a write's deadline as
	// the node's peers are held to a frame it sends: a fixed allowance
	// for round trips and pauses, plus the length at a rate far below any
	// link (100 kB/s): a 1 MiB page of /api/blocks gets 15.5 s.
	DefaultWriteTimeout = 5 * time.Second
	DefaultWriteRate    = protocol.DefaultFrameRate
	// DefaultMinUploadRate and DefaultUploadGrace bound a body's arrival:
	// the grace covers a few round trips before the first bytes, the rate
	// is a 128 kbit/s link's, a 2G phone's: a max-size tx (16,384 bytes)
	// gets 2 s, where the whole request had ReadTimeout.
	DefaultMinUploadRate = 16 << 10
	DefaultUploadGrace   = time.Second
	// DefaultMaxAnswerBytes bounds a page of GET /api/blocks.
	DefaultMaxAnswerBytes = 1 << 20
)

// unreadAfter is how long a write of an answer may wait for its client
// before the answer counts as unread: in the metrics, and as a slot another
// client may take under pressure. A client that reads takes a page in well
// under a second.
const unreadAfter = time.Second

// maxWait bounds how long a request over a full pool waits for a request
// in it to misbehave enough to be cut off, or for a slot to free: as long
// as an answer takes to count as unread. A request that may not cut
// another off (its address was cut off for slowness) does not wait.
const maxWait = unreadAfter

// slowMemory is how long an address cut off for slowness (an upload below
// the minimum rate, an answer not taken in time, or either cut to make
// room) may not take another client's slot; maxSlowAddresses bounds the
// addresses remembered.
const (
	slowMemory       = time.Minute
	maxSlowAddresses = 4096
)

var (
	// ErrBusy is the error of a request over one of the limits of requests
	// in flight, answered 503 with Retry-After.
	ErrBusy = errors.New("busy")
	// ErrCutOff is the error of a write, or a read of a body, cut off to
	// make room for another client: the request was the slowest of its
	// pool while the pool was full.
	ErrCutOff = errors.New("cut off to make room for another client")
)

// pool is a count of requests in flight, with its own limit.
type pool int

const (
	poolAll     pool = iota // every request
	poolUploads             // requests with a body
	poolLarge               // requests whose answers grow with the chain
	pools
)

func (p pool) String() string {
	switch p {
	case poolUploads:
		return "uploads"
	case poolLarge:
		return "large answers"
	default:
		return "requests"
	}
}

// label is p's label in leiosnode_api_limit_refusals_total.
func (p pool) label() string {
	switch p {
	case poolUploads:
		return "uploads"
	case poolLarge:
		return "large_answers"
	default:
		return "requests"
	}
}

// httpServer is the HTTP server of the API's routes, with its timeouts. It
// has no WriteTimeout: that would run from the request's start, through a
// submit's wait for the mempool; the limiter sets each write's deadline.
func (s *Server) httpServer() *http.Server {
	return &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ReadTimeout:       s.opts.ReadTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
	}
}

// limiter counts the requests in flight, in pools, and the bodies being
// received per client address; it times the bodies and the answers' writes.
type limiter struct {
	caps    [pools]int
	perHost int
	o       Options
	// classify says which pool beyond poolAll a request takes: poolAll for
	// none, poolUploads or poolLarge.
	classify func(*http.Request) pool
	// bodyLimit is the most bytes a request's body may have at its route.
	bodyLimit func(*http.Request) int64

	mu        sync.Mutex
	held      [pools]int
	flights   map[*flight]struct{}
	receiving map[string]int       // bodies being received per client address
	slow      map[string]time.Time // addresses lately cut off for slowness
	waiting   int                  // requests waiting for a slot
	freed     chan struct{}        // closed, and replaced, when a slot frees

	stats limitStats
}

// limitStats are the limiter's counts since the start.
type limitStats struct {
	refused        [pools]atomic.Uint64 // by the pool that was full
	refusedClient  atomic.Uint64        // an address's bodies at MaxUploadsPerClient
	unreadCut      atomic.Uint64        // answers whose write missed its deadline
	unreadEvicted  atomic.Uint64        // answers cut off to make room
	uploadsSlow    atomic.Uint64        // bodies that missed their deadline
	uploadsEvicted atomic.Uint64        // bodies cut off to make room
}

func newLimiter(o Options, classify func(*http.Request) pool, bodyLimit func(*http.Request) int64) *limiter {
	return &limiter{
		bodyLimit: bodyLimit,
		caps:      [pools]int{poolAll: o.MaxRequests, poolUploads: o.MaxUploads, poolLarge: o.MaxLargeAnswers},
		perHost:   o.MaxUploadsPerClient,
		o:         o,
		classify:  classify,
		flights:   make(map[*flight]struct{}),
		receiving: make(map[string]int),
		slow:      make(map[string]time.Time),
		freed:     make(chan struct{}),
	}
}

// flight is one request in flight: the slots it holds and its progress.
type flight struct {
	host  string
	class pool
	start time.Time
	rc    *http.ResponseController

	// Guarded by limiter.mu.
	holds     [pools]bool
	receiving bool // its body is being received

	received   atomic.Int64 // body bytes received
	writeStart atomic.Int64 // Unix ns when the write under way began; 0 when none is
	writeLen   atomic.Int64 // that write's length
	slow       atomic.Bool  // cut off for slowness: its address is remembered

	mu         sync.Mutex // orders a cut against the deadline of a write
	cutWriting bool       // its writes fail: cut off to make room
	cutReading bool       // its body's reads fail: cut off to make room
}

// flightKey finds a request's flight in its context.
type flightKey struct{}

// wrap serves h within the limits; a request over one is answered 503 at
// once, so that slow clients cannot hold every handler and have the rest
// wait behind them.
func (l *limiter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := l.acquire(w, r)
		if err != nil {
			tw := &timedWriter{ResponseWriter: w, l: l, f: &flight{rc: http.NewResponseController(w)}}
			if r.ContentLength != 0 {
				// Answer now and close, rather than receive the unread
				// body first, as the server would to keep the connection.
				tw.Header().Set("Connection", "close")
			}
			tw.Header().Set("Retry-After", "1")
			writeError(tw, http.StatusServiceUnavailable, err)
			return
		}
		defer l.release(f)
		if f.class == poolUploads {
			_ = f.rc.SetReadDeadline(l.bodyDeadline(f, r.ContentLength, l.bodyLimit(r)))
			r.Body = &timedBody{ReadCloser: r.Body, l: l, f: f}
		}
		r = r.WithContext(context.WithValue(r.Context(), flightKey{}, f))
		h.ServeHTTP(&timedWriter{ResponseWriter: w, l: l, f: f}, r)
	})
}

// bodyDeadline is when a body of length bytes (-1: unknown, as chunked)
// must be in, when its route takes at most most bytes: UploadGrace plus
// the length at MinUploadRate after the request began, and never past
// ReadTimeout.
func (l *limiter) bodyDeadline(f *flight, length, most int64) time.Time {
	if length < 0 || length > most {
		length = most // a longer body is refused at the limit
	}
	allowed := l.o.UploadGrace + time.Duration(float64(length)/float64(l.o.MinUploadRate)*float64(time.Second))
	return f.start.Add(min(allowed, l.o.ReadTimeout))
}

// writeAllowance is how long a write of n bytes may take: WriteTimeout plus
// n at WriteRate, as the node's peers must take a frame.
func (l *limiter) writeAllowance(n int) time.Duration {
	return l.o.WriteTimeout + time.Duration(float64(n)/float64(l.o.WriteRate)*float64(time.Second))
}

// acquire takes r's slots, or none and says which limit it is over. Over a
// full pool it takes the slots of the slowest misbehaving request of an
// address holding more of that pool, and cuts that request off; while no
// request misbehaves yet but one may soon, it waits for that, or for a
// slot to free, up to maxWait.
func (l *limiter) acquire(w http.ResponseWriter, r *http.Request) (*flight, error) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	f := &flight{host: host, class: poolAll, start: time.Now(), rc: http.NewResponseController(w)}
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		f.class = poolUploads
	} else if l.classify != nil {
		f.class = l.classify(r)
	}
	need := []pool{poolAll}
	if f.class != poolAll {
		need = append(need, f.class)
	}
	giveUp := f.start.Add(maxWait)
	waiting := false
	defer func() {
		if waiting {
			l.mu.Lock()
			l.waiting--
			l.mu.Unlock()
		}
	}()
	for {
		retryAt, freed, err := l.take(f, need)
		if err == nil {
			return f, nil
		}
		if retryAt.IsZero() || retryAt.After(giveUp) || !waiting && !l.startWaiting() {
			return nil, l.refuse(err)
		}
		waiting = true
		timer := time.NewTimer(time.Until(retryAt))
		select {
		case <-freed:
		case <-timer.C:
		case <-r.Context().Done():
			timer.Stop()
			return nil, l.refuse(err)
		}
		timer.Stop()
		f.start = time.Now()
	}
}

// busyError is a refusal over a full pool, counted once the request gives
// up.
type busyError struct {
	pool pool
	cap  int
}

func (e *busyError) Error() string { return fmt.Sprintf("%v: %d %s in flight", ErrBusy, e.cap, e.pool) }
func (e *busyError) Unwrap() error { return ErrBusy }

// startWaiting counts a request among those waiting for a slot, unless as
// many wait as may be in flight: then there are enough.
func (l *limiter) startWaiting() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waiting >= l.caps[poolAll] {
		return false
	}
	l.waiting++
	return true
}

func (l *limiter) refuse(err error) error {
	var busy *busyError
	if errors.As(err, &busy) {
		l.stats.refused[busy.pool].Add(1)
	}
	return err
}

// take takes the slots need for f, cutting a misbehaving request off if a
// pool is full. When it cannot, it says when a request may misbehave
// enough to be cut off (zero: none may), and returns a channel closed when
// a slot frees.
func (l *limiter) take(f *flight, need []pool) (retryAt time.Time, freed <-chan struct{}, err error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if f.class == poolUploads && l.receiving[f.host] >= l.perHost {
		l.stats.refusedClient.Add(1)
		return time.Time{}, nil, fmt.Errorf("%w: %d uploads from %s being received", ErrBusy, l.perHost, f.host)
	}
	var full []pool
	for _, p := range need {
		if l.held[p] >= l.caps[p] {
			full = append(full, p)
		}
	}
	if len(full) == 0 {
		for _, p := range need {
			l.held[p]++
			f.holds[p] = true
		}
	} else {
		victim, next := l.victim(f, full, now)
		if victim == nil {
			p := full[len(full)-1] // the narrowest
			return next, l.freed, &busyError{pool: p, cap: l.caps[p]}
		}
		l.cut(victim, now)
		for _, p := range need {
			if victim.holds[p] {
				victim.holds[p] = false
			} else {
				l.held[p]++
			}
			f.holds[p] = true
		}
	}
	if f.class == poolUploads {
		l.receiving[f.host]++
		f.receiving = true
	}
	l.flights[f] = struct{}{}
	return time.Time{}, nil, nil
}

// victim is the request whose slots f may take over the full pools: one
// that holds them all, misbehaves now, and belongs to an address holding
// more of the narrowest full pool than f's; the slowest such. Without one,
// next is the soonest such a request may misbehave (zero: none may). None
// if f's address was lately cut off for slowness itself. l.mu is held.
func (l *limiter) victim(f *flight, full []pool, now time.Time) (victim *flight, next time.Time) {
	if l.slowLately(f.host, now) {
		return nil, time.Time{}
	}
	narrowest := full[len(full)-1]
	shares := make(map[string]int)
	for g := range l.flights {
		if g.holds[narrowest] {
			shares[g.host]++
		}
	}
	var bestScore float64
	for g := range l.flights {
		if shares[g.host] <= shares[f.host] || !holdsAll(g, full) {
			continue
		}
		score, ok, from := l.misbehaving(g, now)
		if !ok {
			if from.After(now) && (next.IsZero() || from.Before(next)) {
				next = from
			}
			continue
		}
		if victim == nil || score < bestScore || score == bestScore && g.start.Before(victim.start) {
			victim, bestScore = g, score
		}
	}
	return victim, next
}

func holdsAll(g *flight, ps []pool) bool {
	for _, p := range ps {
		if !g.holds[p] {
			return false
		}
	}
	return true
}

// misbehaving says whether g wastes its slots now, and how badly (lower is
// worse): an answer whose write has waited for its client at least
// unreadAfter (scored by the wait, negated), or a body received for at
// least evictAfter and behind MinUploadRate (scored by its rate, in bytes
// a second). If not, from is when it may start to (zero: not by waiting).
// l.mu is held.
func (l *limiter) misbehaving(g *flight, now time.Time) (score float64, ok bool, from time.Time) {
	if g.cutWriting || g.cutReading {
		return 0, false, time.Time{} // cut off already, leaving
	}
	if start := g.writeStart.Load(); start != 0 {
		began := time.Unix(0, start)
		if waited := now.Sub(began); waited >= unreadAfter {
			return -waited.Seconds(), true, time.Time{}
		}
		from = began.Add(unreadAfter)
	}
	if g.receiving {
		age := now.Sub(g.start)
		got := float64(g.received.Load())
		if age >= l.evictAfter() && got < age.Seconds()*float64(l.o.MinUploadRate) {
			return got / age.Seconds(), true, time.Time{}
		}
		if at := g.start.Add(l.evictAfter()); from.IsZero() || at.Before(from) {
			from = at
		}
	}
	return 0, false, from
}

// evictAfter is how long an upload is received before, behind the minimum
// rate, it may be cut off to make room: a quarter of UploadGrace. A client
// that behaves sends its body right behind its headers, at its link's
// rate, far above the minimum.
func (l *limiter) evictAfter() time.Duration { return l.o.UploadGrace / 4 }

// cut cuts g off to make room: the write it is blocked in, or the read of
// its body, fails at once (so does every later write, if its write was
// cut; an upload cut while receiving is still answered 408). l.mu is held.
func (l *limiter) cut(g *flight, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.slow.Store(true)
	if g.writeStart.Load() != 0 || !g.receiving {
		g.cutWriting = true
		_ = g.rc.SetWriteDeadline(now)
		l.stats.unreadEvicted.Add(1)
		return
	}
	g.cutReading = true
	_ = g.rc.SetReadDeadline(now)
	l.stats.uploadsEvicted.Add(1)
}

// release frees f's slots, and remembers its address if it was cut off for
// slowness.
func (l *limiter) release(f *flight) {
	now := time.Now()
	f.mu.Lock()
	if !f.cutWriting {
		// What the server still has buffered goes out after the handler
		// returns, under this deadline.
		_ = f.rc.SetWriteDeadline(now.Add(l.o.WriteTimeout))
	}
	f.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	for p := range pools {
		if f.holds[p] {
			l.held[p]--
			f.holds[p] = false
		}
	}
	l.bodyDoneLocked(f)
	delete(l.flights, f)
	close(l.freed)
	l.freed = make(chan struct{})
	if f.slow.Load() {
		l.rememberSlow(f.host, now)
	}
}

// bodyDone notes that f's body is read to its end or failed: its address
// may send another.
func (l *limiter) bodyDone(f *flight) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bodyDoneLocked(f)
}

func (l *limiter) bodyDoneLocked(f *flight) {
	if !f.receiving {
		return
	}
	f.receiving = false
	if l.receiving[f.host]--; l.receiving[f.host] <= 0 {
		delete(l.receiving, f.host)
	}
}

// slowLately says whether host was cut off for slowness within slowMemory.
// l.mu is held.
func (l *limiter) slowLately(host string, now time.Time) bool {
	at, ok := l.slow[host]
	return ok && now.Sub(at) < slowMemory
}

// rememberSlow remembers host as cut off for slowness at now, within
// maxSlowAddresses: past it the expired are forgotten, then any. l.mu is
// held.
func (l *limiter) rememberSlow(host string, now time.Time) {
	if _, ok := l.slow[host]; !ok && len(l.slow) >= maxSlowAddresses {
		for h, at := range l.slow {
			if now.Sub(at) >= slowMemory {
				delete(l.slow, h)
			}
		}
		for h := range l.slow {
			if len(l.slow) < maxSlowAddresses {
				break
			}
			delete(l.slow, h)
		}
	}
	l.slow[host] = now
}

// unread sums the answers whose write has waited for its client at least
// unreadAfter, and the bytes of those writes.
func (l *limiter) unread() (answers int, bytes int64) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for f := range l.flights {
		if start := f.writeStart.Load(); start != 0 && now.Sub(time.Unix(0, start)) >= unreadAfter {
			answers++
			bytes += f.writeLen.Load()
		}
	}
	return answers, bytes
}

// inFlight is the requests in flight in pool p.
func (l *limiter) inFlight(p pool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[p]
}

// timedWriter gives each write of an answer its deadline, and notes the
// write under way, so that the limiter sees the answers not taken.
type timedWriter struct {
	http.ResponseWriter
	l *limiter
	f *flight
}

func (w *timedWriter) Write(p []byte) (int, error) {
	if err := w.begin(len(p)); err != nil {
		return 0, err
	}
	n, err := w.ResponseWriter.Write(p)
	w.end(err)
	return n, err
}

// Flush sends what is buffered, under the deadline of a write.
func (w *timedWriter) Flush() {
	if w.begin(0) == nil {
		err := http.NewResponseController(w.ResponseWriter).Flush()
		w.end(err)
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *timedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *timedWriter) begin(n int) error {
	f := w.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cutWriting {
		return ErrCutOff
	}
	now := time.Now()
	_ = f.rc.SetWriteDeadline(now.Add(w.l.writeAllowance(n)))
	f.writeLen.Store(int64(n))
	f.writeStart.Store(now.UnixNano())
	return nil
}

func (w *timedWriter) end(err error) {
	w.f.writeStart.Store(0)
	if isTimeout(err) && !w.f.slow.Swap(true) {
		w.l.stats.unreadCut.Add(1)
	}
}

// timedBody counts the bytes of a body as they arrive, and frees its
// address's slot once it is in or failed.
type timedBody struct {
	io.ReadCloser
	l *limiter
	f *flight
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.f.received.Add(int64(n))
	if err != nil {
		b.l.bodyDone(b.f)
		if isTimeout(err) && !b.f.slow.Swap(true) {
			b.l.stats.uploadsSlow.Add(1)
		}
	}
	return n, err
}

func isTimeout(err error) bool {
	var timeout interface{ Timeout() bool }
	return err != nil && errors.As(err, &timeout) && timeout.Timeout()
}

// readBody reads r's body of at most limit bytes. It answers, and returns
// false, when the body is larger (413, naming the limit), arrives too
// slowly or was cut off to make room (408) or fails otherwise (400).
func readBody(w http.ResponseWriter, r *http.Request, limit int64, what string) ([]byte, bool) {
	tooLarge := fmt.Errorf("%s over the limit of %d bytes", what, limit)
	if r.ContentLength > limit {
		writeError(w, http.StatusRequestEntityTooLarge, tooLarge)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var over *http.MaxBytesError
	switch {
	case err == nil:
		return body, true
	case errors.As(err, &over):
		writeError(w, http.StatusRequestEntityTooLarge, tooLarge)
	case isTimeout(err):
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, slowBody(r, what))
	default:
		writeError(w, http.StatusBadRequest, fmt.Errorf("reading the %s: %w", what, err))
	}
	return nil, false
}

// slowBody says why r's body was not received: cut off to make room, or
// below the minimum rate.
func slowBody(r *http.Request, what string) error {
	f, ok := r.Context().Value(flightKey{}).(*flight)
	if !ok {
		return fmt.Errorf("%s not received in time", what)
	}
	f.mu.Lock()
	cut := f.cutReading
	f.mu.Unlock()
	got, took := f.received.Load(), time.Since(f.start).Round(time.Millisecond)
	if cut {
		return fmt.Errorf("%s %w: %d bytes in %v, the slowest upload while they were all taken", what, ErrCutOff, got, took)
	}
	return fmt.Errorf("%s not received in time: %d bytes in %v", what, got, took)
}

// register exports the limits' figures on reg: the requests in flight per
// pool, the unread answers and their bytes, the refusals per limit, and
// the answers and uploads cut off, by why.
func (l *limiter) register(reg prometheus.Registerer) error {
	var cs []prometheus.Collector
	for p := range pools {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "leiosnode", Name: "api_requests_in_flight", ConstLabels: prometheus.Labels{"pool": p.label()},
			Help: "HTTP API requests in flight: all of them, those with a body, those whose answers grow with the chain.",
		}, func() float64 { return float64(l.inFlight(p)) }))
		cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "leiosnode", Name: "api_limit_refusals_total", ConstLabels: prometheus.Labels{"limit": p.label()},
			Help: "HTTP API requests answered 503 at once, by the limit they were over.",
		}, func() float64 { return float64(l.stats.refused[p].Load()) }))
	}
	cs = append(cs,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "leiosnode", Name: "api_limit_refusals_total", ConstLabels: prometheus.Labels{"limit": "client_uploads"},
			Help: "HTTP API requests answered 503 at once, by the limit they were over.",
		}, func() float64 { return float64(l.stats.refusedClient.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "leiosnode", Name: "api_unread_answers",
			Help: "HTTP API answers whose write has waited at least a second for its client.",
		}, func() float64 { n, _ := l.unread(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "leiosnode", Name: "api_unread_bytes",
			Help: "Bytes of the writes of the unread HTTP API answers: the memory their clients hold.",
		}, func() float64 { _, b := l.unread(); return float64(b) }),
	)
	for _, c := range []struct {
		name, help, reason string
		n                  *atomic.Uint64
	}{
		{"api_answers_cut_total", "HTTP API answers cut off unread: a write not taken within its deadline, or cut to make room for another client.", "deadline", &l.stats.unreadCut},
		{"api_answers_cut_total", "HTTP API answers cut off unread: a write not taken within its deadline, or cut to make room for another client.", "room", &l.stats.unreadEvicted},
		{"api_uploads_cut_total", "HTTP API uploads cut off: a body not in within its deadline (below the minimum rate), or cut to make room for another client.", "deadline", &l.stats.uploadsSlow},
		{"api_uploads_cut_total", "HTTP API uploads cut off: a body not in within its deadline (below the minimum rate), or cut to make room for another client.", "room", &l.stats.uploadsEvicted},
	} {
		cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "leiosnode", Name: c.name, ConstLabels: prometheus.Labels{"reason": c.reason}, Help: c.help,
		}, func() float64 { return float64(c.n.Load()) }))
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("api: metrics: %w", err)
		}
	}
	return nil
}
