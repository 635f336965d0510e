package follow_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFollowerRereadsARestoredStore: an answer of the feed naming
// another epoch than the follower read (the authority's store was
// restored) makes the follower drop its keys (fetched again before the next poll) and
// re-read the feed from its start naming the new epoch; until that read
// is done it is not current and its /readyz reason says why.
func TestFollowerRereadsARestoredStore(t *testing.T) {
	var epoch atomic.Value
	epoch.Store("e1")
	var rereads atomic.Int64
	gate := make(chan struct{})
	f := followFeed(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		e := epoch.Load().(string)
		switch {
		case e == "e2" && q.Get("after") == "" && q.Get("epoch") == "e2":
			rereads.Add(1)
			<-gate
			w.Write([]byte(`{"epoch":"e2","cursor":"2","revoked":[{"sessionId":"s9","at":"2026-01-01T00:00:00Z"}]}`))
		case q.Get("after") == "":
			w.Write([]byte(`{"epoch":"` + e + `","cursor":"5","revoked":[]}`))
		default:
			if q.Get("waitSeconds") != "0" && q.Get("epoch") == e {
				time.Sleep(100 * time.Millisecond)
			}
			w.Write([]byte(`{"epoch":"` + e + `","cursor":"` + q.Get("after") + `","revoked":[]}`))
		}
	})
	defer f.Close()
	<-f.Ready()
	now := func() int64 { return time.Now().UnixMilli() }
	if why := f.Waiting(now()); why != "" {
		t.Fatalf("waiting for %q after the first read", why)
	}
	epoch.Store("e2")
	deadline := time.Now().Add(5 * time.Second)
	for rereads.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the follower did not re-read the feed from its start with the new epoch")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if why := f.Waiting(now()); !strings.Contains(why, "restored") || f.Current(now()) == nil {
		t.Errorf("during the re-read: waiting for %q, current %v; want not current, restored", why, f.Current(now()))
	}
	close(gate)
	for f.Waiting(now()) != "" {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %q after the re-read", f.Waiting(now()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
