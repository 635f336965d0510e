package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// startupHandshake is what an MCP host sends a fresh pling mcp at once:
// initialize, notifications/initialized and tools/list.
const startupHandshake = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"startup","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`

// startupRun is one start of pling mcp the way an MCP host starts it: a
// fresh process on stdio given the handshake. It returns when initialize
// and tools/list were answered after spawn, the tools/list line and the
// start-up phases pling mcp --verbose reported.
type startupRun struct {
	initAt, listAt time.Duration
	list, phases   string
}

// startupSetup builds pling and serves the demo site (or, with
// PLING_STARTUP_SESSION=1, starts a warm browser session on it) and
// returns the command line of pling mcp.
func startupSetup(t testing.TB) (bin string, args []string) {
	t.Helper()
	base := demoSite(t)
	bin = buildPling(t)
	args = append([]string{"mcp", base + "/shop/", "--poll", "0", "--verbose"}, strings.Fields(os.Getenv("PLING_STARTUP_FLAGS"))...)
	return bin, args
}

func startupOnce(t testing.TB, bin string, args []string) startupRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "PLING_CDP=")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Write([]byte(startupHandshake))
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var r startupRun
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `"id":1,`) {
			r.initAt = time.Since(start)
		}
		if strings.Contains(line, `"id":2,`) {
			r.listAt = time.Since(start)
			r.list = line
			break
		}
	}
	stdin.Close()
	_ = cmd.Wait()
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "start-up:") {
			r.phases = l
		}
	}
	return r
}

// TestMCPStartup starts pling mcp on the demo site the way an MCP host
// does and checks what it answers: initialize, then a tools/list with the
// page's tools, and the start-up phases --verbose reports. How long that
// takes is a measurement, not a check (no timing threshold in a test):
// BenchmarkMCPStartup (make startup) measures it.
func TestMCPStartup(t *testing.T) {
	bin, args := startupSetup(t)
	r := startupOnce(t, bin, args)
	if r.initAt == 0 {
		t.Fatal("initialize was not answered")
	}
	if !strings.Contains(r.list, "cart_add") {
		t.Errorf("tools/list without the page's tools: %s", r.list)
	}
	if !strings.Contains(r.phases, "start-up:") {
		t.Errorf("--verbose reported no start-up phases")
	}
	t.Logf("initialize answered %v, tools/list answered %v after spawn; %s",
		r.initAt.Round(time.Millisecond), r.listAt.Round(time.Millisecond), r.phases)
}

// BenchmarkMCPStartup measures pling mcp from spawn to the answer of the
// first tools/list on the demo site (make startup), and reports the time
// to the initialize answer too. With PLING_STARTUP_SESSION=1 it attaches
// to a warm browser (pling session start) instead of launching one.
func BenchmarkMCPStartup(b *testing.B) {
	if testing.Short() {
		b.Skip("starts Chromium: not in -short mode")
	}
	bin, args := startupSetup(b)
	if os.Getenv("PLING_STARTUP_SESSION") == "1" {
		b.Setenv("XDG_CACHE_HOME", b.TempDir())
		url := args[1]
		var out, errs bytes.Buffer
		if code := run(context.Background(), []string{"session", "start", "--name", "warm", url}, &out, &errs); code != 0 {
			b.Fatalf("session start: %s%s", out.String(), errs.String())
		}
		b.Cleanup(func() { run(context.Background(), []string{"session", "stop", "--name", "warm"}, &out, &errs) })
		args = []string{"mcp", "--session-name", "warm", "--poll", "0", "--verbose"}
	}
	var init time.Duration
	b.ResetTimer()
	for range b.N {
		r := startupOnce(b, bin, args)
		if !strings.Contains(r.list, "cart_add") {
			b.Fatalf("tools/list without the page's tools: %s", r.list)
		}
		init += r.initAt
	}
	b.ReportMetric(float64(init.Milliseconds())/float64(b.N), "ms-to-initialize/op")
}
