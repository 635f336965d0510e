package authority

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFeedSlotsPerClient: one client address holds at most its own bound
// of the feed's long-poll slots, so that others (the followers) still
// find one; the instance's bound still holds.
func TestFeedSlotsPerClient(t *testing.T) {
	st, err := OpenSQLite(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := NewServer(context.Background(), Config{Store: st, Audiences: map[string][]string{"https://a.example": {"*"}},
		MaxFeedWaiters: 4, MaxFeedWaitersPerClient: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got []bool
	var releases []func()
	take := func(client string) {
		r, ok := s.feedSlot(client)
		got = append(got, ok)
		if ok {
			releases = append(releases, r)
		}
	}
	take("anon") // 1
	take("anon") // 2
	take("anon") // refused: the client's bound
	take("gateway")
	take("other")
	take("third") // refused: the instance's bound (4)
	releases[0]()
	take("anon")
	if diff := cmp.Diff([]bool{true, true, false, true, true, false, true}, got); diff != "" {
		t.Errorf("slots (-want +got):\n%s", diff)
	}
}
