package cpuwork

import (
	"testing"

	"github.com/google/pprof/profile"
)

// sample is a CPU sample whose stack is frames, leaf first, each location
// one function, with labels given as key, value pairs.
func sample(frames []string, labels ...string) *profile.Sample {
	s := &profile.Sample{Value: []int64{1, 10_000_000}, Label: map[string][]string{}}
	for _, f := range frames {
		s.Location = append(s.Location, &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: f}}}})
	}
	for i := 0; i+1 < len(labels); i += 2 {
		s.Label[labels[i]] = append(s.Label[labels[i]], labels[i+1])
	}
	return s
}

func TestClassify(t *testing.T) {
	const (
		node    = "github.com/leiosnode/leiosnode/mempool.(*Mempool).Add"
		flush   = "github.com/cockroachdb/pebble/v2.(*DB).flush"
		compact = "github.com/cockroachdb/pebble/v2.(*DB).compact"
		yamux   = "github.com/libp2p/go-yamux/v5.(*Session).recvLoop"
	)
	inlinedGC := sample([]string{"runtime.scanobject"})
	inlinedGC.Location[0].Line = append(inlinedGC.Location[0].Line, profile.Line{Function: &profile.Function{Name: "runtime.gcBgMarkWorker"}})

	for _, c := range []struct {
		name string
		s    *profile.Sample
		want Kind
	}{
		{"labelled work", sample([]string{"crypto/ed25519.Verify", node}, LabelKey, "intake"), Intake},
		{"every kind by its label", sample([]string{node}, LabelKey, "closure-validation"), ClosureValidation},
		{"unlabelled work", sample([]string{node}), Other},
		{"unknown label", sample([]string{node}, LabelKey, "mining"), Other},
		{"no stack", sample(nil), Other},

		{"GC mark worker", sample([]string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}), GC},
		{"GC mark worker that inherited a label", sample([]string{"runtime.scanobject", "runtime.gcBgMarkWorker"}, LabelKey, "forge"), GC},
		{"GC mark worker inlined", inlinedGC, GC},
		{"sweeper", sample([]string{"runtime.sweepone", "runtime.bgsweep"}), GC},
		{"scavenger", sample([]string{"runtime.bgscavenge"}), GC},
		{"runtime._GC", sample([]string{"runtime._ExternalCode", "runtime._GC"}), GC},
		{"GC assist stays with its work", sample([]string{"runtime.gcAssistAlloc", "runtime.mallocgc", node}, LabelKey, "intake"), Intake},

		{"flush", sample([]string{"github.com/cockroachdb/pebble/v2.(*DB).flush1", flush}), Store},
		{"flush that inherited a label", sample([]string{"github.com/cockroachdb/pebble/v2.(*DB).flush1", flush}, LabelKey, "intake"), Store},
		{"compaction", sample([]string{"github.com/cockroachdb/pebble/v2.(*DB).runCompaction", compact}), Store},
		{"labelled by pebble", sample([]string{"github.com/cockroachdb/pebble/v2/sstable.(*RawColumnWriter).addDataBlock"}, "pebble", "compact"), Store},
		{"sstable write queue", sample([]string{"github.com/cockroachdb/pebble/v2/sstable.(*RawColumnWriter).drainWriteQueue"}, LabelKey, "fetch"), Store},
		{"WAL syncer", sample([]string{"syscall.Syscall", "github.com/cockroachdb/pebble/v2/record.(*LogWriter).flushLoop"}), Store},
		{"table stats", sample([]string{"github.com/cockroachdb/pebble/v2.(*DB).collectTableStats"}, LabelKey, "chain"), Store},
		{"a commit is its caller's", sample([]string{"github.com/cockroachdb/pebble/v2.(*Batch).Commit", node}, LabelKey, "intake"), Intake},
		{"waiting on a flush is its caller's", sample([]string{"github.com/cockroachdb/pebble/v2.(*DB).Flush", node}, LabelKey, "chain"), Chain},

		{"yamux", sample([]string{"github.com/libp2p/go-yamux/v5.(*Stream).Read", yamux}), Network},
		{"noise", sample([]string{"golang.org/x/crypto/chacha20poly1305.(*chacha20poly1305).open", "github.com/flynn/noise.(*CipherState).Decrypt"}), Network},
		{"multistream", sample([]string{"github.com/multiformats/go-multistream.(*MultistreamMuxer[...]).Negotiate"}), Network},
		{"swarm", sample([]string{"github.com/libp2p/go-libp2p/p2p/net/swarm.(*Swarm).dialWorkerLoop"}), Network},
		{"a labelled stream read is its work", sample([]string{"github.com/libp2p/go-yamux/v5.(*Stream).Read", "github.com/leiosnode/leiosnode/fetch.(*client).run"}, LabelKey, "fetch"), Fetch},
	} {
		if got := classify(c.s); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
