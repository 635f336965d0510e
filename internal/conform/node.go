package conform

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
)

// Node runs fixture pages in pling.wasm under Node, through
// js-shim/conform-host.js: one node process, JSON lines on its stdin and
// stdout. The module is the very file the browser loads.
type Node struct {
	// Script is the path of js-shim/conform-host.js.
	Script string
	// Dist is the directory with the test module (Module) and wasm_exec.js.
	Dist string
	// Node is the node binary; default "node".
	Node string

	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
}

// Name implements Host.
func (n *Node) Name() string { return "node" }

func (n *Node) start() error {
	if n.cmd != nil {
		return nil
	}
	bin := n.Node
	if bin == "" {
		bin = "node"
	}
	cmd := exec.Command(bin, n.Script, n.Dist, Module)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("node host: %w", err)
	}
	n.cmd, n.stdin, n.stdout = cmd, stdin, bufio.NewReaderSize(stdout, 1<<20)
	var hello struct {
		OK    bool   `json:"ok"`
		Value string `json:"value"`
	}
	line, err := n.stdout.ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &hello) != nil || hello.Value != "ready" {
		n.Close()
		return fmt.Errorf("node host did not start: %v %s", err, line)
	}
	return nil
}

// Close stops the node process.
func (n *Node) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return nil
	}
	n.stdin.Close()
	err := n.cmd.Wait()
	n.cmd = nil
	return err
}

// call sends one command and reads its answer.
func (n *Node) call(cmd map[string]any) (json.RawMessage, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.start(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	if _, err := n.stdin.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	line, err := n.stdout.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("node host: %w", err)
	}
	var r struct {
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
		Error string          `json:"error"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("node host: bad answer %q", line)
	}
	if !r.OK {
		return nil, errors.New(r.Error)
	}
	return r.Value, nil
}

// Load implements Host.
func (n *Node) Load(_ context.Context, page json.RawMessage) (Page, error) {
	v, err := n.call(map[string]any{"op": "load", "page": string(page)})
	if err != nil {
		return nil, err
	}
	var id int
	if err := json.Unmarshal(v, &id); err != nil {
		return nil, err
	}
	return &bridgePage{id: id, call: n.call}, nil
}

// bridgePage is a fixture page behind the module's fixture entry, reached
// through a call function (node's JSON lines, or wazero in process).
type bridgePage struct {
	id   int
	call func(cmd map[string]any) (json.RawMessage, error)
}

func (p *bridgePage) str(op string, extra map[string]any) (string, error) {
	cmd := map[string]any{"op": op, "page": p.id}
	for k, v := range extra {
		cmd[k] = v
	}
	v, err := p.call(cmd)
	if err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	return s, nil
}

// Handle sends the request as bytes, never as a string: a JS string
// cannot hold bytes that are not UTF-8, and the case's exact bytes must
// reach the module on every host.
func (p *bridgePage) Handle(_ context.Context, req []byte) ([]byte, error) {
	if req == nil {
		req = []byte{} // base64 "", not JSON null
	}
	s, err := p.str("handle", map[string]any{"bytes": req})
	return []byte(s), err
}

func (p *bridgePage) Advance(_ context.Context, ms int64) error {
	_, err := p.call(map[string]any{"op": "advance", "page": p.id, "ms": ms})
	return err
}

func (p *bridgePage) Calls(context.Context) (map[string]int, error) {
	s, err := p.str("calls", nil)
	if err != nil {
		return nil, err
	}
	var m map[string]int
	return m, json.Unmarshal([]byte(s), &m)
}

func (p *bridgePage) Declare(_ context.Context, d json.RawMessage) (json.RawMessage, error) {
	s, err := p.str("declare", map[string]any{"text": string(d)})
	return json.RawMessage(s), err
}

func (p *bridgePage) Dispose(_ context.Context, ids json.RawMessage) error {
	_, err := p.call(map[string]any{"op": "dispose", "page": p.id, "text": string(ids)})
	return err
}

func (p *bridgePage) CallTool(_ context.Context, c ToolCall) ([]byte, error) {
	b, _ := json.Marshal(c)
	s, err := p.str("callTool", map[string]any{"text": string(b)})
	return []byte(s), err
}

func (p *bridgePage) Close() error {
	_, err := p.call(map[string]any{"op": "close", "page": p.id})
	return err
}
