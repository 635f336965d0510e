package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPStartup measures pling mcp from spawn to the answer of the first
// tools/list on the demo site, the way an MCP host starts it: a fresh
// process on stdio that sends initialize, notifications/initialized and
// tools/list at once. It is a measurement, not a check (no threshold):
// it runs only with PLING_STARTUP=1 (make startup) and logs the times and
// the phases pling mcp --verbose reports.
func TestMCPStartup(t *testing.T) {
	if os.Getenv("PLING_STARTUP") != "1" {
		t.Skip("a measurement: run with PLING_STARTUP=1 (make startup)")
	}
	base := demoSite(t)
	bin := filepath.Join(t.TempDir(), "pling")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	extra := strings.Fields(os.Getenv("PLING_STARTUP_FLAGS"))
	args := []string{"mcp", base + "/shop/", "--poll", "0", "--verbose"}
	if os.Getenv("PLING_STARTUP_SESSION") == "1" {
		// Attach to a warm browser (pling session start) instead of
		// launching one.
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		if code, out, errs := runPling(t, "session", "start", "--name", "warm", base+"/shop/"); code != 0 {
			t.Fatalf("session start: %s%s", out, errs)
		}
		t.Cleanup(func() { runPling(t, "session", "stop", "--name", "warm") })
		args = []string{"mcp", "--session-name", "warm", "--poll", "0", "--verbose"}
	}
	const handshake = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"startup","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, bin, append(args, extra...)...)
		cmd.Env = append(os.Environ(), "PLING_CDP=")
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stdin.Write([]byte(handshake))
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var initAt, listAt time.Duration
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, `"id":1,`) {
				initAt = time.Since(start)
			}
			if strings.Contains(line, `"id":2,`) {
				listAt = time.Since(start)
				if !strings.Contains(line, "cart_add") {
					t.Errorf("tools/list without the page's tools: %s", line)
				}
				break
			}
		}
		stdin.Close()
		_ = cmd.Wait()
		cancel()
		var phases string
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(l, "start-up:") {
				phases = l
			}
		}
		t.Logf("run %d: initialize answered %v, tools/list answered %v after spawn; %s", i+1,
			initAt.Round(time.Millisecond), listAt.Round(time.Millisecond), phases)
	}
}
