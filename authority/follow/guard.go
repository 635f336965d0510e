package follow

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/pling-go/pling/runtime"
)

// ReplayGuard returns the shared replay guard of the authority
// (docs/authority.md "Shared replay guard"), for runtime.WithSharedReplayGuard:
// the ids of a delegated session the follower verified are consumed in
// the authority (POST …/requests/{id}), and completed there after (PUT
// …/complete), so one id runs at most once across reloads, tabs and
// hosts. Requests without a session go to fallback (the page's own shared
// guard, such as its IndexedDB store; nil: none). A session the follower
// did not verify is refused, and so is a call that does not reach the
// authority: the runtime answers REPLAY_GUARD_UNAVAILABLE and the id stays
// free.
func (f *Follower) ReplayGuard(fallback runtime.ReplayGuard) runtime.ReplayGuard {
	return &sharedGuard{f: f, fallback: fallback}
}

type sharedGuard struct {
	f        *Follower
	fallback runtime.ReplayGuard
}

var errNotDelegated = errors.New("pling: the session was not verified by the page's authority")

func (g *sharedGuard) requestURL(d delegated, id string) string {
	// Both ids are of URL-safe alphabets (remember and wire.ValidID).
	return g.f.base + "/v1/sessions/" + d.id + "/requests/" + id
}

// Consume implements runtime.ReplayGuard.
func (g *sharedGuard) Consume(ctx context.Context, key, id string, expiresAtMs, nowMs int64) (*runtime.ReplayRecord, error) {
	if key == runtime.AnonymousSessionKey {
		if g.fallback == nil {
			return nil, nil
		}
		return g.fallback.Consume(ctx, key, id, expiresAtMs, nowMs)
	}
	d, ok := g.f.session(key)
	if !ok {
		return nil, errNotDelegated
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	st, body, err := g.f.tr.Do(ctx, "POST", g.requestURL(d, id), d.token, nil)
	if err != nil {
		return nil, err
	}
	switch st {
	case 201:
		return nil, nil
	case 409:
		var a struct {
			Previous *struct {
				Completed bool   `json:"completed"`
				OK        bool   `json:"ok"`
				Code      string `json:"code"`
			} `json:"previous"`
		}
		if json.Unmarshal(body, &a) != nil || a.Previous == nil {
			return nil, errors.New("pling: the authority's replay answer is malformed")
		}
		return &runtime.ReplayRecord{Completed: a.Previous.Completed, OK: a.Previous.OK, Code: a.Previous.Code}, nil
	}
	return nil, errors.New("pling: the authority's replay guard answered " + strconv.Itoa(st))
}

// Complete implements runtime.ReplayGuard. It is best effort: a record
// left pending still refuses the id, it only reports less.
func (g *sharedGuard) Complete(ctx context.Context, key, id string, outcome runtime.ReplayRecord) {
	if key == runtime.AnonymousSessionKey {
		if g.fallback != nil {
			g.fallback.Complete(ctx, key, id, outcome)
		}
		return
	}
	d, ok := g.f.session(key)
	if !ok {
		return
	}
	body, _ := json.Marshal(map[string]any{"ok": outcome.OK, "code": outcome.Code})
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, _, _ = g.f.tr.Do(ctx, "PUT", g.requestURL(d, id)+"/complete", d.token, body)
}
