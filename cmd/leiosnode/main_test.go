package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// asCLIEnv makes the test binary stand in for leiosnode: the devnet starts
// its nodes with os.Executable, which in a test is the test binary, so the
// process tests need no separate build.
//
//	asCLIEnv=cli   the binary itself (main)
//	asCLIEnv=fake  a fake `run --config PATH` that behaves as PATH's base
//	               name says: polite (exits on SIGTERM), stubborn (ignores
//	               it), failing (exits with status 3 at once)
const asCLIEnv = "LEIOSNODE_TEST_AS_CLI"

func TestMain(m *testing.M) {
	switch os.Getenv(asCLIEnv) {
	case "cli":
		main()
		os.Exit(0)
	case "fake":
		os.Exit(fakeNode(filepath.Base(os.Args[len(os.Args)-1])))
	}
	os.Exit(m.Run())
}

func fakeNode(behavior string) int {
	switch behavior {
	case "polite":
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		fmt.Println("ready")
		<-ctx.Done()
		return 0
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		time.Sleep(time.Minute) // the test kills it long before
		return 0
	default:
		fmt.Println("failing on purpose")
		return 3
	}
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
