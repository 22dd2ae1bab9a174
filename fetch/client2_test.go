package fetch

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// sessions2 is sessions in /leios/fetch/2.
func sessions2(t *testing.T) (client, server *protocol.Session, cv <-chan error) {
	t.Helper()
	a, b := net.Pipe()
	cvc := make(chan error, 1)
	spec := Spec2(testLimits)
	client = protocol.NewSession(context.Background(), protocol.Config{Spec: spec, Role: protocol.Client, Stream: protocoltest.PipeStream{Conn: a}, OnViolation: func(err error) { cvc <- err }})
	server = protocol.NewSession(context.Background(), protocol.Config{Spec: spec, Role: protocol.Server, Stream: protocoltest.PipeStream{Conn: b}})
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server, cvc
}

func blocksRequest(id uint64, slot uint64, ebs ...*blocktest.EB) *Request {
	r := &Request{ID: id, Kind: RequestBlocks, Point: ebs[0].Point(slot)}
	for i, eb := range ebs {
		r.Blocks = append(r.Blocks, BlockRef{Point: eb.Point(slot + uint64(i)), EbSize: eb.Body.Size()})
		r.Bytes += eb.Body.Size()
	}
	return r
}

// In /leios/fetch/2 the server answers two multi-block requests with each
// EB whole, a body request (empty bitmap) and a txs request (chunk bitmap),
// all pipelined; the client checks each EB against its hash and its txs
// against the body.
func TestClientServer2(t *testing.T) {
	db := openDB(t, t.TempDir())
	ebs := []*blocktest.EB{
		blocktest.NewEB(t, 200, blocktest.Seeds(0, 70)...),
		blocktest.NewEB(t, 100, blocktest.Seeds(70, 71)...),
		blocktest.NewEB(t, 300, blocktest.Seeds(100, 130)...),
	}
	for i, eb := range ebs {
		storeEB(t, db, 10+uint64(i), eb, eb.Txs)
	}
	client, server, cv := sessions2(t)
	served := make(chan error, 1)
	go func() {
		served <- (&Server{Store: db, Logger: quietLogger()}).Serve(context.Background(), server)
	}()
	c := NewClient(client, testLimits)
	reqs := []*Request{blocksRequest(1, 10, ebs...), blocksRequest(4, 11, ebs[1:]...), bodyRequest(2, ebs[0], 10), txsRequest(3, ebs[0], 10, 0, 63, 64, 69)}
	for _, r := range reqs {
		if err := c.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	r, reply, err := c.Next(context.Background())
	if err != nil || r != reqs[0] {
		t.Fatalf("multi-block: %v, %v", r, err)
	}
	if len(reply.Blocks) != len(ebs) {
		t.Fatalf("%d EBs, want %d", len(reply.Blocks), len(ebs))
	}
	for i, b := range reply.Blocks {
		if b.Point != ebs[i].Point(10+uint64(i)) || b.Body.Hash() != ebs[i].Body.Hash() || len(b.Txs) != len(ebs[i].Txs) {
			t.Fatalf("EB %d: %v, %d txs", i, b.Point, len(b.Txs))
		}
	}
	if r, reply, err = c.Next(context.Background()); err != nil || r != reqs[1] || len(reply.Blocks) != 2 || reply.Blocks[1].Body.Hash() != ebs[2].Body.Hash() {
		t.Fatalf("the second multi-block request, pipelined: %v, %v", r, err)
	}
	if _, reply, err = c.Next(context.Background()); err != nil || reply.Body.Hash() != ebs[0].Body.Hash() {
		t.Fatalf("body: %v", err)
	}
	if _, reply, err = c.Next(context.Background()); err != nil || len(reply.Txs) != 4 || reply.Txs[3].Hash != ebs[0].Body.Txs[69].TxHash {
		t.Fatalf("txs: %v", err)
	}
	if err := c.Done(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-cv:
		t.Fatalf("violation: %v", err)
	default:
	}
}

// A multi-block answer whose EB differs from the hash asked for is the
// server's violation.
func TestMultiBlockWrongEB(t *testing.T) {
	db := openDB(t, t.TempDir())
	asked, sent := blocktest.NewEB(t, 100, 1, 2), blocktest.NewEB(t, 100, 3, 4)
	storeEB(t, db, 10, sent, sent.Txs)
	client, server, cv := sessions2(t)
	go func() {
		if _, err := server.Recv(context.Background()); err != nil {
			return
		}
		_ = server.Send(&MsgMultiBlock{Body: sent.Body.Bytes(), Txs: sent.Txs})
		_ = server.Send(&MsgNoMoreBlocks{})
	}()
	c := NewClient(client, testLimits)
	r := blocksRequest(1, 10, asked)
	r.Blocks[0].EbSize = sent.Body.Size()
	if err := c.Send(r); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Next(context.Background()); !errors.Is(err, ErrBadBody) {
		t.Fatalf("err %v, want ErrBadBody", err)
	}
	if err := <-cv; !errors.Is(err, ErrBadBody) {
		t.Fatalf("violation %v, want ErrBadBody", err)
	}
}
