package follow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/authority/follow"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// TestSiteServerChecksApproval: the site's own server, on loopback,
// refunds only what a person approved on the authority's screen. The
// page's handler forwards call.Session and call.Approval in the
// Pling-Session and Pling-Approval headers; the server computes the
// binding from what it is about to do (follow.Follower.CheckRequest) and
// refuses a request with no approval, with the approval of other input,
// of another session, a used one, an expired one, and one without a
// session, and accepts the right one once.
func TestSiteServerChecksApproval(t *testing.T) {
	if testing.Short() {
		t.Skip("polls the authority once a second")
	}
	a := newAuthority(t)
	page, err := follow.New(a.url(), origin, follow.WithWait(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(page.Close)
	// The site's server follows the authority on its own, as a separate
	// process would.
	srvF, err := follow.New(a.url(), origin, follow.WithWait(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srvF.Close)

	var mu sync.Mutex
	var refunds []float64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var input map[string]any
		if json.NewDecoder(r.Body).Decode(&input) != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		caller, err := srvF.CheckRequest(r, follow.Call{Capability: "order.refund", Input: input, NeedsApproval: true})
		if err != nil {
			var pe *perr.Error
			code := "?"
			if errors.As(err, &pe) {
				code = pe.Code().String()
			}
			http.Error(w, code, http.StatusForbidden)
			return
		}
		if caller.Session.Subject != "alice" {
			http.Error(w, "another user", http.StatusForbidden)
			return
		}
		mu.Lock()
		refunds = append(refunds, input["amount"].(float64))
		mu.Unlock()
		fmt.Fprint(w, "refunded")
	}))
	t.Cleanup(site.Close)
	post := func(input map[string]any, session, approval string) string {
		t.Helper()
		b, _ := json.Marshal(input)
		req, _ := http.NewRequest("POST", site.URL+"/refund", bytes.NewReader(b))
		if session != "" {
			req.Header.Set(follow.SessionHeader, session)
		}
		if approval != "" {
			req.Header.Set(follow.ApprovalHeader, approval)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out bytes.Buffer
		_, _ = out.ReadFrom(res.Body)
		return fmt.Sprintf("%d %s", res.StatusCode, bytes.TrimSpace(out.Bytes()))
	}

	// The page's handler forwards what the runtime gives it: the input it
	// was called with (forward, when set, replaces it: a handler bent to
	// send another amount), with call.Session and call.Approval.
	var forward map[string]any
	var hold bool // the handler keeps the approval and sends nothing
	var lastCall runtime.Call
	answers := make(chan string, 1)
	sent := make(chan string, 1)
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithOrigin(origin), runtime.WithSessions(page, true),
		runtime.WithApprover(page.Approver(func(_ schema.SurfaceApprovalChallenge, _, id string) { sent <- id }), 30*time.Second))
	if _, err := rt.DeclareAction(runtime.Action{ID: "order.refund", Title: "Refund", Risk: "destructive", Approval: true,
		Params: map[string]runtime.Param{"amount": {Type: "number", Required: true}},
		Run: func(_ context.Context, c *runtime.Call) (any, error) {
			mu.Lock()
			in := c.Input
			if forward != nil {
				in = forward
			}
			lastCall = *c
			keep := hold
			mu.Unlock()
			ans := "held"
			if !keep {
				ans = post(in, c.Session, c.Approval)
			}
			answers <- ans
			return ans, nil
		}}); err != nil {
		t.Fatal(err)
	}
	<-page.Ready()
	<-srvF.Ready()
	_, tok := a.mint()
	_, tok2 := a.mint()
	invoke := func(ctx context.Context, id string) string {
		t.Helper()
		req, _ := json.Marshal(map[string]any{"protocol": "pling.surface/0.1", "id": id, "method": "invoke",
			"capability": "order.refund", "input": map[string]any{"amount": 12}, "session": tok})
		done := make(chan []byte, 1)
		go func() { done <- rt.Handle(ctx, req) }()
		select {
		case aid := <-sent:
			if st, b := a.call("POST", "/v1/approvals/"+aid+"/approve", opKey, nil); st != 200 {
				t.Fatalf("approve: %d %v", st, b)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the page sent no challenge to the authority")
		}
		select {
		case <-done:
		case <-time.After(25 * time.Second):
			t.Fatal("no answer")
		}
		select {
		case ans := <-answers:
			return ans
		default:
			return "the handler did not run"
		}
	}
	got := map[string]string{}

	mu.Lock()
	forward = map[string]any{"amount": 1200}
	mu.Unlock()
	got["other input"] = invoke(context.Background(), "r-other")
	mu.Lock()
	forward = nil
	mu.Unlock()
	got["approved"] = invoke(context.Background(), "r-ok")
	mu.Lock()
	approved := lastCall
	mu.Unlock()
	got["no approval"] = post(map[string]any{"amount": 12}, tok, "")
	got["no session"] = post(map[string]any{"amount": 12}, "", approved.Approval)
	got["used again"] = post(map[string]any{"amount": 12}, approved.Session, approved.Approval)

	// An approval for another session's request, sent with this token.
	got["another session"] = post(map[string]any{"amount": 12}, tok2, approved.Approval)

	// An approval that lapsed: the call's window (its context) bounds it.
	// The handler keeps this one unused; it is sent once it expired.
	mu.Lock()
	hold = true
	mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	got["expired"] = invoke(ctx, "r-expired")
	mu.Lock()
	held := lastCall
	mu.Unlock()
	<-ctx.Done()
	time.Sleep(50 * time.Millisecond) // past the approval's expiry, which is the context's deadline at most
	got["expired"] += ", then " + post(map[string]any{"amount": 12}, held.Session, held.Approval)

	want := map[string]string{
		"other input":     "403 PERMISSION_DENIED",
		"approved":        "200 refunded",
		"no approval":     "403 PERMISSION_DENIED",
		"no session":      "403 SESSION_REQUIRED",
		"used again":      "403 PERMISSION_DENIED",
		"another session": "403 PERMISSION_DENIED",
		"expired":         "held, then 403 PERMISSION_DENIED",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the site's answers (-want +got):\n%s", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff([]float64{12}, refunds); d != "" {
		t.Errorf("refunds made (-want +got):\n%s", d)
	}
}
