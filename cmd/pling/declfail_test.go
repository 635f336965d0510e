package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
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
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	page := servePage(t, "orders.html", failingPage)
	bin := buildPling(t)

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
		pp := startPlingProcess(t, bin, []string{"PLING_CDP="}, "mcp", page, "--poll", "0")
		var names []string
		for _, tl := range pp.list(t) {
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
		text, res := pp.call(t, "browser.page", map[string]any{})
		if res.IsError {
			t.Fatalf("browser.page: %s", text)
		}
		for _, want := range []string{"orders not loaded yet", "cart is undefined", "stock is not defined"} {
			if !strings.Contains(text, want) {
				t.Errorf("browser.page does not name %q:\n%s", want, text)
			}
		}
		if text, res := pp.call(t, "refresh", map[string]any{}); res.IsError {
			t.Errorf("refresh: %s", text)
		}
	})
}
