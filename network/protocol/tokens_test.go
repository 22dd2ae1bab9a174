package protocol_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// grant asks for N items: it enters the counted state.
type grant struct {
	_ struct{} `cbor:",toarray"`
	N uint64
}

func (*grant) Tag() uint64   { return 0 }
func (g *grant) Grants() int { return int(g.N) }

// tokenSpec is a request-N stream: Idle --grant(N)--> Busy, N items back
// to Idle; grants may be pipelined.
func tokenSpec() *protocol.Spec {
	return &protocol.Spec{
		Name:    "tokens",
		Initial: "Idle",
		States: map[protocol.State]protocol.StateSpec{
			"Idle": {Agency: protocol.Client, Next: map[uint64]protocol.State{0: "Busy"}, MaxSize: 16, Timeout: time.Minute},
			"Busy": {Agency: protocol.Server, Next: map[uint64]protocol.State{1: "Idle"}, MaxSize: 16, Timeout: time.Minute, Tokens: true},
		},
		Messages: map[uint64]func() protocol.Message{
			0: func() protocol.Message { return new(grant) },
			1: func() protocol.Message { return new(item) },
		},
		MaxPipelined: 1,
	}
}

// A counted state takes exactly the granted messages, across pipelined
// grants, and messages beyond them and the pipelining room are the
// sender's violation.
func TestTokens(t *testing.T) {
	if err := tokenSpec().Validate(); err != nil {
		t.Fatal(err)
	}
	noGrant := tokenSpec()
	noGrant.Messages[0] = func() protocol.Message { return new(itemZero) }
	if err := noGrant.Validate(); err == nil {
		t.Fatal("a counted state entered without a grant validated")
	}

	client, server, cv, sv := pair(t, tokenSpec())
	ctx := context.Background()
	for _, n := range []uint64{2, 1} {
		if err := client.Send(&grant{N: n}); err != nil {
			t.Fatal(err)
		}
	}
	// The second grant reaches the server once the first is spent.
	for _, items := range []uint64{2, 1} {
		m, err := server.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if g := m.(*grant); g.N != items {
			t.Fatalf("grant %d, want %d", g.N, items)
		}
		for i := range items {
			if err := server.Send(&item{N: i}); err != nil {
				t.Fatalf("item %d of %d granted: %v", i, items, err)
			}
		}
	}
	for i := range 3 {
		if _, err := client.Recv(ctx); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
	}
	if client.State() != "Idle" || server.State() != "Idle" {
		t.Fatalf("states %s/%s after the grants were spent, want Idle", client.State(), server.State())
	}
	if len(cv.List())+len(sv.List()) > 0 {
		t.Fatalf("violations: %v %v", cv.List(), sv.List())
	}

	// A peer that sends more items than granted and than it may send
	// ahead of the next grant (MaxPipelined).
	a, b := net.Pipe()
	v := new(protocoltest.Violations)
	c := protocol.NewSession(ctx, protocol.Config{Spec: tokenSpec(), Role: protocol.Client, Stream: protocoltest.PipeStream{Conn: a}, OnViolation: v.Add})
	defer c.Close()
	go func() {
		buf := make([]byte, 16)
		_, _ = b.Read(buf) // the grant
		_, _ = b.Write(protocoltest.Frames(t, &item{N: 0}, &item{N: 1}, &item{N: 2}))
	}()
	if err := c.Send(&grant{N: 1}); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := c.Recv(ctx); err != nil {
			if !errors.Is(err, protocol.ErrAgency) {
				t.Fatalf("err %v, want ErrAgency", err)
			}
			break
		}
	}
	// Recv sees the session's error as it is set; the violation is
	// reported after the stream is reset.
	for deadline := time.Now().Add(10 * time.Second); len(v.List()) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
	}
	if len(v.List()) != 1 {
		t.Fatalf("violations %v, want the extra item's", v.List())
	}
}

// itemZero is a message of tag 0 that grants nothing.
type itemZero struct {
	_ struct{} `cbor:",toarray"`
}

func (*itemZero) Tag() uint64 { return 0 }
