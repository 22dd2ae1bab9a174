package protocol_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/internal/ping"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// FuzzFrameLen: any prefix either decodes to a length whose minimal
// encoding is exactly the bytes read, or fails without panicking.
func FuzzFrameLen(f *testing.F) {
	for _, seed := range [][]byte{
		{}, {0x00}, {0x7f}, {0x80, 0x01}, {0xff, 0x7f}, {0x81, 0x00},
		{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
		protocol.AppendFrame(nil, make([]byte, 300)),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := bytes.NewReader(data)
		r := bufio.NewReader(src)
		n, err := protocol.ReadFrameLen(r)
		if err != nil {
			return
		}
		read := len(data) - src.Len() - r.Buffered()
		if want := binary.AppendUvarint(nil, n); !bytes.Equal(want, data[:read]) {
			t.Fatalf("read length %d from % x, which is not its minimal encoding", n, data[:read])
		}
	})
}

// FuzzSession feeds arbitrary bytes, as the peer, to a server session of
// the ping protocol with a working server: the session must end cleanly or
// with a reported violation, never panic, and answer what is valid.
func FuzzSession(f *testing.F) {
	enc := func(msgs ...protocol.Message) []byte { return protocoltest.Frames(f, msgs...) }
	f.Add(enc(&ping.MsgPing{N: 1}, &ping.MsgPing{N: 2}, &ping.MsgDone{}))
	f.Add(enc(&ping.MsgDone{}, &ping.MsgPing{N: 1}))
	f.Add(enc(&ping.MsgPong{N: 1}))
	f.Add([]byte{0x02, 0x81, 0x09})
	f.Add([]byte{0x01, 0xff})
	f.Add([]byte{0x41})
	f.Fuzz(func(t *testing.T, data []byte) {
		local, remote := net.Pipe()
		var v protocoltest.Violations
		s := protocol.NewSession(context.Background(), protocol.Config{
			Spec: ping.Spec(time.Second, 2), Role: protocol.Server,
			Stream: protocoltest.PipeStream{Conn: local}, OnViolation: v.Add,
		})
		serving := make(chan error, 1)
		go func() { serving <- ping.Serve(s.Context(), s) }()
		go func() { _, _ = io.Copy(io.Discard, remote) }() // the peer reads our pongs
		_, _ = remote.Write(data)
		_ = remote.Close()
		served := <-serving
		s.Close()
		reported, end := v.List(), s.Err()
		switch {
		case served != nil && !errors.Is(served, protocol.ErrViolation) && !errors.Is(served, protocol.ErrClosed):
			t.Fatalf("server ended with %v", served)
		case protocol.IsViolation(end) && (len(reported) != 1 || reported[0] != end):
			t.Fatalf("session ended with %v, reported %v", end, reported)
		case !protocol.IsViolation(end) && len(reported) != 0:
			t.Fatalf("session ended with %v, yet reported %v", end, reported)
		}
	})
}
