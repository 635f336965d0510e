package authority_test

import (
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
