// The shim shortens page text (a markup action's title, a guide's label,
// feedback) to the runtime's limits counted as Go counts them: in code
// points (runes), not UTF-16 units, and never through a surrogate pair.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { cut } = require("../pling.js");

test("cut counts code points", () => {
  const cases = [
    { name: "short ASCII is kept", s: "Add to cart", n: 200, want: "Add to cart" },
    { name: "long ASCII is cut", s: "x".repeat(250), n: 200, want: "x".repeat(200) },
    { name: "astral characters count one each", s: "😀".repeat(250), n: 200, want: "😀".repeat(200) },
    { name: "astral within the limit is kept whole", s: "😀".repeat(150), n: 200, want: "😀".repeat(150) },
    { name: "no half of a surrogate pair", s: "a" + "😀".repeat(3), n: 2, want: "a😀" },
  ];
  for (const c of cases) {
    const got = cut(c.s, c.n);
    assert.equal(got, c.want, c.name);
    assert.ok(Array.from(got).length <= c.n, c.name + ": within the limit in code points");
  }
});
