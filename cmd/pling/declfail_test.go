package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/internal/testing/demotest"
)

// failingPage declares one records reader that throws (its data is not
// loaded yet), one whose rows are spelled {ID: …}, a state reader that
// throws and an availability check that throws, beside an action that
// works.
const failingPage = `<!doctype html><title>Orders</title>
<script src="/pling/pling.js" data-expose="*"></script>
<script>
  const run = () => true;
  pling.action({ id: "refresh", title: "Refresh the orders", run });
  pling.action({ id: "pay", title: "Pay", record: { kind: "order" }, run });
  pling.action({ id: "export", title: "Export", available: () => { throw new TypeError("stock is not defined"); }, run });
  pling.records("order", () => { throw new Error("orders not loaded yet"); });
  pling.records("parcel", () => [{ ID: "p1", label: "Parcel 1" }]);
  pling.state("total", () => { throw new Error("cart is undefined"); });
</script>`

// TestFailingDeclarationCommands: through the pling binary, a page whose
// records reader, state reader and availability check fail is still a
// page: pling check exits 1 naming each failure with the page's text, and
// pling mcp (a child process, the Go SDK's client on its stdio) lists the
// working tool, and browser.page names the failures.
func TestFailingDeclarationCommands(t *testing.T) {
	browserTest(t)
	d := demotest.Dist(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	base, _ := serveDirForTest(t, writeTree(t, map[string]string{"orders.html": failingPage}), d)
	page := base + "/orders.html"
	bin := filepath.Join(t.TempDir(), "pling")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	t.Run("pling check", func(t *testing.T) {
		cmd := exec.CommandContext(ctx, bin, "check", page)
		cmd.Env = append(os.Environ(), "PLING_CDP=")
		out, err := cmd.Output()
		var exit *exec.ExitError
		if err == nil || !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("pling check: %v, want exit 1\n%s", err, out)
		}
		for _, want := range []string{
			`records "order": the reader failed (the page says: orders not loaded yet)`,
			`records "parcel": the reader failed (the page says: Row: member "ID" is spelled "id")`,
			`state "total": the reader failed (the page says: cart is undefined)`,
			`action "export": its availability check throws (the page says: stock is not defined)`,
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("pling check printed no %q:\n%s", want, out)
			}
		}
	})

	t.Run("pling mcp", func(t *testing.T) {
		cmd := exec.Command(bin, "mcp", page, "--poll", "0")
		cmd.Env = append(os.Environ(), "PLING_CDP=")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr.String())
		}
		defer cs.Close()
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("tools/list: %v\n%s", err, stderr.String())
		}
		var names []string
		for _, tl := range tools.Tools {
			names = append(names, tl.Name)
		}
		list := " " + strings.Join(names, " ") + " "
		for _, want := range []string{"refresh", "browser.page"} {
			if !strings.Contains(list, " "+want+" ") {
				t.Errorf("tools %v, want %s among them", names, want)
			}
		}
		for _, not := range []string{"order", "parcel", "total"} {
			if strings.Contains(list, " "+not+" ") {
				t.Errorf("tools %v: a failed declaration %q is listed as a tool", names, not)
			}
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "browser.page", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("browser.page: %v %+v\n%s", err, res, stderr.String())
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		for _, want := range []string{"orders not loaded yet", "cart is undefined", "stock is not defined"} {
			if !strings.Contains(text.String(), want) {
				t.Errorf("browser.page does not name %q:\n%s", want, text.String())
			}
		}
		res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "refresh", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Errorf("refresh: %v %+v", err, res)
		}
	})
}
