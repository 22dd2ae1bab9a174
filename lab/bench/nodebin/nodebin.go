// Package nodebin builds the leiosnode binary the process benchmarks
// (throughput, sync) run as their nodes, from this module's source, so
// that a run measures the code beside it, never an installed binary.
//
// It never starts the binary.
package nodebin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Build builds this module's leiosnode into a temporary directory, which
// cleanup removes.
func Build(ctx context.Context) (exe string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "leiosbench-bin-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	exe = filepath.Join(dir, "leiosnode")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", exe, "github.com/leiosnode/leiosnode/cmd/leiosnode")
	if out, err := cmd.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("building leiosnode: %w: %s", err, out)
	}
	return exe, cleanup, nil
}
