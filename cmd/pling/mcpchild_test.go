package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/internal/testing/mcptest"
	"github.com/pling-go/pling/internal/testing/npmtest"
	"github.com/pling-go/pling/internal/testing/syncbuf"
)

// The tests that prove pling mcp as an MCP host runs it start the pling
// binary as a child process, an MCP server over its stdio, with the
// official Go SDK's client on it; this file is that one way.

// buildPling builds the pling command into a scratch folder and returns
// its path: the binary a user runs, not this test binary.
func buildPling(t testing.TB) string {
	t.Helper()
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "pling")
	if goruntime.GOOS == "windows" {
		bin += ".exe"
	}
	if out, err := exec.Command(gotool, "build", "-o", bin, "github.com/pling-go/pling/cmd/pling").CombinedOutput(); err != nil {
		t.Fatalf("go build pling: %v\n%s", err, out)
	}
	return bin
}

// plingProcess is the pling binary running as a child process, an MCP
// server over its stdio, with the official Go SDK's client on it, as an
// MCP host runs it. listChanged counts the tools/list_changed
// notifications the client got.
type plingProcess struct {
	cs     *sdk.ClientSession
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer

	mu          sync.Mutex
	listChanged int
}

// startPlingProcess runs bin with args, env added to this process's
// environment, and connects the client to it.
func startPlingProcess(t *testing.T, bin string, env []string, args ...string) *plingProcess {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return connectPling(t, cmd)
}

// connectPling starts cmd, a pling mcp not yet started, and connects the
// client to its stdio; its stderr is kept, and shown when the test
// failed. When the test ends the client is closed, which ends the
// process.
func connectPling(t *testing.T, cmd *exec.Cmd) *plingProcess {
	t.Helper()
	pp := &plingProcess{cmd: cmd}
	c := sdk.NewClient(&sdk.Implementation{Name: "pling-test", Version: "0"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			pp.mu.Lock()
			pp.listChanged++
			pp.mu.Unlock()
		},
	})
	pp.cs, pp.stderr = mcptest.Child(t, context.Background(), "pling mcp", c, cmd, nil)
	return pp
}

// changes is how many tools/list_changed notifications came so far.
func (pp *plingProcess) changes() int {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return pp.listChanged
}

// quiet waits until no notification came for a second (at most 20 s)
// and returns how many came in all.
func (pp *plingProcess) quiet() int {
	n := pp.changes()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		time.Sleep(time.Second)
		m := pp.changes()
		if m == n {
			return m
		}
		n = m
	}
	return n
}

func (pp *plingProcess) list(t *testing.T) []*sdk.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := pp.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	return res.Tools
}

// waitTool lists the tools until name is among them (at most 30 s).
func (pp *plingProcess) waitTool(t *testing.T, name string) map[string]*sdk.Tool {
	t.Helper()
	var names []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		byName := map[string]*sdk.Tool{}
		names = names[:0]
		for _, tl := range pp.list(t) {
			byName[tl.Name] = tl
			names = append(names, tl.Name)
		}
		if byName[name] != nil {
			return byName
		}
	}
	t.Fatalf("tools/list never had %s; last: %v", name, names)
	return nil
}

// call calls a tool and returns its text and result; an error of the
// protocol ends the test.
func (pp *plingProcess) call(t *testing.T, name string, args map[string]any) (string, *sdk.CallToolResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := pp.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return mcptest.Text(res), res
}

// callText calls a tool on cs and returns its text and whether it
// succeeded; an error of the protocol is its message, and false.
func callText(cs *sdk.ClientSession, name string, args map[string]any) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err.Error(), false
	}
	return mcptest.Text(res), !res.IsError
}

// eachWebMCP runs f as two subtests: "native", where pling mcp's own
// browser has WebMCP (polyfill and env nil), and "polyfill", where a
// browser without it runs the page (env has pling mcp use it), so the
// page's model context is the polyfill's (@mcp-b/webmcp-polyfill, whose
// script is polyfill) if the page loads it.
func eachWebMCP(t *testing.T, f func(t *testing.T, polyfill []byte, env []string)) {
	t.Run("native", func(t *testing.T) { f(t, nil, nil) })
	t.Run("polyfill", func(t *testing.T) { f(t, npmtest.WebMCPPolyfill(t), browserWithoutWebMCP(t)) })
}

// browserWithoutWebMCP starts a Chromium whose pages have no native
// WebMCP (pling mcp's own browser turns it on) for as long as the test
// runs, and returns the environment that has pling mcp use it.
func browserWithoutWebMCP(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	b, err := cdp.Start(ctx, "about:blank", cdp.Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return []string{"PLING_CDP=" + b.Endpoint()}
}
