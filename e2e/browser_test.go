package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/demosite"
	"github.com/pling-go/pling/schema"

	"github.com/pling-go/pling/internal/testing/npmtest"
)

// The browser tests: the demo site of pling serve, served in-process by
// the very handler the command runs (demosite), driven in one headless
// Chromium the way an agent and a person would at once — the agent through
// pling.surface.handle (the Go client over the CDP transport), the person
// by clicking the page and the Pling overlay with chromedp.

// TestBrowser runs the demo site in headless Chromium: every subtest
// opens its own tab of one browser.
func TestBrowser(t *testing.T) {
	d := dist(t)
	start := time.Now()
	extra := http.NewServeMux()
	site := startBrowserSite(t, d, extra)
	t.Cleanup(func() { t.Logf("browser tests took %v", time.Since(start).Round(time.Millisecond)) })

	t.Run("shop", func(t *testing.T) { testShop(t, site) })
	t.Run("orders", func(t *testing.T) { testOrders(t, site) })
	t.Run("approval", func(t *testing.T) { testApproval(t, site) })
	t.Run("settings", func(t *testing.T) { testSettings(t, site) })
	t.Run("handler-throws", func(t *testing.T) {
		tb := site.open(t, "/settings/")
		// A declaration is queued until the module runs; pling.ready
		// starts it (the page has not been described yet).
		tb.declare("x.throws", `{ id: "x.throws", title: "Throws", run() { throw new Error("boom from the test"); } }`)
		_, err := tb.invoke("x.throws", nil)
		be := wantCode(t, err, perr.ExecutionFailed)
		if be.Observed == nil {
			t.Error("the client did not describe the page after EXECUTION_FAILED")
		}
		t.Logf("EXECUTION_FAILED: %s", be.Message)
	})
	t.Run("webmcp", func(t *testing.T) { testWebMCP(t, site, extra) })
	t.Run("request-text", func(t *testing.T) { testRequestText(t, site) })
	t.Run("replay-reload", func(t *testing.T) { testReplayReload(t, site, extra) })
	t.Run("replay-outcome", func(t *testing.T) { testReplayOutcome(t, site, extra) })
}

func testShop(t *testing.T, site *browserSite) {
	t.Run("describe", func(t *testing.T) {
		tb := site.open(t, "/shop/")
		d := tb.describe()
		// On an empty cart only cart.add can run; cart.remove and checkout
		// are listed as unavailable, with the page's reason.
		if got := ids(d); !slices.Equal(got, []string{"cart.add"}) {
			t.Errorf("capabilities %v, want [cart.add]", got)
		}
		unavailable := map[string]string{}
		for _, u := range d.Context.Unavailable {
			unavailable[u.ID] = u.Reason
		}
		for _, id := range []string{"cart.remove", "checkout"} {
			if unavailable[id] != "The cart is empty" {
				t.Errorf("%s: unavailable %q, want \"The cart is empty\" (unavailable: %v)", id, unavailable[id], unavailable)
			}
		}
		add := mustCapability(t, d, "cart.add")
		if p := add.InputSchema.Properties["sku"]; p == nil || p.Type != "string" || len(p.Enum) != 6 {
			t.Errorf("cart.add sku: %+v", p)
		}
		if !slices.Contains(add.InputSchema.Required, "sku") {
			t.Errorf("cart.add requires %v, want sku", add.InputSchema.Required)
		}
		if v, ok := d.Context.States["cart.count"]; !ok || num(t, v) != 0 {
			t.Errorf("states.cart.count = %v, want 0", d.Context.States["cart.count"])
		}
	})

	t.Run("add", func(t *testing.T) {
		tb := site.open(t, "/shop/")
		r := tb.mustInvoke("cart.add", map[string]any{"sku": "pack-20", "qty": 2})
		expectationsMet(t, r, "cart.count")
		if r.Observation == nil {
			t.Fatal("no observation")
		}
		ch, ok := r.Observation.States["cart.count"]
		if !ok || num(t, ch.Before) != 0 || num(t, ch.After) != 2 {
			t.Errorf("observation cart.count %+v, want 0 → 2", ch)
		}
		if got := eval[string](tb, `document.getElementById("cart-badge").textContent`); got != "2" {
			t.Errorf("the cart badge shows %q, want 2", got)
		}
		// The page changed what may be done: cart.remove and checkout are
		// capabilities now.
		d := tb.describe()
		mustCapability(t, d, "cart.remove")
		if !mustCapability(t, d, "checkout").Handoff {
			t.Error("checkout is not marked as a handoff")
		}
	})

	// checkout hands off to the person: the bank's 3-D Secure window and
	// the Pling overlay, which the test answers like a person.
	t.Run("handoff-done", func(t *testing.T) {
		tb := site.open(t, "/shop/")
		tb.mustInvoke("cart.add", map[string]any{"sku": "tent-2p"})
		res := tb.invokeAsync("checkout", nil)
		tb.do(chromedp.WaitVisible(chromedp.CSS(handoffDialog)), chromedp.WaitVisible(chromedp.CSS("#tds")))
		tb.waitJS(`/\d:\d\d/.test(document.querySelector("` + handoffDialog + ` [role=timer]").textContent)`)
		saveScreenshot(t, tb, "handoff-overlay.png")
		o := tb.personConfirms(res, "#tds", "#tds-code", "123456", "#tds-confirm")
		expectationsMet(t, o.res, "checkout.status")
		if got := string(o.res.Value); !strings.Contains(got, `"order":"NW-`) || !strings.Contains(got, `"status":"paid"`) {
			t.Errorf("value %s, want the order the person placed (handoff.result)", got)
		}
		tb.do(chromedp.WaitNotPresent(chromedp.CSS(handoffDialog)))
		if got := eval[string](tb, `document.getElementById("shop-status").textContent`); !strings.Contains(got, "placed") {
			t.Errorf("shop status %q, want the order placed", got)
		}
		t.Logf("handoff done after %v", o.took.Round(time.Millisecond))
	})

	t.Run("handoff-cancel", func(t *testing.T) {
		tb := site.open(t, "/shop/")
		tb.mustInvoke("cart.add", map[string]any{"sku": "lamp-head"})
		res := tb.invokeAsync("checkout", nil)
		tb.do(
			chromedp.WaitVisible(chromedp.CSS(handoffDialog)),
			chromedp.Click(chromedp.CSS(handoffDialog+answerNo)),
		)
		o := tb.outcome(res)
		wantCode(t, o.err, perr.HandoffCancelled)
		tb.do(chromedp.WaitNotPresent(chromedp.CSS(handoffDialog)))
	})

	t.Run("handoff-timeout", func(t *testing.T) {
		const ms = 1500
		tb := site.open(t, fmt.Sprintf("/shop/?handoffTimeoutMs=%d", ms))
		tb.mustInvoke("cart.add", map[string]any{"sku": "bottle-1l"})
		res := tb.invokeAsync("checkout", nil)
		tb.do(chromedp.WaitVisible(chromedp.CSS(handoffDialog)))
		// The overlay counts the page's short time down, not the
		// action's three minutes. (On a slow machine it may have run out
		// or closed already; then there is no clock to check.)
		timer := eval[string](tb, `(document.querySelector("`+handoffDialog+` [role=timer]") || {}).textContent || ""`)
		if clock := regexp.MustCompile(`\d+:\d\d`).FindString(timer); clock != "" && !strings.HasPrefix(clock, "0:0") {
			t.Errorf("the overlay shows %q, want at most %dms", timer, ms)
		}
		o := tb.outcome(res)
		be := wantCode(t, o.err, perr.HandoffTimeout)
		if o.took < ms*time.Millisecond {
			t.Errorf("timed out after %v, before the %dms the page set", o.took, ms)
		}
		if v, ok := be.Details["timeoutMs"]; !ok || num(t, v) != ms {
			t.Errorf("details %v, want timeoutMs %d", be.Details, ms)
		}
		// Nobody clicked: the overlay closed itself when the runtime
		// stopped waiting.
		tb.waitJS(`!document.querySelector("dialog.pling-ui")`)
		t.Logf("HANDOFF_TIMEOUT after %v", o.took.Round(time.Millisecond))
	})
}

// saveScreenshot saves the viewport as a test artifact in e2e/artifacts.
func saveScreenshot(t *testing.T, tb *tab, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitLimit)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if err := os.MkdirAll("artifacts", 0o755); err != nil {
		t.Fatal(err)
	}
	path, _ := filepath.Abs(filepath.Join("artifacts", name))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %dx%d saved to %s", img.Bounds().Dx(), img.Bounds().Dy(), path)
}

func testOrders(t *testing.T, site *browserSite) {
	tb := site.open(t, "/orders/")
	max := 500
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	d, err := tb.agent.Describe(ctx, &schema.DescribeOptions{MaxRecords: &max})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	items := map[string]schema.RecordItem{}
	for _, it := range d.Context.Records["order"].Items {
		items[it.ID] = it
	}
	status := func(t *testing.T, id string) string {
		// The label is "#1001 · Ada Jensen · pending · €12.00".
		parts := strings.Split(items[id].Label, " · ")
		if len(parts) != 4 {
			t.Fatalf("label of %s: %q", id, items[id].Label)
		}
		return parts[2]
	}
	// pick finds orders in the given statuses, visible or offscreen, that
	// no other subtest took.
	taken := map[string]bool{}
	pick := func(t *testing.T, visible bool, statuses ...string) string {
		t.Helper()
		for i := 1; i <= 500; i++ {
			id := fmt.Sprintf("ord_%d", i)
			it, ok := items[id]
			if ok && !taken[id] && it.Offscreen != visible && slices.Contains(statuses, status(t, id)) {
				taken[id] = true
				return id
			}
		}
		t.Fatalf("no %v order (visible %v) in %d records", statuses, visible, len(items))
		return ""
	}
	rowStatus := func(tb *tab, id string) string {
		return eval[string](tb, `document.querySelector('#rows .row[data-order="`+id+`"] .pill').textContent`)
	}

	t.Run("describe", func(t *testing.T) {
		for _, id := range []string{"approve@order", "refund@order", "open@order"} {
			c := mustCapability(t, d, id)
			if c.Record == nil || c.Record.Kind != "order" {
				t.Fatalf("%s is not folded over orders: %+v", id, c.Record)
			}
			if c.Record.Total != 500 {
				t.Errorf("%s: total %d, want 500", id, c.Record.Total)
			}
			if n := len(c.Record.Visible); n < 18 || n > 23 {
				t.Errorf("%s: %d visible, want about 20 (the 640px viewport holds 20 rows)", id, n)
			}
			if c.Record.Offscreen != c.Record.Total-len(c.Record.Visible) {
				t.Errorf("%s: offscreen %d + visible %d ≠ total %d", id, c.Record.Offscreen, len(c.Record.Visible), c.Record.Total)
			}
			if _, has := c.InputSchema.Properties["record"]; has {
				t.Errorf("%s repeats record among its visible properties", id)
			}
			t.Logf("%s: template %s, total %d, visible %d, offscreen %d", id, c.Record.Template, c.Record.Total, len(c.Record.Visible), c.Record.Offscreen)
		}
		if !mustCapability(t, d, "open@order").Record.AllowOffscreen {
			t.Error("open@order does not allow offscreen records")
		}
		if rs := d.Context.Records["order"]; rs.Total != 500 || len(rs.Items) != 500 {
			t.Errorf("records.order: total %d, %d items; want 500 and 500 (maxRecords 500)", rs.Total, len(rs.Items))
		}
		if c := mustCapability(t, d, "refund@order"); !c.Approval || c.Risk != schema.RiskDestructive {
			t.Errorf("refund@order: approval %v, risk %s", c.Approval, c.Risk)
		}
	})

	t.Run("approve-visible", func(t *testing.T) {
		tb := tb.on(t)
		id := pick(t, true, "pending")
		r := tb.mustInvoke("approve@order", map[string]any{"record": id, "note": "checked by e2e"})
		expectationsMet(t, r, "orders.pending")
		if r.Evidence.Record != id {
			t.Errorf("evidence record %q, want %s", r.Evidence.Record, id)
		}
		if got := rowStatus(tb, id); got != "approved" {
			t.Errorf("row %s shows %q, want approved", id, got)
		}
	})

	t.Run("approve-offscreen", func(t *testing.T) {
		tb := tb.on(t)
		id := pick(t, false, "pending")
		_, err := tb.invoke("approve@order", map[string]any{"record": id})
		be := wantCode(t, err, perr.ActionUnavailable)
		t.Logf("%s: %s", id, be.Message)
	})

	t.Run("refund-approved", func(t *testing.T) {
		tb := tb.on(t)
		id := pick(t, true, "approved", "shipped")
		res := tb.refundAsync(id, "damaged")
		if text := tb.personAnswers("approve"); !strings.Contains(text, "Refund order") {
			t.Errorf("the approval dialog does not name the action: %q", text)
		}
		o := tb.succeeded(res, "refund")
		expectationsMet(t, o.res, "orders.refunded")
		if got := rowStatus(tb, id); got != "refunded" {
			t.Errorf("row %s shows %q, want refunded", id, got)
		}
		tb.waitJS(`!document.querySelector("` + approvalHost + `")`)
	})

	t.Run("refund-denied", func(t *testing.T) {
		tb := tb.on(t)
		id := pick(t, true, "approved", "shipped")
		before := rowStatus(tb, id)
		res := tb.refundAsync(id, "late")
		tb.personAnswers("deny")
		o := tb.outcome(res)
		wantCode(t, o.err, perr.PermissionDenied)
		if got := rowStatus(tb, id); got != before {
			t.Errorf("row %s shows %q after a denied refund, want %q", id, got, before)
		}
		tb.waitJS(`!document.querySelector("` + approvalHost + `")`)
	})
}

func testSettings(t *testing.T, site *browserSite) {
	tb := site.open(t, "/settings/")

	t.Run("describe", func(t *testing.T) {
		tb := tb.on(t)
		d := tb.describe()
		save := mustCapability(t, d, "settings.save")
		if save.Title != "Save settings" {
			t.Errorf("title %q", save.Title)
		}
		props := save.InputSchema.Properties
		for name, typ := range map[string]string{"displayName": "string", "email": "string", "language": "string",
			"pageSize": "integer", "weeklyDigest": "boolean", "refundAlerts": "boolean"} {
			if p := props[name]; p == nil || p.Type != typ {
				t.Errorf("settings.save param %s: %+v, want type %s", name, p, typ)
			}
		}
		if p := props["pageSize"]; p != nil && (p.Minimum == nil || *p.Minimum != 10 || p.Maximum == nil || *p.Maximum != 100) {
			t.Errorf("pageSize bounds %v..%v, want 10..100", p.Minimum, p.Maximum)
		}
		if p := props["language"]; p != nil && !slices.Equal(p.Enum, []any{"en", "zh-CN"}) {
			t.Errorf("language enum %v", p.Enum)
		}
		if p := props["email"]; p != nil && p.Description != "Where notifications go" {
			t.Errorf("email description %q", p.Description)
		}
		if len(save.InputSchema.Required) != 0 {
			t.Errorf("required %v, want none (every field is filled in)", save.InputSchema.Required)
		}
		mustCapability(t, d, "team.openInvite")
		for _, id := range []string{"team.invite", "team.closeInvite"} {
			if capability(d, id) != nil {
				t.Errorf("%s is listed while its dialog is closed", id)
			}
		}
		if v := d.Context.States["settings.revision"]; v != "1" {
			t.Errorf("settings.revision %v, want \"1\"", v)
		}
		t.Logf("capabilities %v", ids(d))
	})

	t.Run("save", func(t *testing.T) {
		tb := tb.on(t)
		r := tb.mustInvoke("settings.save", map[string]any{"displayName": "Robin Ops", "pageSize": 30, "refundAlerts": true})
		expectationsMet(t, r, "settings.revision")
		if got := eval[string](tb, `document.getElementById("p-name").textContent`); got != "Robin Ops" {
			t.Errorf("saved name %q", got)
		}
		if got := eval[string](tb, `((f) => [f.pageSize.value, f.refundAlerts.checked].join())(document.getElementById("settings").elements)`); got != "30,true" {
			t.Errorf("the form holds %q, want 30,true", got)
		}
		if ch := r.Observation.States["profile.displayName"]; ch.After != "Robin Ops" {
			t.Errorf("observation profile.displayName %+v", ch)
		}
	})

	t.Run("modal", func(t *testing.T) {
		tb := tb.on(t)
		tb.do(chromedp.Click(chromedp.CSS("#invite-open")))
		tb.waitJS(`document.getElementById("invite").open`)
		d := tb.describeUntil("only the invite dialog's actions", func(d *schema.SurfaceDescription) bool {
			return capability(d, "settings.save") == nil
		})
		if got := ids(d); !slices.Equal(got, []string{"team.closeInvite", "team.invite"}) {
			t.Errorf("with the modal open, describe lists %v, want only the dialog's actions", got)
		}
		if p := mustCapability(t, d, "team.invite").InputSchema.Properties["email"]; p == nil {
			t.Error("team.invite has no email param")
		}
		_, err := tb.invoke("settings.save", map[string]any{"displayName": "Behind the modal"})
		wantCode(t, err, perr.ActionUnavailable)
		if got := eval[string](tb, `document.getElementById("p-name").textContent`); got != "Robin Ops" {
			t.Errorf("the form behind the modal was saved: %q", got)
		}
		tb.do(chromedp.Click(chromedp.CSS("#invite-cancel")))
		tb.waitJS(`!document.getElementById("invite").open`)
		tb.describeUntil("settings.save again", func(d *schema.SurfaceDescription) bool {
			return capability(d, "settings.save") != nil && capability(d, "team.invite") == nil
		})
	})

	t.Run("markup-added-removed", func(t *testing.T) {
		tb := tb.on(t)
		eval[bool](tb, `(() => {
  const b = document.createElement("button");
  b.type = "button"; b.id = "x-added";
  b.setAttribute("data-pling-action", "x.added");
  b.setAttribute("data-pling-title", "Added");
  b.textContent = "Added at runtime";
  b.onclick = () => { b.dataset.clicks = String(Number(b.dataset.clicks || 0) + 1); };
  document.querySelector(".team").appendChild(b);
  return true;
})()`)
		d := tb.describeUntil("x.added", func(d *schema.SurfaceDescription) bool { return capability(d, "x.added") != nil })
		if c := capability(d, "x.added"); c.Title != "Added" {
			t.Errorf("x.added title %q", c.Title)
		}
		tb.mustInvoke("x.added", nil)
		if got := eval[string](tb, `document.getElementById("x-added").dataset.clicks`); got != "1" {
			t.Errorf("the added button was clicked %q times, want 1", got)
		}
		eval[bool](tb, `(document.getElementById("x-added").remove(), true)`)
		tb.describeUntil("x.added gone", func(d *schema.SurfaceDescription) bool { return capability(d, "x.added") == nil })
		_, err := tb.invoke("x.added", nil)
		wantCode(t, err, perr.ActionNotFound)
	})
}

// testWebMCP mirrors the shop into the WebMCP polyfill from npm and calls
// a tool through the polyfill's API.
func testWebMCP(t *testing.T, site *browserSite, extra *http.ServeMux) {
	bundle := npmtest.WebMCPPolyfill(t)
	page, err := fs.ReadFile(demosite.Demo(), "shop/index.html")
	if err != nil {
		t.Fatal(err)
	}
	tag := `<script src="/pling/pling.js"`
	if !bytes.Contains(page, []byte(tag)) {
		t.Fatal("the shop page does not load pling.js as expected")
	}
	// The polyfill runs first (a classic script, before the deferred
	// pling.js), so pling.js finds document.modelContext.
	page = bytes.Replace(page, []byte(tag), []byte(`<script src="/test/webmcp-polyfill.js"></script>`+"\n"+tag), 1)
	serve := func(ctype string, b []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Cache-Control", "no-store")
			w.Write(b)
		}
	}
	extra.Handle("/test/webmcp-polyfill.js", serve("text/javascript; charset=utf-8", bundle))
	extra.Handle("/shop/webmcp.html", serve("text/html; charset=utf-8", page))

	tb := site.open(t, "/shop/webmcp.html")
	// names lists the mirrored tools and pling.tools(), both sorted.
	const names = `(async () => {
  const mc = document.modelContext;
  const mirrored = (await mc.getTools()).map((t) => t.name).sort();
  const tools = (await pling.tools()).map((t) => t.name).sort();
  return JSON.stringify({ mirrored, tools, ok: !!pling._webmcp && mirrored.join() === tools.join() });
})()`
	type lists struct {
		Mirrored, Tools []string
		OK              bool
	}
	waitMirror := func(what string, want func(lists) bool) lists {
		t.Helper()
		var l lists
		for deadline := time.Now().Add(waitLimit); ; time.Sleep(50 * time.Millisecond) {
			if err := json.Unmarshal([]byte(eval[string](tb, names)), &l); err != nil {
				t.Fatal(err)
			}
			if l.OK && want(l) {
				return l
			}
			if time.Now().After(deadline) {
				t.Fatalf("the WebMCP mirror never showed %s: mirrored %v, pling.tools %v", what, l.Mirrored, l.Tools)
			}
		}
	}
	l := waitMirror("cart_add", func(l lists) bool { return slices.Contains(l.Tools, "cart_add") })
	t.Logf("mirrored tools: %v", l.Mirrored)

	// The tool of cart.add, found by its capability, called through the
	// polyfill's executeTool.
	out := eval[string](tb, `(async () => {
  const name = (await pling.tools()).find((t) => t.capability === "cart.add").name;
  const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
  return await document.modelContext.executeTool(tool, JSON.stringify({ sku: "socks-wool", qty: 3 }));
})()`)
	var resp struct {
		Content []struct {
			Type, Text string
		}
		StructuredContent struct {
			OK     bool `json:"ok"`
			Result struct {
				Evidence    schema.Evidence           `json:"evidence"`
				Observation schema.SurfaceObservation `json:"observation"`
				Error       *schema.ActionFailure     `json:"error"`
			} `json:"result"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatalf("executeTool answered %s: %v", out, err)
	}
	sc := resp.StructuredContent
	if resp.IsError || !sc.OK || sc.Result.Error != nil {
		t.Fatalf("the tool call failed: %s", out)
	}
	if sc.Result.Evidence.Capability != "cart.add" || len(sc.Result.Evidence.Expectations) == 0 || !sc.Result.Evidence.Expectations[0].Met {
		t.Errorf("evidence %+v", sc.Result.Evidence)
	}
	if len(resp.Content) != 1 || resp.Content[0].Type != "text" || !strings.HasPrefix(resp.Content[0].Text, "OK: cart.add ran.\nProof: cart.count") {
		t.Errorf("content %+v", resp.Content)
	}
	// The agent sees the same cart.
	if v := tb.describe().Context.States["cart.count"]; num(t, v) != 3 {
		t.Errorf("cart.count %v after the tool call, want 3", v)
	}
	// The call changed what may be done; the mirror follows.
	l = waitMirror("cart_remove and checkout", func(l lists) bool {
		return slices.Contains(l.Tools, "cart_remove") && slices.Contains(l.Tools, "checkout")
	})
	t.Logf("mirrored tools after the call: %v", l.Mirrored)
}
