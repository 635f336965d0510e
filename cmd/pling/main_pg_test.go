package main

import (
	"os"
	"testing"

	"github.com/pling-go/pling/internal/pgtest"
)

// TestMain stops the package's throwaway PostgreSQL after the tests.
func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
