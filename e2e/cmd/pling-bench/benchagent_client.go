package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/internal/testing/mcptest"
)

// agentMeter is what one side of the agent benchmark spent on one task:
// tool calls and the bytes their results carried to the agent (text
// content plus structuredContent, as the client received it), and apart
// from them the bytes of what the agent reads before and between calls:
// the server's instructions and every tool list it fetched (its tools'
// definitions as JSON). The bytes the targets judge are both together:
// all that the agent received.
type agentMeter struct {
	Calls     int      `json:"calls"`
	Bytes     int      `json:"bytes"`
	ListBytes int      `json:"toolListBytes"`
	Servers   int      `json:"servers"`
	Trace     []string `json:"trace"`
	// ListChanged counts the notifications/tools/list_changed the agent
	// received; Navigations the calls that took the tab to another page
	// (browser.open, browser.back, or a result that says it navigated).
	ListChanged int `json:"listChanged"`
	Navigations int `json:"navigations"`
}

// mcpServer is one MCP server spawned over stdio and its client session,
// the official Go SDK's client for both sides.
type mcpServer struct {
	cs    *sdk.ClientSession
	meter *agentMeter
	tools map[string]*sdk.Tool
	// wire is the tools array of the last tools/list answer as it came
	// over the transport: what the agent received, which the SDK's
	// client would write differently if asked to encode what it decoded
	// (it writes readOnlyHint and idempotentHint on every annotated tool).
	wire *atomic.Pointer[json.RawMessage]
	// changed: the server sent notifications/tools/list_changed since
	// the agent last listed (the WebMCP side lists again then).
	changed *atomic.Bool
	// changes counts the notifications not yet added to meter.
	changes *atomic.Int32
}

// toolResult is a tool result as the agent reads it.
type toolResult struct {
	Text       string
	Structured json.RawMessage
	IsError    bool
}

// spawnMCP starts cmd as an MCP server and lists its tools.
func spawnMCP(ctx context.Context, cmd *exec.Cmd, m *agentMeter) (*mcpServer, error) {
	s, err := connectMCP(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd.Path, err)
	}
	return s, nil
}

// connectMCP connects the agent's client to a server over t, counts it,
// and lists its tools.
func connectMCP(ctx context.Context, t sdk.Transport, m *agentMeter) (*mcpServer, error) {
	changed, changes := new(atomic.Bool), new(atomic.Int32)
	c := sdk.NewClient(&sdk.Implementation{Name: "pling-bench-agent", Version: "0"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed.Store(true); changes.Add(1) }})
	wire := new(atomic.Pointer[json.RawMessage])
	cs, err := c.Connect(ctx, mcptest.Tools{Transport: t, Last: wire}, nil)
	if err != nil {
		return nil, err
	}
	m.Servers++
	if ir := cs.InitializeResult(); ir != nil {
		m.ListBytes += len(ir.Instructions)
		dumpAgent("instructions", []byte(ir.Instructions))
	}
	s := &mcpServer{cs: cs, meter: m, changed: changed, changes: changes, wire: wire}
	if err := s.listTools(ctx); err != nil {
		cs.Close()
		return nil, err
	}
	return s, nil
}

func (s *mcpServer) close() {
	s.countChanges()
	_ = s.cs.Close()
}

// countChanges adds the notifications received since the last count to
// the meter.
func (s *mcpServer) countChanges() { s.meter.ListChanged += int(s.changes.Swap(0)) }

func (s *mcpServer) listTools(ctx context.Context) error {
	res, err := s.cs.ListTools(ctx, &sdk.ListToolsParams{})
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	b, _ := json.Marshal(res.Tools)
	if w := s.wire.Swap(nil); w != nil {
		b = *w
	}
	s.meter.ListBytes += len(b)
	s.countChanges()
	dumpAgent("tools/list", b)
	s.tools = make(map[string]*sdk.Tool, len(res.Tools))
	for _, t := range res.Tools {
		s.tools[t.Name] = t
	}
	return nil
}

// call is one tool call the agent makes: counted, its result measured.
func (s *mcpServer) call(ctx context.Context, name string, args map[string]any) (toolResult, error) {
	s.meter.Calls++
	r, err := s.rawCall(ctx, name, args)
	s.meter.Bytes += len(r.Text) + len(r.Structured)
	s.meter.Trace = append(s.meter.Trace, fmt.Sprintf("%s %s → %d B", name, compactArgs(args), len(r.Text)+len(r.Structured)))
	if name == "browser.open" || name == "browser.back" || bytes.Contains(r.Structured, []byte(`"navigatedTo":`)) {
		s.meter.Navigations++
	}
	s.countChanges()
	dumpAgent("call "+name+" "+compactArgs(args)+" text", []byte(r.Text))
	dumpAgent("call "+name+" structuredContent", r.Structured)
	return r, err
}

// personCall is a call the bench makes as the person (answering a bank's
// window on the Playwright side): neither counted nor measured.
func (s *mcpServer) personCall(ctx context.Context, name string, args map[string]any) (toolResult, error) {
	return s.rawCall(ctx, name, args)
}

func (s *mcpServer) rawCall(ctx context.Context, name string, args map[string]any) (toolResult, error) {
	cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	res, err := s.cs.CallTool(cctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return toolResult{}, fmt.Errorf("%s: %w", name, err)
	}
	r := toolResult{Text: mcptest.Text(res), IsError: res.IsError}
	if res.StructuredContent != nil {
		r.Structured, _ = json.Marshal(res.StructuredContent)
	}
	return r, nil
}

func compactArgs(args map[string]any) string {
	if len(args) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(args)
	return string(b)
}

// refLine matches one node of a Playwright snapshot: its role, its
// quoted name and its ref ("- button "Approve order #1250" [ref=e2491]").
var refLine = regexp.MustCompile(`^\s*-\s+'?([a-z]+) "((?:[^"\\]|\\.)*)"(?: \[[^\]]*\])*? \[ref=([a-z0-9]+)\]`)

// findRef reads a snapshot (or browser_find's excerpt) the way an agent
// does: the ref of the node with this role and exactly this name.
func findRef(snapshot, role, name string) (string, bool) {
	for _, line := range strings.Split(snapshot, "\n") {
		m := refLine.FindStringSubmatch(line)
		if m != nil && m[1] == role && unquoteYAML(m[2]) == name {
			return m[3], true
		}
	}
	return "", false
}

func unquoteYAML(s string) string { return strings.ReplaceAll(s, `\"`, `"`) }

// rowHas says whether the table row whose first cell is first also has a
// cell named cell, in a snapshot: the lines after that cell up to the
// next row.
func rowHas(snapshot, first, cell string) bool {
	return rowWith(snapshot, `cell "`+first+`"`, cell)
}

// rowWith says whether, in a snapshot, a line containing marker is
// followed, before the next row, by a cell named cell.
func rowWith(snapshot, marker, cell string) bool {
	lines := strings.Split(snapshot, "\n")
	for i, line := range lines {
		if !strings.Contains(line, marker) {
			continue
		}
		for _, l := range lines[i+1:] {
			if strings.Contains(l, "- row") {
				break
			}
			if strings.Contains(l, `cell "`+cell+`"`) {
				return true
			}
		}
	}
	return false
}

// agentDump, when --dump names a file, receives every instruction, tool
// list and tool result the agent read, as it read them, to see where the
// bytes go.
var (
	agentDumpMu sync.Mutex
	agentDump   io.Writer
)

func dumpAgent(what string, b []byte) {
	agentDumpMu.Lock()
	defer agentDumpMu.Unlock()
	if agentDump != nil {
		fmt.Fprintf(agentDump, "=== %s (%d B)\n%s\n", what, len(b), b)
	}
}
