package notify_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/consensustest"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
	"github.com/leiosnode/leiosnode/notify"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testingT is what the helpers need of *testing.T, *testing.F and
// *rapid.T.
type testingT interface {
	rapid.TB
	Cleanup(func())
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testNet is a small network whose headers are fully valid: with f = 1
// every pool leads every slot, so each header carries a real VRF proof
// checked by consensus.Validator (issuer, VRF key, VRF proof, leadership,
// signature) — no validation is faked in these tests.
type testNet struct {
	genesis   *consensus.Genesis
	validator *consensus.Validator
	pools     []consensustest.Pool
}

// slotsPast is how many 1-second slots lie between the system start and
// now: headers up to that slot are not in the future.
const slotsPast = 1000

func newTestNet(t testingT, pools int) *testNet {
	t.Helper()
	n := &testNet{}
	for i := range pools {
		n.pools = append(n.pools, consensustest.NewPool(fmt.Sprintf("pool%d", i), byte(i)))
	}
	n.genesis = consensustest.Genesis(n.pools...)
	n.genesis.SystemStart = time.Now().Add(-slotsPast * time.Second)
	n.genesis.MaxClockSkewMs = 500
	n.validator = consensustest.Validator(t, n.genesis)
	return n
}

// header forges a valid header of pool at slot; ann (may be nil) is its EB
// announcement; variant makes distinct headers of one (slot, pool).
func (n *testNet) header(slot uint64, pool int, ann *block.Announcement, variant byte) *block.Header {
	return n.pools[pool].Header(n.validator, block.HeaderBody{
		BlockNumber:  slot,
		Slot:         slot,
		BodyHash:     block.HashBytes([]byte{variant}),
		Announcement: ann,
	})
}

func (n *testNet) relay(t testingT, configure ...func(*notify.Options)) *notify.Relay {
	t.Helper()
	opts := notify.Options{
		ValidateHeader: n.validator.ValidateHeader,
		Clock:          n.genesis.Clock(),
		MaxClockSkew:   500 * time.Millisecond,
		Logger:         quietLogger(),
	}
	for _, c := range configure {
		c(&opts)
	}
	r, err := notify.NewRelay(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runRelay feeds r the events of db, as the node's LeiosDB follower does,
// until the test ends.
func runRelay(t testingT, r *notify.Relay, db *leiosdb.DB) {
	t.Helper()
	follower := db.Follow(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- follower.Run(ctx, func(ev leiosdb.Followed) error {
			r.Offer(ev.Kind, ev.Point, ev.Info.EbSize)
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("following the LeiosDB: %v", err)
		}
	})
}

// eb is an endorser block: its body and closure.
type eb struct {
	body *block.EBBody
	txs  [][]byte
}

func (e eb) announcement() *block.Announcement {
	a := e.body.Announcement()
	return &a
}

func testTx(seed uint64) []byte {
	tx := make([]byte, 40)
	for i := range tx {
		tx[i] = byte(seed>>(8*(i%8))) ^ byte(i*7)
	}
	return tx
}

func newEB(t testingT, seeds ...uint64) eb {
	t.Helper()
	e := eb{}
	var entries []block.EBTx
	for _, s := range seeds {
		tx := testTx(s)
		e.txs = append(e.txs, tx)
		entries = append(entries, block.EBTx{TxHash: block.HashBytes(tx), Size: uint32(len(tx))})
	}
	body, err := block.NewEBBody(entries, block.DefaultEBLimits)
	if err != nil {
		t.Fatal(err)
	}
	e.body = body
	return e
}

// pair runs a client and a server notify session over a pipe.
func pair(t testingT) (client, server *protocol.Session, cv, sv *protocoltest.Violations) {
	t.Helper()
	a, b := net.Pipe()
	cv, sv = new(protocoltest.Violations), new(protocoltest.Violations)
	spec := notify.Spec()
	client = protocol.NewSession(context.Background(), protocol.Config{Spec: spec, Role: protocol.Client, Stream: protocoltest.PipeStream{Conn: a}, OnViolation: cv.Add})
	server = protocol.NewSession(context.Background(), protocol.Config{Spec: spec, Role: protocol.Server, Stream: protocoltest.PipeStream{Conn: b}, OnViolation: sv.Add})
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server, cv, sv
}

// tap is a peer served by a relay that records every notification, in
// stream order, keeping MaxInFlight requests outstanding as a client does.
type tap struct {
	mu     sync.Mutex
	msgs   []protocol.Message
	served chan error
	done   chan struct{}
	client *protocol.Session
}

func newTap(t testingT, r *notify.Relay) *tap {
	t.Helper()
	client, server, _, _ := pair(t)
	tp := &tap{served: make(chan error, 1), done: make(chan struct{}), client: client}
	go func() { tp.served <- r.Serve(server.Context(), server) }()
	go func() {
		defer close(tp.done)
		for range notify.MaxInFlight {
			if client.Send(&notify.MsgRequestNext{}) != nil {
				return
			}
		}
		for {
			m, err := client.Recv(context.Background())
			if err != nil {
				return
			}
			tp.mu.Lock()
			tp.msgs = append(tp.msgs, m)
			tp.mu.Unlock()
			if client.Send(&notify.MsgRequestNext{}) != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		client.Close()
		server.Close()
		<-tp.done
		<-tp.served
	})
	return tp
}

func (tp *tap) messages() []protocol.Message {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]protocol.Message(nil), tp.msgs...)
}

// clear forgets the messages received so far.
func (tp *tap) clear() {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.msgs = nil
}

// waitFor waits until the tap holds n messages and returns them.
func (tp *tap) waitFor(t testingT, n int) []protocol.Message {
	t.Helper()
	eventually(t, fmt.Sprintf("%d notifications", n), func() bool { return len(tp.messages()) >= n })
	return tp.messages()
}

// quiet checks that nothing more than n messages arrives for a moment.
func (tp *tap) quiet(t testingT, n int) []protocol.Message {
	t.Helper()
	time.Sleep(50 * time.Millisecond)
	msgs := tp.messages()
	if len(msgs) != n {
		t.Fatalf("got %d notifications, want %d: %s", len(msgs), n, describe(msgs))
	}
	return msgs
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testingT, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// describe renders notifications compactly for failure messages.
func describe(msgs []protocol.Message) string {
	s := ""
	for _, m := range msgs {
		s += " " + label(m)
	}
	return s
}

func label(m protocol.Message) string {
	switch m := m.(type) {
	case *notify.MsgBlockAnnouncement:
		return "ann(" + m.Header.Point().String() + ")"
	case *notify.MsgBlockOffer:
		return "offer(" + m.Point.String() + ")"
	case *notify.MsgBlockTxsOffer:
		return "txs(" + m.Point.String() + ")"
	case *notify.MsgVotes:
		return fmt.Sprintf("votes(%d)", len(m.Votes))
	default:
		return fmt.Sprintf("%T", m)
	}
}

func isViolation(errs []error, target error) bool {
	for _, err := range errs {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// tampered returns h with one bit of its signature flipped in its bytes,
// as a forger's header would arrive off the wire.
func tampered(t testingT, h *block.Header) *block.Header {
	t.Helper()
	raw := append([]byte(nil), h.Bytes()...)
	raw[len(raw)-1] ^= 0x40 // the signature ends the header
	bad, err := block.DecodeHeader(raw)
	if err != nil {
		t.Fatal(err)
	}
	return bad
}
