package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// The two pages of a checkout on the test site, both following the
// authority at {{AUTHORITY}}. The cart lives in the site's backend; the
// payment page pays for the SKUs the agent names, which must be the cart's.
const (
	taskCartPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Cart</title><link rel="icon" href="data:,">
<script src="/pling/pling.js" data-expose="*" data-authority="{{AUTHORITY}}"></script>
<script>
pling.action({ id: "cart.add", title: "Add to cart", risk: "write",
  params: { sku: { type: "string", required: true } },
  run: async (input) => {
    const r = await fetch("/test/task/cart?sku=" + encodeURIComponent(input.sku), { method: "POST" });
    if (!r.ok) throw new Error(await r.text());
    return r.json();
  } });
</script></head><body><h1>Cart</h1></body></html>`
	taskPayPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pay</title><link rel="icon" href="data:,">
<script src="/pling/pling.js" data-expose="*" data-authority="{{AUTHORITY}}"></script>
<script>
let orders = { count: -1, last: "" };
const show = () => { document.getElementById("orders").textContent = String(orders.count); document.getElementById("last").textContent = orders.last; };
fetch("/test/task/orders").then((r) => r.json()).then((o) => { orders = o; show(); });
pling.state("orders.count", () => orders.count);
pling.action({ id: "checkout.pay", title: "Pay for the cart", risk: "write",
  params: { skus: { type: "string", required: true } },
  run: async (input) => {
    const r = await fetch("/test/task/pay?skus=" + encodeURIComponent(input.skus), { method: "POST" });
    if (!r.ok) throw new Error(await r.text());
    orders = await r.json();
    show();
    return { order: orders.last };
  } });
</script></head><body><h1>Pay</h1><p>Orders placed: <span id="orders"></span> <span id="last"></span></p></body></html>`
)

// taskShop is the test site's backend: one cart and the orders paid.
type taskShop struct {
	mu     sync.Mutex
	cart   []string
	orders []string
	adds   int
}

func (s *taskShop) handler(followed *followedAuthority) *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /test/task/cart.html", followed.page(taskCartPage))
	m.HandleFunc("GET /test/task/pay.html", followed.page(taskPayPage))
	m.HandleFunc("POST /test/task/cart", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.adds++
		s.cart = append(s.cart, r.URL.Query().Get("sku"))
		json.NewEncoder(w).Encode(map[string]any{"lines": s.cart})
	})
	m.HandleFunc("GET /test/task/orders", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		json.NewEncoder(w).Encode(s.summary())
	})
	m.HandleFunc("POST /test/task/pay", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.cart) == 0 || r.URL.Query().Get("skus") != strings.Join(s.cart, ",") {
			http.Error(w, "the SKUs are not the cart's", http.StatusConflict)
			return
		}
		s.orders = append(s.orders, "T-"+strconv.Itoa(100+len(s.orders)))
		s.cart = nil
		json.NewEncoder(w).Encode(s.summary())
	})
	return m
}

func (s *taskShop) summary() map[string]any {
	last := ""
	if len(s.orders) > 0 {
		last = s.orders[len(s.orders)-1]
	}
	return map[string]any{"count": len(s.orders), "last": last}
}

// checkoutTask is the task's state: where the agent is in the checkout.
type checkoutTask struct {
	Step string `json:"step"` // start, cart, paying, paid
	SKUs string `json:"skus,omitempty"`
	// PayRequest is the request id the payment is sent under, written
	// before it is sent: a resend after a crash is the same intent.
	PayRequest string `json:"payRequest,omitempty"`
	Status     string `json:"status,omitempty"`
}

// TestTaskAcrossPages: the Go client carries a checkout across the cart
// page and the payment page with a task of the real authority (token from
// the real device grant; both pages follow the authority). The agent
// creates the task, takes its lease, adds to the cart on the cart page,
// records the step (If-Match), goes to the payment page, records the
// payment's request id and pays — and then the agent process dies before
// recording it, and the page is reloaded. A new agent (new agent.Client
// and TaskClient) reads the task, sees the cart done and the payment sent,
// resends the payment under the same id, which the authority's shared
// replay guard answers REPLAY_DETECTED (previous ok) instead of paying
// again, and marks the task done. The page shows one order.
func TestTaskAcrossPages(t *testing.T) {
	d := dist(t)
	shop := &taskShop{}
	var followed followedAuthority
	site := startBrowserSite(t, d, shop.handler(&followed))

	const opKey = "operator-key-for-tasks"
	as := authoritytest.Start(t, authority.Config{Audiences: map[string][]string{site.url: {"*"}},
		OperatorKeys: []string{opKey}, Interval: time.Second}, nil)
	followed.set(as.URL)

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	// The token: the device grant, approved by the operator.
	p, err := agent.RequestDelegation(ctx, as.URL, agent.DelegationRequest{Audience: site.url, Scope: []string{"cart.*", "checkout.*"},
		TTL: 10 * time.Minute, Agent: "e2e-shopper"})
	if err != nil {
		t.Fatal(err)
	}
	authoritytest.Approve(t, as.URL, opKey, p.ID, nil)
	dg, err := p.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	token := dg.Token

	const taskID, holder = "checkout-e2e-1", "agent-e2e"
	call := func(what string, f func(context.Context) error) {
		t.Helper()
		cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
		defer ccancel()
		if err := f(cctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	tb := site.open(t, "/test/task/cart.html")
	arrive := func(path string, how string) {
		t.Helper()
		eval[bool](tb, `(window.__left = true, setTimeout(() => { `+how+` }, 0), true)`)
		for deadline := time.Now().Add(waitLimit); ; time.Sleep(50 * time.Millisecond) {
			cctx, ccancel := context.WithTimeout(tb.ctx, time.Second)
			ok, err := chromedp.Run(cctx, chromedp.Evaluate[bool](`!window.__left && location.pathname === `+strconv.Quote(path)+` && !!(window.pling && window.pling.surface)`))
			ccancel()
			if err == nil && ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the page did not arrive at %s: %v", path, err)
			}
		}
	}

	// The first agent process.
	{
		tasks := agent.NewTaskClient(as.URL, token)
		client := agent.New(tb.page, agent.WithSession(token), agent.WithIDPrefix("first"))
		var rev int64
		var lease agent.TaskLease
		call("create the task", func(c context.Context) (err error) {
			_, rev, err = tasks.CreateTask(c, taskID, checkoutTask{Step: "start"})
			return err
		})
		call("take the lease", func(c context.Context) (err error) {
			lease, err = tasks.AcquireLease(c, taskID, holder, time.Minute)
			return err
		})
		call("cart.add", func(c context.Context) error {
			_, err := client.Invoke(c, "cart.add", map[string]any{"sku": "tent-2p"})
			return err
		})
		call("record the cart step", func(c context.Context) (err error) {
			rev, err = tasks.Update(c, taskID, lease.ID, rev, checkoutTask{Step: "cart", SKUs: "tent-2p"})
			return err
		})
		arrive("/test/task/pay.html", `location.href = "/test/task/pay.html"`)
		payID := "pay-" + taskID
		call("record the payment's id", func(c context.Context) (err error) {
			rev, err = tasks.Update(c, taskID, lease.ID, rev, checkoutTask{Step: "paying", SKUs: "tent-2p", PayRequest: payID})
			return err
		})
		call("checkout.pay", func(c context.Context) error {
			_, err := client.Invoke(c, "checkout.pay", map[string]any{"skus": "tent-2p"}, agent.WithRequestID(payID))
			return err
		})
		// Here the first agent dies: "paid" is never recorded.
	}
	arrive("/test/task/pay.html", `location.reload()`)

	// The second agent process knows the task id only.
	tasks := agent.NewTaskClient(as.URL, token)
	client := agent.New(tb.page, agent.WithSession(token), agent.WithIDPrefix("second"))
	var task *agent.Task
	call("read the task", func(c context.Context) (err error) { task, err = tasks.Task(c, taskID); return err })
	var state checkoutTask
	if err := task.Decode(&state); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(checkoutTask{Step: "paying", SKUs: "tent-2p", PayRequest: "pay-" + taskID}, state); diff != "" {
		t.Fatalf("the task as the second agent reads it (-want +got):\n%s", diff)
	}
	var lease agent.TaskLease
	call("take the lease again", func(c context.Context) (err error) {
		lease, err = tasks.AcquireLease(c, taskID, holder, time.Minute)
		return err
	})
	// The cart step is done: it is not repeated. The payment was sent:
	// it is resent under its id, never under a new one.
	_, err = client.Invoke(ctx, "checkout.pay", map[string]any{"skus": state.SKUs}, agent.WithRequestID(state.PayRequest))
	var re *agent.ReplayError
	if !errors.As(err, &re) || !re.Previous.Completed || !re.Previous.OK {
		t.Fatalf("the resent payment: %v, want REPLAY_DETECTED with a completed, ok previous", err)
	}
	state.Step, state.Status = "paid", "done"
	call("record the task done", func(c context.Context) error {
		_, err := tasks.Update(c, taskID, lease.ID, task.Revision, state)
		return err
	})
	call("read the task done", func(c context.Context) (err error) { task, err = tasks.Task(c, taskID); return err })
	if !task.Terminal {
		t.Errorf("the task is not terminal after done: %+v", task)
	}

	// The evidence from the page: one order, and the cart added to once.
	arrive("/test/task/pay.html", `location.reload()`)
	tb.waitJS(`document.getElementById("orders").textContent !== "-1" && document.getElementById("orders").textContent !== ""`)
	if got := eval[string](tb, `document.getElementById("orders").textContent + " " + document.getElementById("last").textContent`); got != "1 T-100" {
		t.Errorf("the payment page shows %q orders, want \"1 T-100\"", got)
	}
	shop.mu.Lock()
	defer shop.mu.Unlock()
	if shop.adds != 1 || len(shop.orders) != 1 {
		t.Errorf("the backend saw %d cart adds and %d orders, want 1 and 1", shop.adds, len(shop.orders))
	}
}
