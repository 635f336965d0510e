package e2e

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// stagehandVersion is the Stagehand SDK the tests drive as a WebMCP
// consumer, the version docs/page-api.md names.
const stagehandVersion = "4.4.0"

// stagehandDriver is the Node script that drives Stagehand's programmatic
// WebMCP API (page.tools, tool.invoke, invocation.result) for the test, one
// JSON command a line: the API a Stagehand user calls, with no model.
//
//go:embed testdata/stagehand/webmcp-driver.mjs
var stagehandDriver []byte

// stagehandConsumer is Stagehand as a WebMCP consumer. Stagehand works
// through its own browser extension, which it loads into the browser over
// DevTools (Extensions.loadUnpacked) and whose service worker then opens a
// DevTools connection of its own to the browser: the browser must allow
// extensions, their loading over DevTools and that connection's origin
// (chrome-extension://…), which the others' browsers need not.
var stagehandConsumer = webmcpConsumerKind{"stagehand", startStagehand, []chromedp.ExecAllocatorOption{
	chromedp.Flag("disable-extensions", false),
	chromedp.Flag("enable-unsafe-extension-debugging", true),
	chromedp.Flag("remote-allow-origins", "*"),
}, true}

// startStagehand runs the Stagehand driver attached to the browser at its
// debugging address (http://host:port; localBrowser.connect). It opens a
// page in a new tab and waits for its load event (goto's default,
// DOMContentLoaded, may come before a Pling page's mirror registered its
// tools: in 1 of 3 runs at load 10 the first look found none). It offers a
// page's tools as page.tools() lists them, with the annotations Stagehand
// keeps (readOnly, untrustedContent, autosubmit: no consequential hint), and
// a call's answer is the invocation's result as Stagehand returns it
// (status, output, errorText, exception), as JSON.
func startStagehand(t *testing.T, ctx context.Context, browser string) *webmcpConsumer {
	node, dir := npmPackage(t, "@browserbasehq/stagehand", stagehandVersion)
	// Beside the test's node_modules, so that the script imports it.
	script := filepath.Join(dir, "pling-webmcp-driver.mjs")
	if err := os.WriteFile(script, stagehandDriver, 0o644); err != nil {
		t.Fatal(err)
	}
	// Stagehand speaks DevTools over the global WebSocket, which Node
	// before 22 has only behind a flag.
	argv := []string{script, browser}
	if out, _ := exec.Command(node, "-p", "typeof WebSocket").Output(); strings.TrimSpace(string(out)) != "function" {
		argv = append([]string{"--experimental-websocket"}, argv...)
	}
	cmd := exec.Command(node, argv...)
	cmd.Dir = t.TempDir()
	logs, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logs
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the Stagehand driver: %v", err)
	}
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	t.Cleanup(func() {
		// Closing stdin ends the driver, which closes Stagehand and
		// leaves the browser to the test.
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logs.Close()
		if t.Failed() {
			if b, _ := os.ReadFile(logs.Name()); len(b) > 0 {
				t.Logf("the Stagehand driver's stderr:\n%s", b)
			}
		}
	})
	read := func(ctx context.Context) ([]byte, error) {
		select {
		case l, ok := <-lines:
			if !ok {
				return nil, fmt.Errorf("the Stagehand driver ended: %w", io.ErrUnexpectedEOF)
			}
			return l, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// Stagehand is ready once its extension runs in the browser.
	if l, err := read(ctx); err != nil || string(l) != `{"ready":true}` {
		t.Fatalf("the Stagehand driver did not start: %s, %v", l, err)
	}
	// One command at a time, each with its id: the answer to a command
	// whose caller stopped waiting is skipped when it comes.
	var mu sync.Mutex
	id := 0
	do := func(ctx context.Context, cmd map[string]any, out any) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		id++
		cmd["id"] = id
		b, _ := json.Marshal(cmd)
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			return nil, err
		}
		var l []byte
		var failed struct {
			ID    int
			Error *string
		}
		for failed.ID != id {
			var err error
			if l, err = read(ctx); err != nil {
				return nil, err
			}
			if err := json.Unmarshal(l, &failed); err != nil {
				return l, fmt.Errorf("the Stagehand driver answered %s: %w", l, err)
			}
		}
		if failed.Error != nil {
			return l, fmt.Errorf("stagehand: %s", *failed.Error)
		}
		return l, json.Unmarshal(l, out)
	}
	c := &webmcpConsumer{}
	c.open = func(ctx context.Context, url string) error {
		_, err := do(ctx, map[string]any{"op": "open", "url": url}, &struct{}{})
		return err
	}
	c.tools = func(ctx context.Context) (map[string]toolHints, error) {
		var res struct {
			Tools []struct {
				Name        string
				Annotations struct{ ReadOnly bool }
			}
		}
		if _, err := do(ctx, map[string]any{"op": "tools"}, &res); err != nil {
			return nil, err
		}
		tools := map[string]toolHints{}
		for _, tool := range res.Tools {
			tools[tool.Name] = toolHints{ReadOnly: tool.Annotations.ReadOnly}
		}
		return tools, nil
	}
	c.call = func(ctx context.Context, tool string, args map[string]any) (string, error) {
		var res struct {
			Status, ErrorText string
			Output            json.RawMessage
		}
		l, err := do(ctx, map[string]any{"op": "call", "tool": tool, "args": args}, &res)
		if err != nil {
			return string(l), err
		}
		return string(l), webmcpFailed(tool, res.Status, res.Output, res.ErrorText)
	}
	return c
}
