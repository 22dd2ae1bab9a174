package simtrace

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// every is one event of each kind this node writes, named as the node
// names them: the EB by its RB's id, a vote "<EB id>-<seat>".
var every = []Event{
	Slot{Node: "node-0", Slot: 7},
	RBGenerated{ID: "aa", Slot: 7, Producer: "node-0", SizeBytes: 900, TxPayloadBytes: 700, Parent: &BlockRef{ID: "99"}},
	EBGenerated{ID: "aa", Slot: 7, Producer: "node-0", SizeBytes: 300, InputBlocks: []BlockRef{}, EndorserBlocks: []BlockRef{}},
	Sent{Kind: "RB", Sender: "node-0", Recipient: "node-1", MsgSizeBytes: 900, ID: "aa", Slot: 7},
	Sent{Kind: "EB", Sender: "node-0", Recipient: "node-1", MsgSizeBytes: 300, ID: "aa", Slot: 7},
	Slot{Node: "node-0", Slot: 8},
	VTBundleGenerated{ID: "aa-0", Slot: 8, Producer: "node-0", SizeBytes: 120, Votes: map[string]int{"aa": 1}},
	Sent{Kind: "VTBundle", Sender: "node-0", Recipient: "node-1", MsgSizeBytes: 120, ID: "aa-0", Slot: 7},
	Received{Kind: "RB", Sender: "node-1", Recipient: "node-0", ID: "ac", Slot: 10},
	Received{Kind: "EB", Recipient: "node-0", ID: "ac", Slot: 10},
	Received{Kind: "VTBundle", Sender: "node-1", Recipient: "node-0", ID: "ac-1", Slot: 10},
	RBGenerated{ID: "ab", Slot: 9, Producer: "node-0", SizeBytes: 400, Parent: &BlockRef{ID: "aa"}, Endorsement: &Endorsement{EB: BlockRef{ID: "aa"}}},
	CPU{Node: "node-0", CPUTimeS: 0.004, TaskType: "ValEB", ID: "ac"},
}

// TestEveryLineHasTheFormatsFields: the writer's lines, one event of each
// kind, are events of the shared format, each with its fields and their
// types, stamped with the time since the system start.
func TestEveryLineHasTheFormatsFields(t *testing.T) {
	start := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	w := newWriter(&out, io.NopCloser(nil), "node-0", start, func() time.Time { return start.Add(1500 * time.Millisecond) })
	for _, e := range every {
		w.Emit(e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Run writes what is queued, then returns
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	lines, err := Check(bytes.NewReader(out.Bytes()))
	if err != nil || lines != len(every) {
		t.Fatalf("%d lines checked, want %d: %v\n%s", lines, len(every), err, out.String())
	}
	first := strings.SplitN(out.String(), "\n", 2)[0]
	if want := `{"time_s":1.5,"message":{"type":"Slot","node":"node-0","slot":7}}`; first != want {
		t.Errorf("first line %s, want %s", first, want)
	}
	for _, typ := range []string{"RBGenerated", "EBGenerated", "VTBundleGenerated", "RBReceived", "EBReceived", "VTBundleReceived", "EBSent", "RBSent", "Cpu"} {
		if !strings.Contains(out.String(), `"type":"`+typ+`"`) {
			t.Errorf("no %s line:\n%s", typ, out.String())
		}
	}
}

// TestCheckRefusesWhatIsNotTheFormat: the check is not a rubber stamp.
func TestCheckRefusesWhatIsNotTheFormat(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"time_s":1,"message":{"type":"Slot","node":"n"}}`, `field "slot" missing`},
		{`{"time_s":1,"message":{"type":"Slot","node":"n","slot":"7"}}`, `field "slot" is a string, want number`},
		{`{"time_s":1,"message":{"type":"Slot","node":"n","slot":7,"extra":1}}`, `field "extra" is not the format's`},
		{`{"time_s":1,"message":{"type":"RBVanished","id":"a"}}`, `type "RBVanished" is not one of`},
		{`{"time_s":1,"message":{"type":"XBSent","sender":"a","recipient":"b","msg_size_bytes":1,"id":"c"}}`, `type "XBSent"`},
		{`{"time_s":1,"message":{"type":"Cpu","node":"n","cpu_time_s":1,"task_type":"Think","id":"a"}}`, `task_type "Think"`},
		{`{"message":{"type":"Slot","node":"n","slot":7}}`, `want {"time_s"`},
		{`{"time_s":1,"message":{"type":"EBReceived","recipient":"n","id":"a","slot":1,"sender":true}}`, `field "sender" is a boolean`},
		// What the format's readers require beyond the shared schema: the
		// visualiser a slot on every Sent and Received, leios-trace-hs a
		// transactions list on generated RBs and EBs.
		{`{"time_s":1,"message":{"type":"EBReceived","recipient":"n","id":"a"}}`, `field "slot" missing`},
		{`{"time_s":1,"message":{"type":"VTBundleSent","sender":"m","recipient":"n","msg_size_bytes":1,"id":"a-1"}}`, `field "slot" missing`},
		{`{"time_s":1,"message":{"type":"EBGenerated","id":"a","slot":1,"producer":"n","size_bytes":1,"pipeline":0,"input_blocks":[],"endorser_blocks":[]}}`, `field "transactions" missing`},
	} {
		if err := CheckLine([]byte(tc.line)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.line, err, tc.want)
		}
	}
}

// TestEmitNeverBlocks: with nobody writing, events beyond the queue are
// dropped and counted; a nil Writer takes events and does nothing.
func TestEmitNeverBlocks(t *testing.T) {
	w := newWriter(io.Discard, io.NopCloser(nil), "n", time.Now(), nil)
	for range queueLength + 10 {
		w.Emit(Slot{Node: "n", Slot: 1})
	}
	if w.Dropped() != 10 {
		t.Errorf("%d events dropped, want 10", w.Dropped())
	}
	var none *Writer
	none.Emit(Slot{})
	// The events marshal as the format's messages whatever their order.
	b, err := json.Marshal(line{Time: 2, Message: Received{Kind: "RB", Recipient: "n", ID: "a"}})
	if err != nil || string(b) != `{"time_s":2,"message":{"type":"RBReceived","recipient":"n","id":"a","slot":0}}` {
		t.Errorf("%s %v", b, err)
	}
}
