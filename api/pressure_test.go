package api

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/ledger"
)

// bigChain is a chain database of blocks of txsPerBlock tiny txs each (a
// CBOR byte string apiece; no ledger rule is applied), so that /api/blocks
// answers run to megabytes as a busy chain's do.
func bigChain(t testing.TB, blocks, txsPerBlock int) *chaindb.DB {
	t.Helper()
	db, err := chaindb.Open(t.TempDir(), chaindb.Options{
		ApplyBlock: func(_ ledger.UTxO, blk *block.Block, _ *block.Header, _ bool) (*ledger.Diff, error) {
			d := ledger.NewDiff()
			d.Txs = len(blk.Body.Txs)
			return d, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	issuer := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32))
	var prev *block.Hash
	for n := 1; n <= blocks; n++ {
		txs := make([]block.RawCBOR, txsPerBlock)
		for i := range txs {
			tx := []byte{0x48, 0, 0, 0, 0, 0, 0, 0, 0} // bytes(8): the block and index
			binary.BigEndian.PutUint64(tx[1:], uint64(n)<<32|uint64(i))
			txs[i] = tx
		}
		body := block.NewBody(txs, nil)
		hb := block.HeaderBody{BlockNumber: uint64(n), Slot: uint64(n), PrevHash: prev, BodySize: uint64(len(body.Bytes())), BodyHash: body.Hash()}
		copy(hb.IssuerVKey[:], issuer.Public().(ed25519.PublicKey))
		h := block.NewHeader(hb, issuer)
		if _, err := db.AddBlock(block.NewBlock(h, body)); err != nil {
			t.Fatal(err)
		}
		hash := h.Hash()
		prev = &hash
	}
	return db
}

// limitMetric is the value of the series name{labels} of the limiter's
// metrics.
func limitMetric(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue series
				}
			}
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

// eventually waits, up to timeout, until done holds.
func eventually(t *testing.T, timeout time.Duration, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// from is an HTTP client whose connections come from the loopback address
// 127.0.0.x: on Linux the whole of 127/8 is loopback, so a test plays
// clients on as many addresses as it likes.
func from(x byte) *http.Client {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, x)}}
	return &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}, Timeout: 30 * time.Second}
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// smallSendBuffers keeps the send buffers of the connections it accepts
// small. Linux grows a connection's send buffer to megabytes, and takes in
// a page of an answer nobody reads whole, so the handler is done and holds
// nothing; with small buffers the server's writes wait for the reader, as
// they do once an answer outgrows the kernel's buffers.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(16 << 10)
	}
	return c, err
}

// 64 clients ask for megabytes of blocks each and never read. Their answers
// take at most MaxLargeAnswers slots, so /status is answered 200 all the
// while; each holds one page at most, so the heap stays within those pages;
// they are counted as unread, with their bytes; an /api/blocks reader from
// another address takes the slot of one of them; and each write not taken
// within its deadline is cut off, closing its connection.
func TestUnreadAnswersPinNothing(t *testing.T) {
	const (
		readers     = DefaultMaxRequests
		blocks      = 16
		txsPerBlock = 3000 // 200 kB of JSON a block: a 3.2 MB answer, five pages of 1 MiB
	)
	db := bigChain(t, blocks, txsPerBlock)
	opts := Options{Chain: db, MaxTxSize: 16384, Registry: prometheus.NewRegistry(),
		// Cut off within the test: a page's write gets 5 s, plus 0.1 s for its length.
		WriteTimeout: 5 * time.Second, WriteRate: 10 << 20}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	// /status's own figures need every part of a node; a stand-in of its
	// size answers its route, which takes the slots /status takes.
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, apitypes.Status{Peers: []apitypes.Peer{}, RecentBlocks: make([]apitypes.TipStatus, apitypes.RecentBlockCount)})
	})
	s.mux.HandleFunc("GET /api/blocks", s.handleBlocks)
	s.handler = s.limits.wrap(s.mux)
	reg := prometheus.NewRegistry()
	if err := s.limits.register(reg); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.serveHTTP(ctx, smallSendBuffers{l}) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	addr := l.Addr().String()
	heapBefore := heapInUse()

	// /status, asked without pause from before the readers come until
	// their answers are cut off: every answer must be 200.
	var statusAsked, statusFailed atomic.Int64
	var latencies []time.Duration // the /status asker's own
	stopStatus := make(chan struct{})
	var statusDone sync.WaitGroup
	statusDone.Go(func() {
		client := from(1)
		for {
			select {
			case <-stopStatus:
				return
			default:
			}
			start := time.Now()
			resp, err := client.Get("http://" + addr + "/status")
			if err != nil {
				t.Errorf("/status: %v", err)
				statusFailed.Add(1)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statusAsked.Add(1)
			if resp.StatusCode != http.StatusOK {
				statusFailed.Add(1)
				t.Errorf("/status while answers go unread: %d", resp.StatusCode)
			}
			latencies = append(latencies, time.Since(start))
			time.Sleep(5 * time.Millisecond)
		}
	})

	var conns []net.Conn
	for range readers {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := fmt.Fprintf(c, "GET /api/blocks?from=1&count=181 HTTP/1.1\r\nHost: node\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	eventually(t, 20*time.Second, "the large answers' slots to fill with unread answers", func() bool {
		return limitMetric(t, reg, "leiosnode_api_unread_answers", nil) == DefaultMaxLargeAnswers
	})
	refused := limitMetric(t, reg, "leiosnode_api_limit_refusals_total", map[string]string{"limit": "large_answers"})
	if refused != readers-DefaultMaxLargeAnswers {
		t.Errorf("%v requests refused over the large answers' limit, want %d", refused, readers-DefaultMaxLargeAnswers)
	}
	unreadBytes := limitMetric(t, reg, "leiosnode_api_unread_bytes", nil)
	if unreadBytes <= 0 || unreadBytes > DefaultMaxLargeAnswers*DefaultMaxAnswerBytes {
		t.Errorf("%v unread bytes, want some, at most %d pages of %d", unreadBytes, DefaultMaxLargeAnswers, DefaultMaxAnswerBytes)
	}
	heapHeld := int64(heapInUse()) - int64(heapBefore)
	// A page, its buffer's slack and the block being read, per large answer.
	if bound := int64(DefaultMaxLargeAnswers * 2 * DefaultMaxAnswerBytes); heapHeld > bound {
		t.Errorf("the unread answers hold %d MiB of heap, more than %d MiB", heapHeld>>20, bound>>20)
	}

	// A reader on another address is answered: it takes the slot of an
	// unread answer.
	resp, err := from(2).Get("http://" + addr + "/api/blocks?from=1&count=181")
	if err != nil {
		t.Fatal(err)
	}
	var page []apitypes.BlockTxs
	err = json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil || len(page) == 0 || page[0].Number != 1 || len(page[0].Txs) != txsPerBlock {
		t.Fatalf("a reader beside the unread answers: %d, %v, %d blocks", resp.StatusCode, err, len(page))
	}
	if n := limitMetric(t, reg, "leiosnode_api_answers_cut_total", map[string]string{"reason": "room"}); n != 1 {
		t.Errorf("%v unread answers cut off to make room, want 1", n)
	}

	// The rest are cut off when their writes' deadlines pass.
	eventually(t, 20*time.Second, "the unread answers to be cut off", func() bool {
		return limitMetric(t, reg, "leiosnode_api_answers_cut_total", map[string]string{"reason": "deadline"}) == DefaultMaxLargeAnswers-1
	})
	eventually(t, 5*time.Second, "the unread answers' slots to be free", func() bool {
		return limitMetric(t, reg, "leiosnode_api_unread_answers", nil) == 0 &&
			limitMetric(t, reg, "leiosnode_api_requests_in_flight", map[string]string{"pool": "large_answers"}) == 0
	})
	close(stopStatus)
	statusDone.Wait()
	if statusAsked.Load() < 10 || statusFailed.Load() > 0 {
		t.Errorf("/status asked %d times during the hold, %d not answered 200", statusAsked.Load(), statusFailed.Load())
	}
	slices.Sort(latencies)
	t.Logf("%d unread readers: /status answered 200 %d times out of %d, in %v (median), %v (slowest); %d MiB of unread writes, heap +%d MiB",
		readers, statusAsked.Load()-statusFailed.Load(), statusAsked.Load(), latencies[len(latencies)/2].Round(time.Microsecond),
		latencies[len(latencies)-1].Round(time.Millisecond), int64(unreadBytes)>>20, heapHeld>>20)

	// A cut answer's connection is closed: its reader finds the end of it
	// after a part of the page (or the 503 of a refused request).
	cut := 0
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("an unread answer: %v", err)
		}
		if resp.StatusCode == http.StatusServiceUnavailable {
			resp.Body.Close()
			continue
		}
		if _, err := io.Copy(io.Discard, resp.Body); err == nil {
			t.Errorf("an unread answer came whole")
		}
		resp.Body.Close()
		cut++
	}
	if cut != DefaultMaxLargeAnswers {
		t.Errorf("%d unread answers cut off, want %d", cut, DefaultMaxLargeAnswers)
	}
}

// slowUploader sends, from 127.0.0.x, submits whose bodies come a byte
// every interval, one after another — each as soon as the last was cut
// off or refused — until ctx ends.
func slowUploader(ctx context.Context, addr string, x byte, interval time.Duration) {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, x)}}
	for ctx.Err() == nil {
		c, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			sleep(ctx, interval)
			continue
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := fmt.Fprintf(c, "POST /api/submit/tx HTTP/1.1\r\nHost: node\r\nContent-Type: application/cbor\r\nContent-Length: 1000\r\n\r\n"); err != nil {
				return
			}
			for range 1000 {
				if _, err := c.Write([]byte{0}); err != nil {
					return
				}
				time.Sleep(interval)
			}
		}()
		// Until the server answers — 408 once cut off, 503 if refused —
		// and closes.
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			resp.Body.Close()
		}
		c.Close()
		stop()
		<-done
		sleep(ctx, interval) // as a client backs off a little after a refusal
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// Slow uploads from 32 addresses, two at a time each, reconnecting as soon
// as each is cut off or refused, fill every upload slot; another client's
// submits are still answered — at least 95 in 100 — for each takes the
// slot of the slowest upload, an address cut off for slowness takes no one
// else's, and an upload below the minimum rate is cut off.
func TestSlowAddressesShutOutNoSubmitter(t *testing.T) {
	const (
		addresses = 32
		submits   = 100
	)
	s, addr := serveLimitedServer(t, Options{})
	reg := prometheus.NewRegistry()
	if err := s.limits.register(reg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var uploaders sync.WaitGroup
	defer func() {
		cancel()
		uploaders.Wait()
	}()
	for i := range addresses {
		for range 2 {
			uploaders.Go(func() { slowUploader(ctx, addr, byte(10+i), 50*time.Millisecond) })
		}
	}
	eventually(t, 10*time.Second, "the slow uploads to take every upload slot", func() bool {
		return limitMetric(t, reg, "leiosnode_api_requests_in_flight", map[string]string{"pool": "uploads"}) == DefaultMaxUploads
	})
	// Once they were cut off for their rate, none of them takes another's slot.
	eventually(t, 10*time.Second, "the slow uploads to be cut off for their rate", func() bool {
		return limitMetric(t, reg, "leiosnode_api_uploads_cut_total", map[string]string{"reason": "deadline"}) >= addresses
	})

	client := from(200)
	answered, busy := 0, map[string]int{}
	start := time.Now()
	var latencies []time.Duration
	for range submits {
		asked := time.Now()
		resp, err := client.Post("http://"+addr+"/api/submit/tx", "application/cbor", strings.NewReader("not a tx"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		latencies = append(latencies, time.Since(asked))
		if resp.StatusCode == http.StatusBadRequest { // received and judged: garbage
			answered++
		} else {
			busy[fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(body))]++
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(start)
	room := limitMetric(t, reg, "leiosnode_api_uploads_cut_total", map[string]string{"reason": "room"})
	slow := limitMetric(t, reg, "leiosnode_api_uploads_cut_total", map[string]string{"reason": "deadline"})
	refused := limitMetric(t, reg, "leiosnode_api_limit_refusals_total", map[string]string{"limit": "uploads"})
	slices.Sort(latencies)
	t.Logf("%d slow addresses: %d of %d submits answered in %v, each in %v (median), %v (slowest); slow uploads cut off for their rate %v, to make room %v; %v refused over the upload slots",
		addresses, answered, submits, took.Round(time.Millisecond), latencies[len(latencies)/2].Round(10*time.Microsecond),
		latencies[len(latencies)-1].Round(time.Millisecond), slow, room, refused)
	if answered < submits*95/100 {
		t.Fatalf("another client's submits: %d of %d answered, want 95 %%; the rest: %v", answered, submits, busy)
	}
	if room == 0 {
		t.Errorf("no slow upload was cut off to make room")
	}
}
