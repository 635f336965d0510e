package runtime

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pling-go/pling/internal/testing/sortcheck"
)

// TestSortRecordsAsSortFunc: sortRecords puts rows in exactly the order
// slices.SortFunc with compareRecords does, ties included (ids that
// compare equal, "7" and "07", or the same id twice, keep the same
// relative order).
func TestSortRecordsAsSortFunc(t *testing.T) {
	ids := []string{"ord_1", "ord_01", "ord_001", "ord_2", "ord_10", "ord_010", "ord_9", "ord_99", "a", "a1", "a01", "b", "7", "07", "", "x_2_3", "x_02_3", "x_2_03"}
	sortcheck.AsSortFunc(t, 1, func(r *rand.Rand, n, round int) []RecordItem {
		rs := make([]RecordItem, n)
		for i := range rs {
			id := ids[r.IntN(len(ids))]
			if round%2 == 1 {
				// Many distinct ids, as a page's rows have.
				id = fmt.Sprintf("ord_%0*d", r.IntN(3), r.IntN(n+1))
			}
			rs[i] = RecordItem{ID: id, Label: fmt.Sprint(i), Offscreen: i%3 == 0}
		}
		return rs
	}, compareRecords, sortRecords)
}
