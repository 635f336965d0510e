// Package sortcheck is test support for the module's sorts written with
// sort.Slice instead of slices.SortFunc (the module carries sort.Slice's one
// instance for every caller; each slices.SortFunc instance would add a copy
// of pdqsort): it checks that such a sort puts elements in exactly the order
// slices.SortFunc with the same comparison does, ties included. Product code
// must not import it.
package sortcheck

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// AsSortFunc runs sorted on lists from gen, short ones (insertion sort) and
// long ones (pdqsort's partitions, pattern breaking and pivots), random,
// sorted, nearly sorted and reversed, and wants the order slices.SortFunc
// with compare gives. gen returns n elements for one round; r is seeded
// with seed, so a failure repeats.
func AsSortFunc[T any](t *testing.T, seed uint64, gen func(r *rand.Rand, n, round int) []T, compare func(a, b T) int, sorted func([]T)) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed+1))
	for _, n := range []int{0, 1, 2, 5, 12, 13, 20, 50, 100, 500, 3000} {
		for round := range 40 {
			t.Run(fmt.Sprintf("n=%d/%d", n, round), func(t *testing.T) {
				in := gen(r, n, round)
				if round%5 == 0 {
					// In order, nearly in order, and reversed: pdqsort's
					// other paths.
					slices.SortFunc(in, compare)
					switch {
					case round%10 == 0:
						slices.Reverse(in)
					case round%20 == 5 && n > 1:
						in[0], in[n-1] = in[n-1], in[0]
					}
				}
				want := slices.Clone(in)
				slices.SortFunc(want, compare)
				got := slices.Clone(in)
				sorted(got)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("the sort differs from slices.SortFunc (-want +got):\n%s", diff)
				}
			})
		}
	}
}
