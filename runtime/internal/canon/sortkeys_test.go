package canon

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSortKeysAsSortFunc: sortKeys puts keys in exactly the order
// slices.SortFunc with compareUTF16 does, ties included (distinct
// invalid UTF-8 that decodes alike, "\xff" and "\xfe", come out in the
// same order), on short lists
// (insertion sort) and long ones (pdqsort's partitions and pivots).
func TestSortKeysAsSortFunc(t *testing.T) {
	parts := []string{"a", "b", "é", "\uffff", "\ue000", "\U0001F600", "\U00010000", "\xff", "\xfe", "", "1", "10", "z"}
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 5, 12, 13, 20, 50, 100, 500, 3000} {
		for round := range 40 {
			t.Run(fmt.Sprintf("n=%d/%d", n, round), func(t *testing.T) {
				keys := make([]string, n)
				for i := range keys {
					k := ""
					for range 1 + r.IntN(3) {
						k += parts[r.IntN(len(parts))]
					}
					if round%2 == 1 {
						k += fmt.Sprint(r.IntN(n + 1))
					}
					keys[i] = k
				}
				if round%5 == 0 {
					slices.SortFunc(keys, compareUTF16)
					if round%10 == 0 {
						slices.Reverse(keys)
					}
				}
				want := slices.Clone(keys)
				slices.SortFunc(want, compareUTF16)
				got := slices.Clone(keys)
				sortKeys(got)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("sortKeys differs from slices.SortFunc (-want +got):\n%s", diff)
				}
			})
		}
	}
}
