package chaos

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leiosnode/leiosnode/lab/hostile"
)

// Kind is a kind of fault the chaos mode injects.
type Kind string

const (
	// Kill: SIGKILL one node, then start it again with its command
	// line after a pause.
	Kill Kind = "kill"
	// Freeze: SIGSTOP one node, then SIGCONT after a while.
	Freeze Kind = "freeze"
	// Partition: sever every link between a minority of the nodes and
	// the rest, then restore them after a while.
	Partition Kind = "partition"
	// Starve: every node runs a tenth of the time (SIGSTOP for 0.9 s,
	// SIGCONT for 0.1 s, over and over) while the fault lasts: a machine
	// far too slow for the load, after which the nodes must take txs in
	// again by themselves.
	Starve Kind = "starve"
	// Refill: SIGKILL one node, delete its LeiosDB and start it again
	// after a pause; once it has fetched half the certified closures it
	// lost, stop one of its peers until it has them all. It has recovered
	// when it holds every one, serves every block of its chain, and the
	// nodes are on one chain again.
	Refill Kind = "refill"

	// The attacks (package hostile) on one node, while the fault lasts; it
	// has recovered when the nodes are on one chain again, and the report
	// says what its heap and RSS did against the stated bound and which of
	// its counters moved.
	//
	// HTTPUnread: clients that ask for 1 MiB pages of /api/blocks and never
	// read them.
	HTTPUnread = Kind(hostile.HTTPUnread)
	// HTTPSlowUpload: submits trickling in from many addresses.
	HTTPSlowUpload = Kind(hostile.HTTPSlowUpload)
	// CIPJunk: libp2p identities that answer the CIP's grants with votes
	// and offers below the immutable tip.
	CIPJunk = Kind(hostile.CIPJunk)
	// CIPViolation: identities that each break one rule once on one of
	// their three CIP streams.
	CIPViolation = Kind(hostile.CIPViolation)
	// FetchUnread: identities that ask on every LeiosFetch and block-fetch
	// stream for the largest closures or the chain, pipelined, and never
	// read.
	FetchUnread = Kind(hostile.FetchUnread)
	// FetchNotHeld: identities that ask again and again for EBs not held.
	FetchNotHeld = Kind(hostile.FetchNotHeld)
)

// Kinds are the kinds in the order the spec and the report list them (a
// kind's index seeds its random source: new kinds go at the end).
var Kinds = []Kind{Kill, Freeze, Partition, Starve, Refill, HTTPUnread, HTTPSlowUpload, CIPJunk, CIPViolation, FetchUnread, FetchNotHeld}

// isAttack says whether kind is one of the hostile attacks.
func isAttack(kind Kind) bool { return slices.Contains(hostile.Attacks, hostile.Attack(kind)) }

// defaultAttackLength is an attack's length when the spec gives none.
const defaultAttackLength = 45 * time.Second

// kindNames spells the kinds for a message: "kill, freeze, … or fetch-not-held".
func kindNames() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// defaultFaultLength is a fault's length when the spec gives none: how long
// a killed node stays down before its restart, a freeze or a partition
// lasts.
var defaultFaultLength = map[Kind]time.Duration{
	Kill:      2 * time.Second,
	Freeze:    5 * time.Second,
	Partition: 5 * time.Second,
	Starve:    30 * time.Second,
	Refill:    2 * time.Second,
}

// lengthOf is a fault's length when the spec gives none.
func lengthOf(kind Kind) time.Duration {
	if isAttack(kind) {
		return defaultAttackLength
	}
	return defaultFaultLength[kind]
}

// Default is the spec --chaos default stands for: a kill every 40 s or
// so (down 2 s), a freeze every 60 s (for 8 s) and a partition every 75 s
// (for 5 s, in which a devnet of 3 nodes forges some 5 blocks, the cut-off
// node about 2: well under its k of 10, so it heals by itself). Over ten
// minutes that is some thirty faults.
const Default = "kill=40s:2s,freeze=60s:8s,partition=75s:5s"

// defaultQuiet is how long before the end of a run no repeating fault
// starts, so that the last one has recovered before the final check.
const defaultQuiet = 30 * time.Second

// Spec is a parsed --chaos SPEC: which faults strike, how often or
// when, and for how long.
//
// The syntax is a comma-separated list of items:
//
//	KIND=EVERY[:LENGTH]   the fault strikes again and again, EVERY apart on
//	                      average (each interval is drawn uniformly from
//	                      EVERY/2 to 3·EVERY/2; the first one too, from the
//	                      system start)
//	KIND@AT[:LENGTH]      the fault strikes once, AT after the system start
//	quiet=DURATION        no repeating fault starts in the run's last
//	                      DURATION (default 30s; needs --duration)
//	equivocate            the last pool equivocates, all along
//
// KIND is kill, freeze, partition, starve, refill or an attack
// (http-unread, http-slow-upload, cip-junk, cip-violation, fetch-unread,
// fetch-not-held); durations are Go's (500ms, 10s, 2m). LENGTH is how
// long a killed node stays down before its restart (default 2s, as a
// refill's), a freeze lasts (5s), a partition lasts (5s), the nodes are
// starved (30s) or an attack lasts (45s). "default" is
// Default. A kind may be given more than once.
type Spec struct {
	Faults []FaultSpec
	// Quiet is the run's final span in which no repeating fault starts.
	Quiet time.Duration
	// Equivocate: the last pool equivocates all along, announcing a second
	// EB in each slot it leads with one (leiosnode run
	// --chaos-equivocate); the others must never certify those.
	Equivocate bool
}

// FaultSpec is one item of a Spec: a repeating fault (Every > 0)
// or a single one (At after the system start).
type FaultSpec struct {
	Kind   Kind
	Every  time.Duration // mean interval; 0 for a single fault
	At     time.Duration // a single fault's time after the system start
	Length time.Duration
}

// ParseSpec parses a --chaos SPEC (see Spec).
func ParseSpec(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	if s == "default" {
		s = Default
	}
	spec := Spec{Quiet: defaultQuiet}
	if s == "" {
		return Spec{}, errors.New("chaos: empty spec (try \"default\")")
	}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "equivocate" {
			spec.Equivocate = true
			continue
		}
		if q, ok := strings.CutPrefix(item, "quiet="); ok {
			d, err := time.ParseDuration(q)
			if err != nil || d < 0 {
				return Spec{}, fmt.Errorf("chaos: %q: quiet wants a duration ≥ 0, e.g. quiet=30s", item)
			}
			spec.Quiet = d
			continue
		}
		f, err := parseChaosFault(item)
		if err != nil {
			return Spec{}, fmt.Errorf("chaos: %q: %w", item, err)
		}
		spec.Faults = append(spec.Faults, f)
	}
	if len(spec.Faults) == 0 && !spec.Equivocate {
		return Spec{}, errors.New("chaos: the spec names no fault")
	}
	return spec, nil
}

// parseChaosFault parses KIND=EVERY[:LENGTH] or KIND@AT[:LENGTH].
func parseChaosFault(item string) (FaultSpec, error) {
	i := strings.IndexAny(item, "=@")
	if i < 0 {
		return FaultSpec{}, fmt.Errorf("want KIND=EVERY[:LENGTH], KIND@AT[:LENGTH] (KIND one of %s) or equivocate", kindNames())
	}
	f := FaultSpec{Kind: Kind(item[:i])}
	if !slices.Contains(Kinds, f.Kind) {
		return FaultSpec{}, fmt.Errorf("unknown fault %q: want %s", item[:i], kindNames())
	}
	when, length, hasLength := strings.Cut(item[i+1:], ":")
	d, err := time.ParseDuration(when)
	if err != nil {
		return FaultSpec{}, fmt.Errorf("%q is not a duration", when)
	}
	if item[i] == '=' {
		if d <= 0 {
			return FaultSpec{}, fmt.Errorf("the interval %v must be positive", d)
		}
		f.Every = d
	} else {
		if d < 0 {
			return FaultSpec{}, fmt.Errorf("the time %v must not be negative", d)
		}
		f.At = d
	}
	f.Length = lengthOf(f.Kind)
	if hasLength {
		if f.Length, err = time.ParseDuration(length); err != nil {
			return FaultSpec{}, fmt.Errorf("%q is not a duration", length)
		}
		if f.Length <= 0 {
			return FaultSpec{}, fmt.Errorf("the length %v must be positive", f.Length)
		}
	}
	return f, nil
}

// String spells the spec in its own syntax, every length explicit.
func (s Spec) String() string {
	var items []string
	for _, f := range s.Faults {
		if f.Every > 0 {
			items = append(items, fmt.Sprintf("%s=%v:%v", f.Kind, f.Every, f.Length))
		} else {
			items = append(items, fmt.Sprintf("%s@%v:%v", f.Kind, f.At, f.Length))
		}
	}
	if s.Equivocate {
		items = append(items, "equivocate")
	}
	return strings.Join(append(items, fmt.Sprintf("quiet=%v", s.Quiet)), ",")
}

// has says whether the spec holds a fault of this kind.
func (s Spec) Has(kind Kind) bool {
	return slices.ContainsFunc(s.Faults, func(f FaultSpec) bool { return f.Kind == kind })
}

// check says whether the spec can run on a devnet of this many nodes.
func (s Spec) Check(nodes int) error {
	if s.Has(Refill) && nodes < 3 {
		return fmt.Errorf("chaos: a refill needs at least 3 nodes (the victim, the peer stopped half-way, one to refill from), the devnet has %d", nodes)
	}
	if s.Has(Partition) && nodes < 2 {
		return fmt.Errorf("chaos: a partition needs at least 2 nodes, the devnet has %d", nodes)
	}
	if s.Equivocate && nodes < 2 {
		return fmt.Errorf("chaos: equivocate needs an honest pool beside the equivocating one, the devnet has %d", nodes)
	}
	return nil
}
