package e2e

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/demosite"
	"github.com/pling-go/pling/internal/testing/scripted"
)

// assistantAnswer is the scripted model's last word. It is markup on
// purpose: the panel must show it as text.
const assistantAnswer = `Two headlamps are in your cart. <img src=x id=injected onerror="document.title='pwned'">`

// TestAssistantPanel is the tool-calling round trip of the in-page
// assistant in Chromium: the person asks in the panel; the scripted model
// (through the real gateway, behind the site's /gateway/ proxy) answers
// with a call of the page's cart_add tool; the panel runs it through
// pling.callTool, the cart changes, the result goes back to the model,
// and its final answer is shown, as text.
func TestAssistantPanel(t *testing.T) {
	d := dist(t)
	var mu sync.Mutex
	var seen []scripted.Request
	up, err := scripted.Start(func(r scripted.Request) scripted.Reply {
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		last := r.Messages[len(r.Messages)-1]
		if last.Role == "tool" {
			return scripted.Reply{Content: assistantAnswer}
		}
		for _, tool := range r.Tools {
			if tool.Function.Name == "cart_add" {
				call := scripted.ToolCall{ID: "call_1", Type: "function"}
				call.Function.Name, call.Function.Arguments = "cart_add", `{"sku":"lamp-head","qty":2}`
				return scripted.Reply{ToolCalls: []scripted.ToolCall{call}}
			}
		}
		return scripted.Reply{Content: "I see no cart here."}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	gw := httptest.NewServer(gateway.New(gateway.Config{Upstream: up.URL, UpstreamKey: "sk-test", Models: []string{"scripted-small"},
		SiteKeys: []string{"demo-site-key"}, Logger: slog.New(slog.DiscardHandler)}).Handler())
	t.Cleanup(gw.Close)
	target, _ := url.Parse(gw.URL)
	extra := http.NewServeMux()
	extra.Handle("/gateway/", demosite.GatewayProxy(target, "demo-site-key"))
	site := startBrowserSite(t, d, extra)

	tb := site.open(t, "/shop/")
	tb.waitJS(`document.querySelector("#assistant-input") !== null`)
	if got := eval[string](tb, `document.getElementById("cart-badge").textContent`); got != "0" {
		t.Fatalf("cart badge %q before the assistant acted", got)
	}
	tb.do(chromedp.SendKeys(chromedp.CSS("#assistant-input"), "Please add two headlamps to my cart"),
		chromedp.Click(chromedp.CSS("#assistant-form button[type=submit]")))
	tb.waitJS(`[...document.querySelectorAll("#assistant-log .assistant-msg.assistant")].length === 1`)
	saveScreenshot(t, tb, "assistant-panel.png")

	if got := eval[string](tb, `document.getElementById("cart-badge").textContent`); got != "2" {
		t.Errorf("cart badge %q after the tool call, want 2", got)
	}
	var log []string
	if err := json.Unmarshal([]byte(eval[string](tb, `JSON.stringify([...document.querySelectorAll("#assistant-log li")].map((li) => li.className + ": " + li.textContent))`)), &log); err != nil {
		t.Fatal(err)
	}
	want := []string{"assistant-msg user: Please add two headlamps to my cart", "assistant-msg tool: cart_add done",
		"assistant-msg assistant: " + assistantAnswer}
	if strings.Join(log, "\n") != strings.Join(want, "\n") {
		t.Errorf("panel log:\n%s\nwant:\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
	if n := eval[int](tb, `document.querySelectorAll("#assistant img, #injected").length`); n != 0 {
		t.Errorf("the model's markup became %d elements", n)
	}
	time.Sleep(100 * time.Millisecond) // an onerror, had the image been made, would have run by now
	if title := eval[string](tb, `document.title`); title == "pwned" {
		t.Error("the model's text ran as markup")
	}

	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("the model was asked %d times, want 2", len(seen))
	}
	back := seen[1].Messages[len(seen[1].Messages)-1]
	if back.Role != "tool" || back.ToolCallID != "call_1" || !strings.Contains(back.Text(), `"ok":true`) {
		t.Errorf("tool result sent back: %+v", back)
	}
}
