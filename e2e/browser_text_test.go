package e2e

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testRequestText checks in Chromium how page code and request text enter
// the module: a thenable that settles twice is taken once and the module
// keeps serving; request text longer than the limit is refused by its
// length; a Uint8Array carries bytes that are not UTF-8 unchanged; a lone
// surrogate is refused, not turned into U+FFFD (RATIONALE.md).
func testRequestText(t *testing.T, site *browserSite) {
	tb := site.open(t, "/settings/")
	// Each case is an expression of pling.surface.handle's answer, reduced
	// to what it shows: the reason of a step-1 refusal, or the value.
	got := eval[map[string]string](tb, `(async () => {
  const twice = pling.action({ id: "x.twice", title: "Settles twice", params: { n: { type: "integer" } },
    run: () => ({ then(ok, fail) { ok("first"); ok("second"); fail(new Error("third")); } }) });
  await pling.ready;
  await twice.declared;
  const r = (id, extra) => '{"protocol":"pling.surface/0.1","id":"' + id + '","method":"invoke","capability":"x.twice","input":{"n":1' + extra + '}}';
  const bytes = (text, tail) => { const b = new TextEncoder().encode(text); const out = new Uint8Array(b.length + tail.length); out.set(b); out.set(tail, b.length); return out; };
  const cases = {
    "settles twice": () => r("t1", ""),
    "settles twice, again": () => r("t2", "").replace('"n":1', '"n":2'),
    "too long in code units": () => r("t3", ',"pad":"' + "x".repeat(1 << 20) + '"'),
    "bytes not UTF-8": () => bytes('{"protocol":"pling.surface/0.1","id":"t4","method":"describe","x":"', [0xff, 0x22, 0x7d]),
    "bytes UTF-8": () => new TextEncoder().encode(r("t5", "").replace('"n":1', '"n":3')),
    "lone surrogate": () => r("t6", ',"note":"a\ud800"'),
  };
  const out = {};
  for (const [name, req] of Object.entries(cases)) {
    const res = await Promise.race([pling.surface.handle(req()), new Promise((ok) => setTimeout(() => ok("timeout"), 5000))]);
    out[name] = res === "timeout" ? "timeout"
      : res.ok ? (res.result.error ? res.result.error.code : "value " + res.result.value)
      : (res.id === null && res.error.details ? "refused " + res.error.details.reason : res.error.code);
  }
  return out;
})()`)
	want := map[string]string{
		"settles twice":          "value first",
		"settles twice, again":   "value first",
		"too long in code units": "refused too_large",
		"bytes not UTF-8":        "refused invalid_utf8",
		"bytes UTF-8":            "value first",
		"lone surrogate":         "refused invalid_utf8",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
}
