//go:build unix

// Package browsertest is test support for tests that drive Chromium and
// need to see or end the browser process they started (a browser that
// dies under an agent). It reads /proc, so it finds browsers on Linux.
// Product code must not import it (e2e's TestTestSupport checks that).
package browsertest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Children lists the pids of this process's child browsers.
func Children() []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", os.Getpid()))
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(s)
			if err != nil {
				continue
			}
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			if strings.Contains(string(comm), "chrom") {
				out = append(out, pid)
			}
		}
	}
	return out
}

// Kill kills the browser the test started (a child of this process that
// is not in before, what Children listed before the start) by its pid,
// and waits until it is gone.
func Kill(t testing.TB, before []int) {
	t.Helper()
	var pid int
	for _, p := range Children() {
		if !slices.Contains(before, p) {
			pid = p
		}
	}
	if pid == 0 {
		t.Fatal("found no browser process started by this test")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err != nil || strings.Contains(string(st), ") Z ") {
			time.Sleep(200 * time.Millisecond) // chromedp notices the lost pipe
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("browser %d did not die", pid)
}
