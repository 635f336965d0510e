package authority

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMemBuckets: the invoke buckets of an authority whose store keeps
// none are this instance's, with the store's semantics: the burst, the
// wait, a refill capped at the asking call's burst, a bucket that never
// refills, and a bound on what is remembered that refuses a new key while
// every bucket drains.
func TestMemBuckets(t *testing.T) {
	b := invokeBuckets(nil).(*memBuckets)
	type take struct {
		key         string
		burst, perS float64
		at          int64
		ok          bool
		retryMs     int64
	}
	var got []take
	for _, c := range []take{
		{key: "a", burst: 2, perS: 0.5, at: 0},
		{key: "a", burst: 2, perS: 0.5, at: 0},
		{key: "a", burst: 2, perS: 0.5, at: 0},
		{key: "a", burst: 1000, perS: 0.5, at: 1000},
		{key: "a", burst: 2, perS: 0.5, at: 2000},
		{key: "b", burst: 1, perS: 0, at: 0},
		{key: "b", burst: 1, perS: 0, at: 99_000},
	} {
		ok, retry, err := b.TakeToken(context.Background(), c.key, c.burst, c.perS, c.at)
		if err != nil {
			t.Fatal(err)
		}
		c.ok, c.retryMs = ok, retry
		got = append(got, c)
	}
	want := []take{
		{key: "a", burst: 2, perS: 0.5, at: 0, ok: true},
		{key: "a", burst: 2, perS: 0.5, at: 0, ok: true},
		{key: "a", burst: 2, perS: 0.5, at: 0, retryMs: 2000},
		{key: "a", burst: 1000, perS: 0.5, at: 1000, retryMs: 1000},
		{key: "a", burst: 2, perS: 0.5, at: 2000, ok: true},
		{key: "b", burst: 1, perS: 0, at: 0, ok: true},
		{key: "b", burst: 1, perS: 0, at: 99_000, retryMs: neverRefillsMs},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(take{})); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}

	full := invokeBuckets(nil).(*memBuckets)
	for i := range maxMemBuckets {
		if ok, _, _ := full.TakeToken(context.Background(), strconv.Itoa(i), 1, 1, 0); !ok {
			t.Fatalf("key %d refused", i)
		}
	}
	if ok, _, _ := full.TakeToken(context.Background(), "one more", 1, 1, 0); ok {
		t.Error("a new key was allowed while every remembered bucket drains")
	}
	if ok, _, _ := full.TakeToken(context.Background(), "one more", 1, 1, 1000); !ok {
		t.Error("a new key was refused once the remembered buckets refilled")
	}
}
