package follow_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/authority/follow"
	"github.com/pling-go/pling/runtime"
)

// TestInvokeLimitAcrossRuntimes: two runtimes (two tabs, or a reload) that
// follow one authority with its shared invoke limit spend one session's
// burst between them, not one each; another session, anonymous callers
// and describe keep their own; an authority that does not answer refuses
// with RATE_LIMIT_UNAVAILABLE.
func TestInvokeLimitAcrossRuntimes(t *testing.T) {
	a := newAuthority(t)
	rl := runtime.RateLimit{Describe: runtime.Bucket{Burst: 100, PerSecond: 1}, Invoke: runtime.Bucket{Burst: 3, PerSecond: 0.001}}
	limited := func(f *follow.Follower) []runtime.Option { return []runtime.Option{runtime.WithLimiter(f.Limiter(rl))} }
	tab1, tab2 := newPageWith(t, a, nil, limited), newPageWith(t, a, nil, limited)
	_, tok := a.mint()
	_, other := a.mint()
	var got []string
	send := func(p *page, id, token string) {
		var ok bool
		var code string
		if token == "" {
			var res struct {
				OK    bool                  `json:"ok"`
				Error struct{ Code string } `json:"error"`
			}
			_ = json.Unmarshal(p.rt.Handle(context.Background(), []byte(`{"protocol":"pling.surface/0.1","id":"`+id+
				`","method":"invoke","capability":"order.view","input":{}}`)), &res)
			ok, code = res.OK, res.Error.Code
		} else {
			ok, code, _ = p.invoke(t, id, "order.view", token)
		}
		if ok {
			code = "ok"
		}
		got = append(got, code)
	}
	send(tab1, "a1", tok)
	send(tab2, "a2", tok)
	send(tab1, "a3", tok)
	send(tab2, "a4", tok) // the session's burst is spent in both tabs
	send(tab1, "a5", tok)
	send(tab2, "b1", other) // another session has its own
	for i := range 4 {
		send(tab1, "n"+string(rune('0'+i)), "") // anonymous: this tab's own bucket
	}
	want := []string{"ok", "ok", "ok", "RATE_LIMITED", "RATE_LIMITED", "ok", "ok", "ok", "ok", "RATE_LIMITED"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("codes (-want +got)\n%s", diff)
	}
	a.stop()
	if ok, code, _ := tab2.invoke(t, "b2", "order.view", other); ok || code != "RATE_LIMIT_UNAVAILABLE" {
		t.Errorf("authority down: ok=%v code=%q, want RATE_LIMIT_UNAVAILABLE", ok, code)
	}
}
