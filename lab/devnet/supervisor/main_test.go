package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// asCLIEnv=fake makes the test binary stand in for the leiosnode binary the
// devnet starts its nodes with, so the process tests need no separate
// build: a fake `run --config PATH` that behaves as PATH's base name says:
// polite (exits on SIGTERM), stubborn (ignores it), failing (exits with
// status 3 at once).
const asCLIEnv = "LEIOSNODE_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLIEnv) == "fake" {
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
