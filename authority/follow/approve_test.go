package follow_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pling-go/pling/authority/follow"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// swapTransport is the real transport; while swap is set, an approval the
// authority hands out is replaced by swap (an attacker's replay or an
// approval for other input), and every approval seen is kept.
type swapTransport struct {
	follow.HTTPTransport
	mu   sync.Mutex
	swap string
	seen []string
	// rewrite, when set, rewrites the body the page sends to POST
	// /v1/approvals (a script that wraps fetch).
	rewrite func(body map[string]any)
}

func (s *swapTransport) Do(ctx context.Context, method, url, bearer string, body []byte) (int, []byte, error) {
	s.mu.Lock()
	rewrite := s.rewrite
	s.mu.Unlock()
	if rewrite != nil && strings.HasSuffix(url, "/v1/approvals") {
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			rewrite(m)
			body, _ = json.Marshal(m)
		}
	}
	st, b, err := s.HTTPTransport.Do(ctx, method, url, bearer, body)
	if err != nil || !strings.HasSuffix(url, "/token") || !strings.Contains(url, "/v1/approvals/") || st != 200 {
		return st, b, err
	}
	var ans map[string]any
	if json.Unmarshal(b, &ans) != nil {
		return st, b, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, _ := ans["approval"].(string); a != "" {
		s.seen = append(s.seen, a)
	}
	if s.swap != "" {
		ans["approval"] = s.swap
		b, _ = json.Marshal(ans)
	}
	return st, b, err
}

// TestPageApprovalThroughAuthority: a page whose approver is its
// authority (follow.Follower.Approver) runs an approval-gated action only
// after a person approved on the operator's side, with the approval the
// authority signed for that binding; a denial, a replayed approval (one
// collected for an earlier request), an approval the authority signed for
// other input, and a forged one run nothing.
func TestPageApprovalThroughAuthority(t *testing.T) {
	if testing.Short() {
		t.Skip("polls the authority once a second")
	}
	a := newAuthority(t)
	tr := &swapTransport{}
	f, err := follow.New(a.url(), origin, follow.WithWait(1), follow.WithTransport(tr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	sent := make(chan string, 4)
	var runs atomic.Int32
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithOrigin(origin), runtime.WithSessions(f, true),
		runtime.WithSharedReplayGuard(f.ReplayGuard(nil)),
		runtime.WithApprover(f.Approver(func(ch schema.SurfaceApprovalChallenge, _, id string) { sent <- id }), 30*time.Second))
	if _, err := rt.DeclareAction(runtime.Action{ID: "order.refund", Title: "Refund", Risk: "destructive", Approval: true,
		Params: map[string]runtime.Param{"amount": {Type: "number", Required: true}},
		Run:    func(context.Context, *runtime.Call) (any, error) { runs.Add(1); return "refunded", nil }}); err != nil {
		t.Fatal(err)
	}
	<-f.Ready()
	sid, tok := a.mint()
	invoke := func(id string, decide func(approvalID string)) string {
		t.Helper()
		req, _ := json.Marshal(map[string]any{"protocol": "pling.surface/0.1", "id": id, "method": "invoke",
			"capability": "order.refund", "input": map[string]any{"amount": 12}, "session": tok})
		done := make(chan []byte, 1)
		go func() { done <- rt.Handle(context.Background(), req) }()
		select {
		case aid := <-sent:
			decide(aid)
		case <-time.After(20 * time.Second):
			t.Fatal("the page sent no challenge to the authority")
		}
		var res struct {
			OK     bool `json:"ok"`
			Result struct {
				Error *struct {
					Code string `json:"code"`
				} `json:"error"`
			} `json:"result"`
		}
		select {
		case b := <-done:
			_ = json.Unmarshal(b, &res)
		case <-time.After(25 * time.Second):
			t.Fatal("no answer")
		}
		if !res.OK {
			return "not ok"
		}
		if res.Result.Error != nil {
			return res.Result.Error.Code
		}
		return "ok"
	}
	approve := func(aid string) {
		if st, b := a.call("POST", "/v1/approvals/"+aid+"/approve", opKey, nil); st != 200 {
			t.Fatalf("approve: %d %v", st, b)
		}
	}
	deny := func(aid string) {
		if st, b := a.call("POST", "/v1/approvals/"+aid+"/deny", opKey, nil); st != 200 {
			t.Fatalf("deny: %d %v", st, b)
		}
	}

	if got := invoke("r1", approve); got != "ok" || runs.Load() != 1 {
		t.Fatalf("approved on the operator's side: %s, runs %d", got, runs.Load())
	}
	if got := invoke("r2", deny); got != "PERMISSION_DENIED" || runs.Load() != 1 {
		t.Errorf("denied: %s, runs %d", got, runs.Load())
	}
	tr.mu.Lock()
	first := tr.seen[0]
	tr.mu.Unlock()

	// An approval the authority signed for this origin but another binding
	// (other input): created and approved beside the page.
	st, b := a.call("POST", "/v1/approvals", tok, map[string]any{"sessionId": sid, "audience": origin,
		"request": runtime.ApprovalRequest{Capability: "order.refund", Input: map[string]any{"amount": 1200}, Session: "sha256:" + strings.Repeat("b", 64),
			RequestID: "other", ExpiresAtMs: time.Now().UnixMilli() + 60_000}})
	if st != 201 {
		t.Fatalf("other approval: %d %v", st, b)
	}
	approve(b["id"].(string))
	_, other := a.call("POST", "/v1/approvals/"+b["id"].(string)+"/token", "", map[string]any{"pollSecret": b["pollSecret"]})
	forged := strings.Join(append(strings.Split(first, ".")[:3], strings.Repeat("A", 86)), ".")
	for _, tc := range []struct{ name, swap string }{
		{"replayed", first},
		{"other input", other["approval"].(string)},
		{"forged signature", forged},
		{"session token as approval", tok},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr.mu.Lock()
			tr.swap = tc.swap
			tr.mu.Unlock()
			defer func() { tr.mu.Lock(); tr.swap = ""; tr.mu.Unlock() }()
			if got := invoke("r-"+strings.ReplaceAll(tc.name, " ", "-"), approve); got != "PERMISSION_DENIED" || runs.Load() != 1 {
				t.Errorf("got %s, runs %d; want PERMISSION_DENIED and nothing run", got, runs.Load())
			}
		})
	}

	// A script that wraps fetch rewrites the request the page sends: the
	// person is shown, and approves, an amount of 1; the authority signs
	// that binding, which is not the one of the request the page runs.
	t.Run("a rewritten request", func(t *testing.T) {
		tr.mu.Lock()
		tr.rewrite = func(m map[string]any) {
			if rq, ok := m["request"].(map[string]any); ok {
				rq["input"] = map[string]any{"amount": 1}
			}
		}
		tr.mu.Unlock()
		defer func() { tr.mu.Lock(); tr.rewrite = nil; tr.mu.Unlock() }()
		if got := invoke("r-rewritten", approve); got != "PERMISSION_DENIED" || runs.Load() != 1 {
			t.Errorf("got %s, runs %d; want PERMISSION_DENIED and nothing run", got, runs.Load())
		}
	})
}
