package main

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// asCLIEnv=cli makes the test binary stand in for leiosnode: the devnet
// starts its nodes with os.Executable, which in a test is the test binary,
// so the end-to-end tests need no separate build.
const asCLIEnv = "LEIOSNODE_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLIEnv) == "cli" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// execute runs the CLI in-process with args and returns its output.
func execute(ctx context.Context, args ...string) (string, error) {
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return out.String(), err
}
