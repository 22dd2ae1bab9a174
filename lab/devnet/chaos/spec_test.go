package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/lab/devnet/layout"
)

func TestParseChaosSpec(t *testing.T) {
	tests := []struct {
		spec string
		want string // Spec.String, or the error's text
		err  bool
	}{
		{spec: "default", want: "kill=40s:2s,freeze=1m0s:8s,partition=1m15s:5s,quiet=30s"},
		{spec: "kill=30s,freeze=60s:10s,partition=90s:5s", want: "kill=30s:2s,freeze=1m0s:10s,partition=1m30s:5s,quiet=30s"},
		{spec: " kill@5s:1s , freeze@10s, partition@15s:3s,quiet=0s ", want: "kill@5s:1s,freeze@10s:5s,partition@15s:3s,quiet=0s"},
		{spec: "kill=10s,kill@3s:500ms", want: "kill=10s:2s,kill@3s:500ms,quiet=30s"},
		{spec: "partition@0s", want: "partition@0s:5s,quiet=30s"},
		{spec: "equivocate", want: "equivocate,quiet=30s"},
		{spec: "kill=30s,equivocate", want: "kill=30s:2s,equivocate,quiet=30s"},
		// The attacks: 45 s unless told.
		{spec: "http-unread@60s:45s,http-slow-upload@2m,cip-junk@3m:20s", want: "http-unread@1m0s:45s,http-slow-upload@2m0s:45s,cip-junk@3m0s:20s,quiet=30s"},
		{spec: "cip-violation@1m,fetch-unread@2m:1m,fetch-not-held=90s", want: "cip-violation@1m0s:45s,fetch-unread@2m0s:1m0s,fetch-not-held=1m30s:45s,quiet=30s"},

		{spec: "", want: "empty spec", err: true},
		{spec: "quiet=10s", want: "names no fault", err: true},
		{spec: "kill", want: "want KIND=EVERY[:LENGTH]", err: true},
		{spec: "reboot=10s", want: `unknown fault "reboot"`, err: true},
		{spec: "http-flood@10s", want: `unknown fault "http-flood": want kill, freeze, partition, starve, refill, http-unread, http-slow-upload, cip-junk, cip-violation, fetch-unread or fetch-not-held`, err: true},
		{spec: "kill=10", want: `"10" is not a duration`, err: true},
		{spec: "kill=0s", want: "must be positive", err: true},
		{spec: "kill@-1s", want: "must not be negative", err: true},
		{spec: "freeze=10s:0s", want: "length 0s must be positive", err: true},
		{spec: "freeze=10s:x", want: `"x" is not a duration`, err: true},
		{spec: "kill=10s,quiet=soon", want: "quiet wants a duration", err: true},
		{spec: "kill=10s,,freeze=5s", want: "want KIND=EVERY", err: true},
	}
	for _, tt := range tests {
		s, err := ParseSpec(tt.spec)
		switch {
		case tt.err && err == nil:
			t.Errorf("%q: parsed as %s, want an error with %q", tt.spec, s, tt.want)
		case tt.err && !strings.Contains(err.Error(), tt.want):
			t.Errorf("%q: error %q, want one with %q", tt.spec, err, tt.want)
		case !tt.err && err != nil:
			t.Errorf("%q: %v", tt.spec, err)
		case !tt.err && s.String() != tt.want:
			t.Errorf("%q: parsed as %s, want %s", tt.spec, s, tt.want)
		}
		if err == nil {
			// What String spells parses back to the same spec.
			again, err := ParseSpec(s.String())
			if err != nil || again.String() != s.String() {
				t.Errorf("%q: %s parses back as %s, %v", tt.spec, s, again, err)
			}
		}
	}
}

func TestChaosSpecCheck(t *testing.T) {
	s, _ := ParseSpec("kill=10s,partition=20s")
	if err := s.Check(1); err == nil || !strings.Contains(err.Error(), "at least 2 nodes") {
		t.Errorf("a partition of one node: %v", err)
	}
	if err := s.Check(2); err != nil {
		t.Error(err)
	}
	k, _ := ParseSpec("kill=10s,freeze=10s")
	if err := k.Check(1); err != nil || k.Has(Partition) || !k.Has(Freeze) {
		t.Errorf("kills and freezes of one node: %v", err)
	}
}

func TestPartitionNote(t *testing.T) {
	tmpl, err := layout.LoadTemplate("")
	if err != nil {
		t.Fatal(err)
	}
	g := tmpl.Genesis() // 100 ms slots, f = 0.1, k = 10
	if note := partitionNote(g, 3, 5*time.Second); !strings.Contains(note, "about 1.7 blocks on its side and 3.4 on the other") || !strings.HasSuffix(note, "it heals by itself") {
		t.Errorf("5 s: %s", note)
	}
	if note := partitionNote(g, 3, time.Minute); !strings.Contains(note, "may never heal") {
		t.Errorf("a minute: %s", note)
	}
}
