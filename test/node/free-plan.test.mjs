// The free-plan table of docs/performance.md is the one bench/lib/free-plan.mjs renders from the
// figures of the run that wrote it (bench/free-plan.json, by `npm run bench -- --rows --docs`): an
// edit by hand, or a change of the rendering without a run, fails here.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { CAPS, freePlanTable, GOAL, MARKERS, OPERATIONS, withTable } from "../../bench/lib/free-plan.mjs";

const root = path.resolve(import.meta.dirname, "../..");
const page = readFileSync(path.join(root, "docs/performance.md"), "utf8");
const { when, figures } = JSON.parse(readFileSync(path.join(root, "bench/free-plan.json"), "utf8"));

test("docs/performance.md shows the table the bench's figures give", () => {
  assert.equal(page, withTable(page, freePlanTable(figures, when)));
});

test("the figures hold every operation of the table and the goal's", () => {
  for (const id of [...OPERATIONS.map((o) => o.id), GOAL.push, GOAL.order]) {
    assert.ok(figures[id]?.written >= 0 && figures[id]?.read >= 0, `bench/free-plan.json lacks ${id}`);
  }
});

test("the goal row is met exactly when both daily sums are inside the caps", () => {
  const day = (/** @type {number} */ pushW, /** @type {number} */ orderW) =>
    freePlanTable(
      { ...figures, [GOAL.push]: { read: 1000, written: pushW }, [GOAL.order]: { read: 10, written: orderW } },
      "a test",
    )
      .split("\n")
      .at(-1);
  // 96 pushes and 1,000 orders: at 500 and 52 rows written, 48,000 + 52,000 = 100,000: inside.
  assert.match(String(day(500, 52)), /\| met \|$/);
  assert.match(String(day(500, 53)), /MISSED/);
  assert.equal(CAPS.written, 100_000);
  const a = page.indexOf(MARKERS.start);
  assert.ok(a > 0 && page.indexOf(MARKERS.end) > a, "docs/performance.md keeps its markers");
});
