package gojs_test

import (
	"strconv"
	"testing"

	"github.com/pling-go/pling/wasm/gojs"
)

// TestValueTableBounded makes 100,000 calls across the boundary — fresh
// strings, fresh objects, numbers, and calls from Go into host functions —
// and checks that the reference table does not grow with them: ids are
// freed by finalizeRef when Go collects its js.Values and are reused, as in
// wasm_exec.js. Between two collections the table holds the values that
// became garbage since the last one, so its size levels off at a plateau set
// by the Go GC's pace, and returns to its starting size after a GC.
func TestValueTableBounded(t *testing.T) {
	const calls = 100_000
	b := startBridge(t)
	b.call("gc")
	base := b.ValueTableSize()
	allocated0 := b.IDsAllocated()

	peakLive := 0
	var slotsAt []int // table length after each quarter of the calls
	for i := range calls {
		s := strconv.Itoa(i) // a string never seen before
		switch i % 4 {
		case 0:
			if got := b.call("concat", s, "!"); got != s+"!" {
				t.Fatalf("call %d: concat = %#v", i, got)
			}
		case 1:
			o := gojs.NewObject(map[string]any{"name": s, "n": i, "tags": []any{s}, "ok": true})
			if got := b.call("describe", o).(*gojs.Object).Get("name"); got != s {
				t.Fatalf("call %d: describe name = %#v", i, got)
			}
		case 2:
			if got := b.call("add", i, 1); got != float64(i+1) {
				t.Fatalf("call %d: add = %#v", i, got)
			}
		case 3:
			if got := b.call("callHost", "hostEcho", s); got != s {
				t.Fatalf("call %d: callHost = %#v", i, got)
			}
		}
		if i%1000 == 0 {
			peakLive = max(peakLive, b.ValueTableSize())
		}
		if (i+1)%(calls/4) == 0 {
			slotsAt = append(slotsAt, b.TableSlots())
		}
	}
	b.call("gc")
	after := b.ValueTableSize()
	allocated := b.IDsAllocated() - allocated0
	t.Logf("%d calls: %d values got ids; live entries %d before, %d after GC (peak %d); slots after each quarter %v",
		calls, allocated, base, after, peakLive, slotsAt)

	if allocated < calls {
		t.Fatalf("only %d values got ids in %d calls; the test does not exercise the table", allocated, calls)
	}
	// After a collection only what the module keeps (its functions, the
	// bridge) is referenced: the same as before the calls.
	if after > base+8 {
		t.Errorf("live entries after GC = %d; want <= %d (before the calls: %d)", after, base+8, base)
	}
	// The table levels off: the second half of the calls does not make it
	// grow beyond the plateau the first half reached (a quarter of slack
	// for the GC's pacing), and it stays far below the values that crossed.
	plateau := max(slotsAt[0], slotsAt[1])
	if last := slotsAt[3]; last > plateau+plateau/4 {
		t.Errorf("table kept growing: %v slots after each quarter of the calls", slotsAt)
	}
	if last := slotsAt[3]; last > allocated/4 {
		t.Errorf("table has %d slots for %d values that crossed; want ids reused", last, allocated)
	}
}
