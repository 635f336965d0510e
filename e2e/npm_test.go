package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// npmSDKVersion is the TypeScript MCP SDK the end-to-end test installs; it
// declares engines node >=18 and runs on the project's Node 20.
const npmSDKVersion = "1.32.2"

// npmFixture is the page `pling mcp` serves to the npm client. wizard.next
// becomes available once wizard.open ran: it is listed from the start
// (saying why it cannot run yet), and the list stays as it was — the
// result of wizard_open says it is available now (docs/agent.md §4.3).
// The two-pages run below follows a tools/list_changed.
const npmFixture = `{
  "title": "Shop",
  "states": {"cart.count": 0, "wizard.open": false},
  "records": {"order": [{"id": "ord_1", "label": "#1001", "visible": true}]},
  "actions": [
    {"id": "cart.add", "title": "Add to cart", "params": {"sku": {"type": "string", "required": true}},
     "run": {"set": {"cart.count": {"add": 1}}, "return": {"added": true}},
     "expect": {"state": "cart.count", "change": "increase"}},
    {"id": "approve", "title": "Approve order", "record": {"kind": "order"}, "run": {"return": {"approved": true}}},
    {"id": "refund", "title": "Refund order", "record": {"kind": "order"}, "approval": "approve", "run": {"return": {"refunded": true}}},
    {"id": "cart.clear", "title": "Clear cart", "risk": "destructive", "run": {"throw": "the cart is locked"}},
    {"id": "wizard.open", "title": "Open the wizard", "run": {"set": {"wizard.open": true}, "return": "opened"}},
    {"id": "wizard.next", "title": "Next step", "available": {"state": "wizard.open", "equals": true},
     "run": {"return": "next"}}
  ]
}`

// npmClient is an MCP host written against the npm SDK: it spawns
// `pling mcp --fixture FILE` over stdio and prints what it saw as JSON.
const npmClient = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, ProgressNotificationSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [bin, fixture] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args: ["mcp", "--fixture", fixture, "--poll", "0"], stderr: "inherit" });
const client = new Client({ name: "pling-npm-e2e", version: "1.0.0" });
let notified;
const listChanged = new Promise((resolve) => { notified = resolve; });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => notified(true));
await client.connect(transport);

const names = async () => (await client.listTools()).tools.map((t) => t.name);
const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
const out = { server: client.getServerVersion(), capabilities: client.getServerCapabilities() };
const listed = await client.listTools();
out.tools = listed.tools.map((t) => t.name);
out.approveSchema = listed.tools.find((t) => t.name === "approve__order").inputSchema;
const add = await client.callTool({ name: "cart_add", arguments: { sku: "A1" } });
out.add = { isError: add.isError ?? false, structured: add.structuredContent };
const clear = await client.callTool({ name: "cart_clear", arguments: {} });
out.clear = { isError: clear.isError ?? false, text: text(clear), structured: clear.structuredContent };
const approve = await client.callTool({ name: "approve__order", arguments: { record: "ord_1" } });
out.approve = { isError: approve.isError ?? false, value: approve.structuredContent?.value };
// onprogress makes the SDK send a progressToken. The fixture's approver
// answers at once, so the progress notification and the result arrive in
// one read, and the SDK runs notification handlers a microtask later than
// it settles the result, which drops the notification for onprogress (its
// handler is gone by then). A real person takes longer than that; the
// test reads the notification where the SDK delivers it regardless.
const progress = [];
client.setNotificationHandler(ProgressNotificationSchema, (n) => { progress.push(n.params.message); });
const refund = await client.callTool({ name: "refund__order", arguments: { record: "ord_1" } }, CallToolResultSchema, {
  onprogress: () => {},
});
await new Promise((r) => setTimeout(r, 50)); // the notification's handler runs after the result

out.refund = { isError: refund.isError ?? false, value: refund.structuredContent?.value, progress };
const opened = await client.callTool({ name: "wizard_open", arguments: {} });
out.openText = text(opened);
out.listChanged = await Promise.race([listChanged, new Promise((r) => setTimeout(() => r(false), 500))]);
out.toolsAfter = await names();
const next = await client.callTool({ name: "wizard_next", arguments: {} });
out.next = { isError: next.isError ?? false, value: next.structuredContent?.value };
await client.close();
process.stdout.write(JSON.stringify(out));
`

// npmTwoPages is an MCP host on the npm SDK that does a two-page task on
// the demo site in one pling mcp server: it adds a named product to the
// cart on the shop, opens the checkout (browser.open; the tools follow
// the page, with tools/list_changed) and places the order there.
const npmTwoPages = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [bin, site] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args: ["mcp", site + "/shop/", "--poll", "0"], stderr: "inherit" });
const client = new Client({ name: "pling-npm-e2e-pages", version: "1.0.0" });
let changes = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changes++; });
await client.connect(transport);
const names = async () => (await client.listTools()).tools.map((t) => t.name);
const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
const out = { instructions: client.getInstructions() };
out.toolsBefore = await names();
const add = await client.callTool({ name: "cart_add", arguments: { sku: "socks-wool", qty: 2 } });
out.add = { isError: add.isError ?? false, text: text(add) };
const open = await client.callTool({ name: "browser.open", arguments: { url: "/checkout/" } });
out.open = { isError: open.isError ?? false, text: text(open) };
for (let i = 0; i < 100 && !(await names()).includes("order_place"); i++) await new Promise((r) => setTimeout(r, 100));
out.toolsAfter = await names();
out.changes = changes;
const place = await client.callTool({ name: "order_place", arguments: {} });
out.place = { isError: place.isError ?? false, text: text(place), value: place.structuredContent?.value };
await client.close();
process.stdout.write(JSON.stringify(out));
`

// TestNPMClient drives `pling mcp` with the official TypeScript SDK's
// client: list tools, call them, see a business failure as isError with
// its code, and follow a tools/list_changed notification. It runs when
// node and npm are present; it skips (with the reason) only when npm cannot
// reach the registry, and even then fails when PLING_REQUIRE_NPM=1 (CI).
func TestNPMClient(t *testing.T) {
	n := findNPM(t)
	node := n.node
	if testing.Short() && os.Getenv("PLING_REQUIRE_NPM") != "1" {
		t.Skip("installs an npm package: not in -short mode")
	}
	ctx := n.ctx

	_, dir := npmPackage(t, "@modelcontextprotocol/sdk", npmSDKVersion)

	bin := filepath.Join(t.TempDir(), "pling")
	if goruntime.GOOS == "windows" {
		bin += ".exe"
	}
	goTool := goTool(t)
	if out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, "github.com/pling-go/pling/cmd/pling").CombinedOutput(); err != nil {
		t.Fatalf("go build pling: %v\n%s", err, out)
	}
	fixture := filepath.Join(dir, "shop.json")
	script := filepath.Join(dir, "client.mjs") // beside node_modules, so the import resolves
	if err := os.WriteFile(fixture, []byte(npmFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(npmClient), 0o644); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	run := exec.CommandContext(ctx, node, script, bin, fixture)
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("node client: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var got struct {
		Server struct {
			Name, Version string
		}
		Capabilities struct {
			Tools struct {
				ListChanged bool
			}
		}
		Tools         []string
		ApproveSchema map[string]any
		Add           struct {
			IsError    bool
			Structured map[string]any
		}
		Clear struct {
			IsError    bool
			Text       string
			Structured map[string]any
		}
		Approve, Next struct {
			IsError bool
			Value   any
		}
		Refund struct {
			IsError  bool
			Value    any
			Progress []string
		}
		ListChanged bool
		OpenText    string
		ToolsAfter  []string
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("client output: %v\n%s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	t.Logf("npm @modelcontextprotocol/sdk@%s on node %s: %s", npmSDKVersion, nodeVersion(node), stdout.String())

	if got.Server.Name != "pling" || !got.Capabilities.Tools.ListChanged {
		t.Errorf("server %+v, capabilities %+v", got.Server, got.Capabilities)
	}
	if diff := cmp.Diff([]string{"approve__order", "cart_add", "cart_clear", "refund__order", "wizard_next", "wizard_open"}, got.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"record"}, got.ApproveSchema["required"]); diff != "" {
		t.Errorf("approve__order required (-want +got):\n%s", diff)
	}
	if got.Add.IsError || cmp.Diff(map[string]any{"added": true}, got.Add.Structured["value"]) != "" {
		t.Errorf("cart_add: %+v", got.Add)
	}
	if !got.Clear.IsError || !strings.HasPrefix(got.Clear.Text, "EXECUTION_FAILED: ") ||
		got.Clear.Structured["error"].(map[string]any)["code"] != "EXECUTION_FAILED" {
		t.Errorf("cart_clear: %+v", got.Clear)
	}
	if got.Approve.IsError || cmp.Diff(map[string]any{"approved": true}, got.Approve.Value) != "" {
		t.Errorf("approve__order: %+v", got.Approve)
	}
	// A call that waits for a person's approval reports it as progress
	// (the client's onprogress sends a progressToken).
	if got.Refund.IsError || cmp.Diff(map[string]any{"refunded": true}, got.Refund.Value) != "" ||
		cmp.Diff([]string{"Waiting for a person to approve refund@order (up to 5m0s)"}, got.Refund.Progress) != "" {
		t.Errorf("refund__order: %+v, want the value and one progress notification", got.Refund)
	}
	if got.ListChanged || !strings.Contains(got.OpenText, "Now available: wizard.next") {
		t.Errorf("wizard_open: list changed %v (want the list to stay), text %q (want it to say wizard.next is available)", got.ListChanged, got.OpenText)
	}
	if diff := cmp.Diff([]string{"approve__order", "cart_add", "cart_clear", "refund__order", "wizard_next", "wizard_open"}, got.ToolsAfter); diff != "" {
		t.Errorf("tools after the change (-want +got):\n%s", diff)
	}
	if got.Next.IsError || got.Next.Value != "next" {
		t.Errorf("wizard_next: %+v", got.Next)
	}

	// The acceptance: one server navigates between two pages of
	// the demo site and completes a task that spans them.
	t.Run("two pages", func(t *testing.T) {
		site := startBrowserSite(t, dist(t), nil)
		pages := filepath.Join(dir, "pages.mjs")
		if err := os.WriteFile(pages, []byte(npmTwoPages), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		run := exec.CommandContext(ctx, node, pages, bin, site.url)
		run.Env = append(os.Environ(), "PLING_CDP=")
		run.Stdout, run.Stderr = &stdout, &stderr
		if err := run.Run(); err != nil {
			t.Fatalf("node client: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
		}
		var got struct {
			Instructions            string
			ToolsBefore, ToolsAfter []string
			Add, Open               struct {
				IsError bool
				Text    string
			}
			Changes int
			Place   struct {
				IsError bool
				Text    string
				Value   map[string]any
			}
		}
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
			t.Fatalf("client output: %v\n%s\nstderr: %s", err, stdout.String(), stderr.String())
		}
		t.Logf("two pages: %s", stdout.String())
		has := func(list []string, name string) bool {
			for _, n := range list {
				if n == name {
					return true
				}
			}
			return false
		}
		if !has(got.ToolsBefore, "cart_add") || !has(got.ToolsBefore, "browser.open") || has(got.ToolsBefore, "order_place") {
			t.Errorf("tools on the shop: %v", got.ToolsBefore)
		}
		if got.Add.IsError || !strings.HasPrefix(got.Add.Text, "Done: cart.add.") || strings.Contains(got.Add.Text, `"observation"`) {
			t.Errorf("cart_add: %+v", got.Add)
		}
		if got.Open.IsError || !strings.Contains(got.Open.Text, "Checkout") {
			t.Errorf("browser.open: %+v", got.Open)
		}
		if !has(got.ToolsAfter, "order_place") || has(got.ToolsAfter, "cart_add") || got.Changes == 0 {
			t.Errorf("tools on the checkout: %v after %d tools/list_changed", got.ToolsAfter, got.Changes)
		}
		if got.Place.IsError || cmp.Diff(map[string]any{"order": got.Place.Value["order"], "total": 28.0, "currency": "EUR", "payment": "on delivery"}, got.Place.Value) != "" {
			t.Errorf("order_place: %+v", got.Place)
		}
		if !strings.Contains(got.Instructions, "browser.open") {
			t.Errorf("instructions %q", got.Instructions)
		}
	})
}

func nodeVersion(node string) string {
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}
