package main

import (
	"context"
	"os"
	"testing"

	"github.com/pling-go/pling/internal/testing/pgtest"
)

// asPlingEnv makes the test binary run as the pling command (run with its
// arguments) instead of the tests: how a test starts a real pling process
// it can SIGKILL, without building the binary.
const asPlingEnv = "PLING_TEST_AS_PLING"

// TestMain runs the binary as pling when asked to (asPlingEnv), else the
// tests, then stops the package's throwaway PostgreSQL.
func TestMain(m *testing.M) {
	if os.Getenv(asPlingEnv) == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(pgtest.Run(m))
}
