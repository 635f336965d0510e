package authority_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/testing/hammer"
)

// markers reads the task's state {"m": [...]} and revision.
func markers(t *testing.T, r hresp) ([]string, int64) {
	t.Helper()
	var st struct {
		M []string `json:"m"`
	}
	b, _ := json.Marshal(r.body["state"])
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("state %s: %v", b, err)
	}
	rev, _ := r.body["revision"].(float64)
	return st.M, int64(rev)
}

// TestIfMatchWritersAcrossInstances: 32 writers each append their own
// marker to one task's state through different instances on one
// PostgreSQL, reading through one and writing through another, retrying
// on conflict until acknowledged. No update is lost: the final state holds
// exactly the acknowledged markers in the order of their revisions, every
// refusal is 409 CONTINUITY_REVISION_CONFLICT, and the revision is 1 plus
// the acknowledged writes.
func TestIfMatchWritersAcrossInstances(t *testing.T) {
	c := newCluster(t, 3)
	urls := c.urls()
	const writers = 32
	cl := newClient(t, writers)
	tok, _ := grant(t, cl, urls)
	mustCall(t, cl, urls[0], "POST", "/v1/tasks", tok, nil, map[string]any{"taskId": "shared", "state": map[string]any{"m": []string{}}}, 201)
	lid := mustCall(t, cl, urls[1], "POST", "/v1/tasks/shared/lease", tok, nil, map[string]any{"holder": "writers", "ttlSeconds": 600}, 200).body["leaseId"].(string)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	acked := map[int64]string{} // revision → marker
	refusals := map[string]int{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for attempt := 0; ctx.Err() == nil; attempt++ {
				cur, err := hcall(ctx, cl, urls[w%3], "GET", "/v1/tasks/shared", tok, nil, nil)
				if err != nil || cur.status != 200 {
					t.Errorf("writer %d: read: %d %s %v", w, cur.status, cur.raw, err)
					return
				}
				m, _ := markers(t, cur)
				marker := fmt.Sprintf("w%d.%d", w, attempt)
				r, err := hcall(ctx, cl, urls[(w+1)%3], "PUT", "/v1/tasks/shared", tok, map[string]string{"If-Match": cur.header.Get("ETag")},
					map[string]any{"leaseId": lid, "state": map[string]any{"m": append(m, marker)}})
				if err != nil {
					t.Errorf("writer %d: write: %v", w, err)
					return
				}
				mu.Lock()
				if r.status == 200 {
					rev := int64(r.body["revision"].(float64))
					if prev, dup := acked[rev]; dup {
						t.Errorf("revision %d acknowledged to %s and to %s", rev, prev, marker)
					}
					acked[rev] = marker
					mu.Unlock()
					return
				}
				refusals[fmt.Sprintf("%d %s", r.status, code(r.body))]++
				mu.Unlock()
			}
			t.Errorf("writer %d: no acknowledged write within the deadline", w)
		}()
	}
	wg.Wait()

	revs := make([]int64, 0, len(acked))
	for r := range acked {
		revs = append(revs, r)
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i] < revs[j] })
	var want []string
	for _, r := range revs {
		want = append(want, acked[r])
	}
	got, rev := markers(t, mustCall(t, cl, urls[2], "GET", "/v1/tasks/shared", tok, nil, nil, 200))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("final markers (-acknowledged, in revision order +state)\n%s", diff)
	}
	if rev != int64(1+len(acked)) || len(acked) != writers {
		t.Errorf("revision %d after %d acknowledged writes of %d writers, want %d", rev, len(acked), writers, 1+len(acked))
	}
	for k := range refusals {
		if k != "409 CONTINUITY_REVISION_CONFLICT" {
			t.Errorf("refusals %v: want only 409 CONTINUITY_REVISION_CONFLICT", refusals)
			break
		}
	}
	t.Logf("%d writers, %d acknowledged, refusals %v", writers, len(acked), refusals)
}

// at3 sends one request to each instance at the same moment (after
// warming a connection to each) and returns the three answers.
func at3(t *testing.T, cl *http.Client, urls []string, method, path, tok string, hdr map[string]string, body any) []hresp {
	t.Helper()
	out := make([]hresp, len(urls))
	hammer.Run(len(urls), func(i int) {
		r, err := hcall(context.Background(), cl, urls[i], method, path, tok, hdr, body)
		if err != nil {
			t.Errorf("instance %d: %v", i, err)
		}
		out[i] = r
	})
	return out
}

// TestReplayGuardAcrossInstances: one request id consumed through three
// instances at the same moment executes once (§9.3 consume): exactly one
// 201, the others 409 with the pending record; and a continuity write
// with one Idempotency-Key sent to three instances at once is applied
// once and answered the same to all. Rounds repeat it so that the race is
// really run.
func TestReplayGuardAcrossInstances(t *testing.T) {
	c := newCluster(t, 3)
	urls := c.urls()
	cl := newClient(t, 8)
	tok, sid := grant(t, cl, urls)
	const rounds = 20
	t.Run("consume", func(t *testing.T) {
		at3(t, cl, urls, "POST", "/v1/sessions/"+sid+"/requests/warm", tok, nil, nil)
		for r := range rounds {
			got := map[string]int{}
			for _, a := range at3(t, cl, urls, "POST", fmt.Sprintf("/v1/sessions/%s/requests/r-%d", sid, r), tok, nil, nil) {
				got[fmt.Sprintf("%d %s", a.status, bytes.TrimSpace(a.raw))]++
			}
			want := map[string]int{`201 {"status":"consumed"}`: 1, `409 {"previous":{"completed":false}}`: 2}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("round %d: answers (-want +got)\n%s", r, diff)
			}
		}
	})
	t.Run("idempotent write", func(t *testing.T) {
		mustCall(t, cl, urls[0], "POST", "/v1/tasks", tok, nil, map[string]any{"taskId": "idem", "state": map[string]any{"m": []string{}}}, 201)
		lid := mustCall(t, cl, urls[1], "POST", "/v1/tasks/idem/lease", tok, nil, map[string]any{"holder": "w", "ttlSeconds": 600}, 200).body["leaseId"].(string)
		var want []string
		for r := range rounds {
			marker := fmt.Sprintf("k%d", r)
			hdr := map[string]string{"If-Match": quoted(int64(1 + r)), "Idempotency-Key": "key-" + marker}
			answers := at3(t, cl, urls, "PUT", "/v1/tasks/idem", tok, hdr,
				map[string]any{"leaseId": lid, "state": map[string]any{"m": append(append([]string{}, want...), marker)}})
			want = append(want, marker)
			replayed := 0
			for i, a := range answers {
				if a.status != 200 || string(a.raw) != fmt.Sprintf("{\"revision\":%d}\n", r+2) {
					t.Fatalf("round %d, instance %d: %d %q, want 200 revision %d", r, i, a.status, a.raw, r+2)
				}
				if a.header.Get("Idempotent-Replayed") == "true" {
					replayed++
				}
			}
			if replayed != 2 {
				t.Fatalf("round %d: %d answers replayed, want 2 (one applied)", r, replayed)
			}
		}
		got, rev := markers(t, mustCall(t, cl, urls[2], "GET", "/v1/tasks/idem", tok, nil, nil, 200))
		if diff := cmp.Diff(want, got); diff != "" || rev != 1+rounds {
			t.Errorf("revision %d, want %d; markers (-want +got)\n%s", rev, 1+rounds, diff)
		}
	})
}
