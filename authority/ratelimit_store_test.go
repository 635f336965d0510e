package authority_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/authority"
)

// TestCreateRateLimitSharedAcrossInstances: three instances sharing a
// store allow one address the burst once between them, not three times
// (the buckets are in the store).
func TestCreateRateLimitSharedAcrossInstances(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		limit := func(c *authority.Config) { c.CreateBurst, c.CreatePerSecond = 6, 0.001 }
		var fs []*fixture
		for range 3 {
			fs = append(fs, newFixture(t, open(), limit))
		}
		allowed := 0
		for i := range 18 {
			if st, _, _ := postFrom(t, fs[i%3], "127.0.0.1"); st == 201 {
				allowed++
			}
		}
		if diff := cmp.Diff(6, allowed); diff != "" {
			t.Errorf("allowed across three instances (-want +got):\n%s", diff)
		}
	})
}

// TestTakeTokenRefills: the store's bucket spends its burst, says how long
// until the next token, refills at its rate, and never holds more than
// its burst, on both stores.
func TestTakeTokenRefills(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		rs, ok := open().(authority.RateStore)
		if !ok {
			t.Fatal("the store keeps no buckets")
		}
		ctx := context.Background()
		type take struct {
			atMs    int64
			ok      bool
			retryMs int64
		}
		var got []take
		for _, at := range []int64{0, 0, 0, 400, 1000, 1000, 60_000, 60_000, 60_000} {
			ok, retry, err := rs.TakeToken(ctx, "k", 2, 1, at)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, take{at, ok, retry})
		}
		want := []take{{0, true, 0}, {0, true, 0}, {0, false, 1000}, {400, false, 600},
			{1000, true, 0}, {1000, false, 1000}, {60_000, true, 0}, {60_000, true, 0}, {60_000, false, 1000}}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(take{})); diff != "" {
			t.Errorf("takes (-want +got):\n%s", diff)
		}
	})
}
