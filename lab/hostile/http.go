package hostile

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/internal/pause"
)

// HTTPUnread's size and pace: more connections than the API has request
// slots (64), each asking again every unreadRepeat on the same
// connection (pipelined) while the node keeps it open, with a receive
// buffer of unreadReadBuffer so that the answers stay with the node
// rather than in this process's kernel buffers.
const (
	unreadConnections = 80
	unreadPath        = "/api/blocks?from=1&count=181"
	unreadRepeat      = 2 * time.Second
	unreadReadBuffer  = 4 << 10
)

// unreadAnswers runs unreadConnections connections that ask for large
// answers and never read them; one the node closes is opened again.
func unreadAnswers(ctx context.Context, t Target, tally *Tally) error {
	request := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", unreadPath, t.HTTPAddr)
	var g errgroup.Group
	for range unreadConnections {
		g.Go(func() error {
			for ctx.Err() == nil {
				conn, err := dialHTTP(ctx, t, nil)
				if err != nil {
					tally.Failed.Add(1)
					if !pause.For(ctx, time.Second) {
						return nil
					}
					continue
				}
				tally.Connections.Add(1)
				_ = conn.(*net.TCPConn).SetReadBuffer(unreadReadBuffer)
				for {
					if _, err := conn.Write([]byte(request)); err != nil {
						tally.Cut.Add(1)
						break
					}
					tally.Requests.Add(1)
					if !pause.For(ctx, unreadRepeat) {
						break
					}
				}
				_ = conn.Close()
			}
			return nil
		})
	}
	return g.Wait()
}

// HTTPSlowUpload's size and pace: uploadAddresses loopback addresses (the
// API shares its slots fairly by address) with uploadsPerAddress submits
// each, together more than its 32 upload slots, each body of the largest
// size a tx may have, sent at uploadBytesPerSecond — far below the 16 KiB/s
// the API holds a body to.
const (
	uploadAddresses      = 32
	uploadsPerAddress    = 2
	uploadBodyBytes      = 16384
	uploadBytesPerSecond = 10
)

// slowUploads runs uploadsPerAddress slow submits from each of
// uploadAddresses loopback addresses (127.0.0.2 on; where the system
// binds no such address, the default one); one the node answers or cuts
// is started again.
func slowUploads(ctx context.Context, t Target, tally *Tally) error {
	header := fmt.Sprintf("POST /api/submit/tx HTTP/1.1\r\nHost: %s\r\nContent-Type: application/cbor\r\nContent-Length: %d\r\n\r\n", t.HTTPAddr, uploadBodyBytes)
	var g errgroup.Group
	for a := range uploadAddresses {
		for range uploadsPerAddress {
			g.Go(func() error {
				local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+a))}
				for ctx.Err() == nil {
					conn, err := dialHTTP(ctx, t, local)
					if err != nil {
						local = nil // no such address here: the default
						tally.Failed.Add(1)
						if !pause.For(ctx, time.Second) {
							return nil
						}
						continue
					}
					tally.Connections.Add(1)
					slowUpload(ctx, conn, header, tally)
					_ = conn.Close()
				}
				return nil
			})
		}
	}
	return g.Wait()
}

// slowUpload sends the header, then the body a byte at a time at
// uploadBytesPerSecond, until the node answers (counted by status) or
// closes the connection, or ctx ends.
func slowUpload(ctx context.Context, conn net.Conn, header string, tally *Tally) {
	answered := make(chan int, 1)
	var reader sync.WaitGroup
	reader.Go(func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- 0
			return
		}
		_ = resp.Body.Close()
		answered <- resp.StatusCode
	})
	defer reader.Wait()
	defer func() { _ = conn.Close() }() // ends the reader
	if _, err := conn.Write([]byte(header)); err != nil {
		tally.Cut.Add(1)
		return
	}
	tally.Requests.Add(1)
	tick := time.NewTicker(time.Second / uploadBytesPerSecond)
	defer tick.Stop()
	for sent := 0; sent < uploadBodyBytes; sent++ {
		select {
		case <-ctx.Done():
			return
		case status := <-answered:
			countStatus(tally, status)
			return
		case <-tick.C:
		}
		if _, err := conn.Write([]byte{0}); err != nil {
			select {
			case status := <-answered:
				countStatus(tally, status)
			case <-time.After(time.Second):
				tally.Cut.Add(1)
			}
			return
		}
	}
}

// countStatus counts a slow upload's answer; 0 is a connection closed
// without one.
func countStatus(tally *Tally, status int) {
	switch status {
	case http.StatusServiceUnavailable:
		tally.Refused.Add(1)
	case http.StatusRequestTimeout:
		tally.TimedOut.Add(1)
	default:
		tally.Cut.Add(1)
	}
}

// dialHTTP opens a raw TCP connection to the node's API, from local if
// given.
func dialHTTP(ctx context.Context, t Target, local *net.TCPAddr) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	if local != nil {
		d.LocalAddr = local
	}
	conn, err := d.DialContext(ctx, "tcp", t.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("hostile: dialing %s: %w", strings.TrimSpace(t.HTTPAddr), err)
	}
	return conn, nil
}
