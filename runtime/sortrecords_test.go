package runtime

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSortRecordsAsSortFunc: sortRecords puts rows in exactly the order
// slices.SortFunc with compareRecords does, ties included (ids that
// compare equal, "7" and "07", or the same id twice, keep the same
// relative order), on short lists (insertion sort) and long ones
// (pdqsort's partitions, pattern breaking and pivots).
func TestSortRecordsAsSortFunc(t *testing.T) {
	ids := []string{"ord_1", "ord_01", "ord_001", "ord_2", "ord_10", "ord_010", "ord_9", "ord_99", "a", "a1", "a01", "b", "7", "07", "", "x_2_3", "x_02_3", "x_2_03"}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 5, 12, 13, 20, 50, 100, 500, 3000} {
		for round := range 40 {
			t.Run(fmt.Sprintf("n=%d/%d", n, round), func(t *testing.T) {
				rs := make([]RecordItem, n)
				for i := range rs {
					id := ids[r.IntN(len(ids))]
					if round%2 == 1 {
						// Many distinct ids, as a page's rows have.
						id = fmt.Sprintf("ord_%0*d", r.IntN(3), r.IntN(n+1))
					}
					rs[i] = RecordItem{ID: id, Label: fmt.Sprint(i), Offscreen: i%3 == 0}
				}
				if round%5 == 0 {
					// Nearly in order, and reversed: pdqsort's other paths.
					slices.SortFunc(rs, compareRecords)
					if n > 1 {
						rs[0], rs[n-1] = rs[n-1], rs[0]
					}
					if round%10 == 0 {
						slices.Reverse(rs)
					}
				}
				want := slices.Clone(rs)
				slices.SortFunc(want, compareRecords)
				got := slices.Clone(rs)
				sortRecords(got)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("sortRecords differs from slices.SortFunc (-want +got):\n%s", diff)
				}
			})
		}
	}
}
