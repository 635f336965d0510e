package follow_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pling-go/pling/authority/follow"
)

// TestFollowerPastMaxRevoked: a feed longer than MaxRevoked does not
// fail the follower closed for good. Entries whose session expired long
// ago are forgotten and the follower stays current; live ones past the
// bound make it start again from the feed's start (the authority serves
// only live revocations there) and say it is not current, which the
// gateway's /readyz reports, instead of refusing every token while it
// says ready.
func TestFollowerPastMaxRevoked(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 210 000 feed entries")
	}
	const page = 10_000
	const total = follow.MaxRevoked + page
	for _, tc := range []struct {
		name        string
		expiresAt   string
		wantCurrent bool
	}{
		{"expired sessions are forgotten", "2020-01-01T00:00:00Z", true},
		{"live sessions past the bound: not current, re-read from the start", "2999-01-01T00:00:00Z", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var restarts atomic.Int64
			f := followFeed(t, func(w http.ResponseWriter, r *http.Request) {
				after, _ := strconv.Atoi(r.URL.Query().Get("after"))
				if after == 0 {
					restarts.Add(1)
				}
				var b strings.Builder
				end := min(after+page, total)
				fmt.Fprintf(&b, `{"cursor":"%d","revoked":[`, end)
				for i := after; i < end; i++ {
					if i > after {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `{"sessionId":"s%d","at":"2020-01-01T00:00:00Z","expiresAt":"%s"}`, i, tc.expiresAt)
				}
				b.WriteString("]}")
				w.Write([]byte(b.String()))
			}, follow.WithWait(1))
			defer f.Close()
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				cur := f.Current(time.Now().UnixMilli()) == nil
				if tc.wantCurrent && cur {
					return
				}
				if !tc.wantCurrent && restarts.Load() >= 2 {
					if cur {
						t.Fatal("current while re-reading the feed after its bound")
					}
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Fatalf("current %v, %d reads from the start", f.Current(time.Now().UnixMilli()), restarts.Load())
		})
	}
}
