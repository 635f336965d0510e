package mcptest

import (
	"context"
	"os/exec"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/internal/testing/syncbuf"
)

// Child runs cmd, an MCP server on stdio not started yet (pling mcp, a
// consumer's server), and connects c to it within a minute of ctx. The
// server's stderr is kept in the buffer it returns and logged, under
// name, when the test failed; the session is closed when the test ends,
// which ends the process.
func Child(t testing.TB, ctx context.Context, name string, c *sdk.Client, cmd *exec.Cmd, opts *sdk.ClientSessionOptions) (*sdk.ClientSession, *syncbuf.Buffer) {
	t.Helper()
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cs, err := c.Connect(cctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, opts)
	if err != nil {
		t.Fatalf("starting %s: %v (stderr: %s)", name, err, stderr.String())
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if t.Failed() {
			t.Logf("%s's stderr:\n%s", name, stderr.String())
		}
	})
	return cs, stderr
}
