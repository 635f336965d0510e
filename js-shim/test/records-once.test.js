// A data-heavy page in the module: thousands of rows and five row actions
// of their kind, each with an availability check written per row. Every
// describe runs the page's records reader once (docs/page-api.md §2.5).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { load, requests } = require("../testsupport.js");

const pling = load();
const { req } = requests(pling, "ro");

for (const n of [2000, 10000]) {
  test(`describe reads ${n} rows once with five row actions of their kind`, async () => {
    const kind = "order" + n;
    const status = new Map();
    for (let i = 1; i <= n; i++) status.set(`ord_${i}`, ["pending", "paid", "shipped"][i % 3]);
    let reads = 0;
    const hs = [pling.records(kind, () => {
      reads++;
      const rows = [];
      for (const [id] of status) rows.push({ id, label: "#" + id.slice(4), visible: rows.length < 50 });
      return rows;
    })];
    for (const [id, from] of [["pay", "pending"], ["ship", "paid"], ["deliver", "shipped"], ["cancel", "pending"], ["refund", "paid"]]) {
      hs.push(pling.action({ id: `${id}${n}`, title: id, record: { kind },
        available: (rec) => rec !== undefined && status.get(rec) === from, run: () => true }));
    }
    await pling.ready;
    await Promise.all(hs.map((h) => h.declared));
    try {
      for (let i = 1; i <= 3; i++) {
        const before = reads;
        const d = await pling.surface.handle(req("describe"));
        assert.equal(d.ok, true, JSON.stringify(d.error));
        assert.equal(reads - before, 1, `describe ${i} ran the records reader ${reads - before} times`);
        const mine = d.result.capabilities.filter((c) => c.record && c.record.kind === kind);
        assert.equal(mine.length, 5);
        assert.equal(d.result.context.records[kind].total, n);
      }
    } finally {
      hs.forEach((h) => h.dispose());
    }
  });
}
