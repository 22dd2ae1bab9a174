package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// rawServer serves spec on one end of a pipe with srv, holding through
// hold (nil: no bound), and returns the other end, which speaks the wire
// by hand, and what Serve returns.
func rawServer(t *testing.T, srv *Server, spec *protocol.Spec, hold func(context.Context, int) (func(), error)) (net.Conn, <-chan error) {
	t.Helper()
	a, b := net.Pipe()
	server := protocol.NewSession(context.Background(), protocol.Config{Spec: spec, Role: protocol.Server, Stream: protocoltest.PipeStream{Conn: b}, Hold: hold})
	served := make(chan error, 1)
	go func() {
		err := srv.Serve(server.Context(), server)
		server.Fail(err) // as the host does
		served <- err
	}()
	t.Cleanup(func() { _ = a.Close(); server.Close() })
	return a, served
}

// The answers written as they are read are, byte for byte, the frames of
// the whole messages: each /leios/fetch/1 and /leios/fetch/2 answer that
// carries a body or txs, whole closures and bitmaps spanning windows.
func TestStreamedAnswersAreTheMessages(t *testing.T) {
	db := openDB(t, t.TempDir())
	eb := blocktest.NewEB(t, 300, blocktest.Seeds(0, 700)...) // 210 kB: more than a chunk
	small := blocktest.NewEB(t, 100, blocktest.Seeds(1_000, 1_003)...)
	storeEB(t, db, 10, eb, eb.Txs)
	storeEB(t, db, 11, small, small.Txs)
	pick := func(eb *blocktest.EB, offsets ...int) TxList {
		var out TxList
		for _, off := range offsets {
			out = append(out, eb.Txs[off])
		}
		return out
	}
	bm := mustBitmaps(t, 0, 63, 64, 130, 699)
	for _, tc := range []struct {
		name string
		spec *protocol.Spec
		ask  []protocol.Message
		want []protocol.Message
	}{
		{"fetch/1 body", Spec(testLimits), []protocol.Message{&MsgBlockRequest{Point: eb.Point(10)}}, []protocol.Message{&MsgBlock{Body: eb.Body.Bytes()}}},
		{"fetch/1 txs", Spec(testLimits),
			[]protocol.Message{&MsgBlockTxsRequest{Point: eb.Point(10), Bitmaps: bm}, &MsgBlockTxsRequest{Point: small.Point(11), Bitmaps: mustBitmaps(t, 0, 1, 2)}},
			[]protocol.Message{&MsgBlockTxs{Point: eb.Point(10), Bitmaps: bm, Txs: pick(eb, bm.Offsets()...)}, &MsgBlockTxs{Point: small.Point(11), Bitmaps: mustBitmaps(t, 0, 1, 2), Txs: small.Txs}}},
		{"fetch/2 blocks", Spec2(testLimits),
			[]protocol.Message{&MsgMultiBlockRequest{EbHashes: []block.Hash{small.Body.Hash(), eb.Body.Hash()}}},
			[]protocol.Message{&MsgMultiBlock{Body: small.Body.Bytes(), Txs: small.Txs}, &MsgMultiBlock{Body: eb.Body.Bytes(), Txs: eb.Txs}, &MsgNoMoreBlocks{}}},
		{"fetch/2 txs", Spec2(testLimits),
			[]protocol.Message{&MsgTxsRequest2{EbHash: eb.Body.Hash(), Bitmap: TxBitmap(bm)}},
			[]protocol.Message{&MsgTxs2{Txs: pick(eb, bm.Offsets()...)}}},
		{"fetch/2 body", Spec2(testLimits),
			[]protocol.Message{&MsgTxsRequest2{EbHash: eb.Body.Hash()}},
			[]protocol.Message{&MsgTxs2{Txs: TxList{eb.Body.Bytes()}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, _ := rawServer(t, &Server{Store: db, Logger: quietLogger()}, tc.spec, nil)
			go func() { _, _ = conn.Write(protocoltest.Frames(t, tc.ask...)) }()
			want := protocoltest.Frames(t, tc.want...)
			got := make([]byte, len(want))
			if _, err := io.ReadFull(conn, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("the answers' %d bytes differ from the messages'", len(got))
			}
		})
	}
}

// A stored body in the CIP's shape, its map in a one-element array, is
// walked as the bare map is.
func TestBodyEntriesOfBothShapes(t *testing.T) {
	eb := blocktest.NewEB(t, 100, blocktest.Seeds(0, 70)...)
	bare := block.AppendHead(nil, majorMap, uint64(len(eb.Body.Txs)))
	for _, tx := range eb.Body.Txs {
		bare = block.AppendHead(append(append(bare, 0x58, 0x20), tx.TxHash[:]...), majorUint, uint64(tx.Size))
	}
	for name, body := range map[string][]byte{
		"bare map":            bare,
		"one-element array":   append([]byte{0x81}, bare...),
		"two-element array":   append([]byte{0x82}, bare...),
		"entries cut short":   bare[:len(bare)-40],
		"a hash of 31 bytes":  unhex(t, "a1 581f"+hexOf(block.Hash{})[:62]+"01"),
		"nothing but a head":  unhex(t, "b9ffff"),
		"a string, not a map": unhex(t, "41 00"),
	} {
		t.Run(name, func(t *testing.T) {
			r := &reply{body: body, sel: selection{all: true}}
			var got []block.EBTx
			err := r.eachSelected(func(_ int, h block.Hash, size int) error {
				got = append(got, block.EBTx{TxHash: h, Size: uint32(size)})
				return nil
			})
			valid := name == "bare map" || name == "one-element array"
			if valid != (err == nil) {
				t.Fatalf("err %v", err)
			}
			if valid && (len(got) != len(eb.Body.Txs) || got[69] != eb.Body.Txs[69]) {
				t.Fatalf("%d entries, want the body's %d", len(got), len(eb.Body.Txs))
			}
		})
	}
}

// holdLog is a bound on held bytes that records, with the store reads, in
// what order they came, and how much was held at most.
type holdLog struct {
	mu     sync.Mutex
	events []string
	held   int
	most   int
	holds  []int
}

func (l *holdLog) log(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *holdLog) hold(_ context.Context, n int) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, "hold")
	l.holds = append(l.holds, n)
	l.held += n
	l.most = max(l.most, l.held)
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.events = append(l.events, "release")
			l.held -= n
		})
	}, nil
}

// loggedStore logs the bodies and txs read, and hides the txs in gone from
// Tx (not from HasTxs): a tx pruned while its answer is written.
type loggedStore struct {
	Store
	log  *holdLog
	gone map[block.Hash]bool
}

func (s loggedStore) Body(h block.Hash) ([]byte, bool, error) {
	s.log.log("body")
	return s.Store.Body(h)
}

func (s loggedStore) Tx(h block.Hash) ([]byte, bool, error) {
	if s.gone[h] {
		return nil, false, nil
	}
	return s.Store.Tx(h)
}

// An answer holds room for its body, a chunk and a tx before it reads the
// body, and gives it back once written; a body larger than the room it
// guessed is read again once the room it needs is held, the guess given
// back first, so a session never waits holding anything.
func TestAnswersHoldBeforeTheyRead(t *testing.T) {
	db := openDB(t, t.TempDir())
	eb := blocktest.NewEB(t, 300, blocktest.Seeds(0, 700)...)
	// 4,000 txs: a 144 kB body, more than the guess.
	wide := blocktest.NewEB(t, 40, blocktest.Seeds(1_000, 5_000)...)
	storeEB(t, db, 10, eb, eb.Txs)
	storeEB(t, db, 11, wide, wide.Txs)
	log := new(holdLog)
	conn, _ := rawServer(t, &Server{Store: loggedStore{Store: db, log: log}, Logger: quietLogger()}, Spec2(testLimits), log.hold)
	ask := protocoltest.Frames(t, &MsgMultiBlockRequest{EbHashes: []block.Hash{eb.Body.Hash(), wide.Body.Hash()}})
	want := protocoltest.Frames(t, &MsgMultiBlock{Body: eb.Body.Bytes(), Txs: eb.Txs}, &MsgMultiBlock{Body: wide.Body.Bytes(), Txs: wide.Txs}, &MsgNoMoreBlocks{})
	go func() { _, _ = conn.Write(ask) }()
	if _, err := io.ReadFull(conn, make([]byte, len(want))); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	wantEvents := []string{"hold", "body", "release", "hold", "body", "release", "hold", "body", "release"}
	if !slices.Equal(log.events, wantEvents) {
		t.Fatalf("events %v, want %v", log.events, wantEvents)
	}
	guess := bodyGuess + replyChunk + txGuess
	need := int(wide.Body.Size()) + replyChunk + 40
	if len(log.holds) != 3 || log.holds[0] != guess || log.holds[1] != guess || log.holds[2] != need {
		t.Fatalf("held %v, want %d, %d and %d", log.holds, guess, guess, need)
	}
	if log.most != need || log.held != 0 {
		t.Fatalf("held %d at most and %d at the end, want %d and none", log.most, log.held, need)
	}
}

// A tx the store held when the answer began and no longer holds when its
// chunk is read (pruned meanwhile) cuts the frame: the session ends, with
// no charge to the peer, who did not ask for what was not held.
func TestTxGoneMidAnswerCutsTheFrame(t *testing.T) {
	db := openDB(t, t.TempDir())
	eb := blocktest.NewEB(t, 300, blocktest.Seeds(0, 700)...)
	storeEB(t, db, 10, eb, eb.Txs)
	charged := 0
	srv := &Server{
		Store:  loggedStore{Store: db, log: new(holdLog), gone: map[block.Hash]bool{eb.Body.Txs[650].TxHash: true}},
		Logger: quietLogger(),
		Waste:  func(context.Context, int, string) error { charged++; return nil },
	}
	conn, served := rawServer(t, srv, Spec2(testLimits), nil)
	go func() {
		_, _ = conn.Write(protocoltest.Frames(t, &MsgMultiBlockRequest{EbHashes: []block.Hash{eb.Body.Hash()}}))
	}()
	got, _ := io.ReadAll(conn)
	want := protocoltest.Frames(t, &MsgMultiBlock{Body: eb.Body.Bytes(), Txs: eb.Txs})
	if len(got) == 0 || len(got) >= len(want) || !bytes.Equal(got, want[:len(got)]) {
		t.Fatalf("%d bytes of the %d-byte frame arrived, want its beginning and not all of it", len(got), len(want))
	}
	err := <-served
	if err == nil || errors.Is(err, ErrNotHeld) || protocol.IsViolation(err) {
		t.Fatalf("Serve: %v, want the tx gone, neither not held nor a violation", err)
	}
	if charged != 0 {
		t.Fatalf("the peer was charged %d times", charged)
	}
}

// BenchmarkServeFullClosure times the answer to a multi-block request for
// one full EB (13,888 txs of 864 bytes, a 12 MB closure) to a peer that
// reads at once, and reports what the server allocates for it.
func BenchmarkServeFullClosure(b *testing.B) {
	db := openDB(b, b.TempDir())
	eb := blocktest.NewEB(b, 864, blocktest.Seeds(0, 13_888)...)
	storeEB(b, db, 10, eb, eb.Txs)
	a, c := net.Pipe()
	server := protocol.NewSession(context.Background(), protocol.Config{Spec: Spec2(testLimits), Role: protocol.Server, Stream: protocoltest.PipeStream{Conn: c}})
	defer func() { _ = a.Close(); server.Close() }()
	go func() { _ = (&Server{Store: db, Logger: quietLogger()}).Serve(server.Context(), server) }()
	ask := protocoltest.Frames(b, &MsgMultiBlockRequest{EbHashes: []block.Hash{eb.Body.Hash()}})
	answer := len(protocoltest.Frames(b, &MsgMultiBlock{Body: eb.Body.Bytes(), Txs: eb.Txs}, &MsgNoMoreBlocks{}))
	buf := make([]byte, answer)
	b.SetBytes(int64(answer))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Write(ask); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(a, buf); err != nil {
			b.Fatal(err)
		}
	}
}
