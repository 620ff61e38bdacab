import { env } from "cloudflare:workers";
import { getTableConfig } from "drizzle-orm/sqlite-core";
import { beforeAll, describe, expect, it } from "vitest";
import { products, variants } from "../src/db/schema";
import { MAX_VARIANTS } from "../src/products/schema";
import { wrapD1 } from "./d1-wrap";
import { post, put, subscribeAll, uid } from "./helpers";

// Rows a PUT writes, as D1 bills them (each result's meta.rows_written): what changed and nothing
// else (docs/design.md, "Writes"). `least` is derived from the schema: each changed row, plus one
// entry for each index of its table covering a column that changes (getTableConfig), plus the
// version row of each changed product (its ETag must move with it). Bookkeeping beside it is at
// most 3 rows: here the catalogue's version (no endpoint subscribes, so no outbox row; an event
// row costs 1 plus the outbox's index entries, and the events are counted in the last describe).

/** Index entries an UPDATE of `columns` of one row of `table` writes. */
function indexEntries(table: typeof products | typeof variants, columns: string[]) {
  return getTableConfig(table).indexes.filter((i) =>
    i.config.columns.some((c) => columns.includes((c as { name: string }).name)),
  ).length;
}

/** Rows of a change of `columns` of `n` rows of `table`, the product rows whose updated_at moves and their versions. */
const least = (table: typeof products | typeof variants, columns: string[], n: number, productsChanged: number) =>
  n * (1 + indexEntries(table, columns)) + (table === variants ? productsChanged : 0) + productsChanged;

const eventCount = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM events WHERE type = 'product.update'").first<{ n: number }>())?.n ??
  0;

const size = (i: number, sku: string, qty: number) => ({
  sku,
  variant_option1_name: "Size",
  variant_option1_value: `v${i}`,
  qty,
  price: 10,
});

/** A product of 2,048 variants synced again as it is, then with one qty changed: each answer's D1 counts. */
async function syncAgain() {
  const p = `${uid("R")}-`;
  const list = Array.from({ length: MAX_VARIANTS }, (_, i) => size(i, `${p}${i}`, i));
  const made = await post("/v1/products", { title: "Rows", price: 10, variants: { add: list } });
  expect(made.status, made.text).toBe(200);
  const id = made.json.products[0].product_id;
  const same = wrapD1();
  const r = await put("/v1/products", { product_id: id, variants: { sync: list } }, { env: { DB: same.db } });
  expect(r.status, r.text).toBe(200);
  expect(r.json.products[0].variants).toHaveLength(MAX_VARIANTS);
  const one = wrapD1();
  list[7] = { ...list[7], qty: 700 };
  const changed = await put("/v1/products", { product_id: id, variants: { sync: list } }, { env: { DB: one.db } });
  expect(changed.status, changed.text).toBe(200);
  expect(changed.json.products[0].variants[7].qty).toBe(700);
  return { same: same.counts, one: one.counts };
}

/** 100 products of one SKU each, a stock tool's batch of all of them unchanged, then with 2 changed. */
async function stockTool() {
  const p = `${uid("T")}-`;
  const made = await post(
    "/v1/products",
    Array.from({ length: 100 }, (_, i) => ({ title: `T${i}`, price: 10, sku: `${p}${i}`, stock: 5 })),
  );
  expect(made.json.success).toBe(100);
  const batch = (changed: number[]) =>
    Array.from({ length: 100 }, (_, i) => ({ sku: `${p}${i}`, stock: changed.includes(i) ? 6 : 5, price: 10 }));
  const same = wrapD1();
  expect((await put("/v1/products", batch([]), { env: { DB: same.db } })).json.success).toBe(100);
  const two = wrapD1();
  expect((await put("/v1/products", batch([3, 50]), { env: { DB: two.db } })).json.success).toBe(100);
  return { same: same.counts, two: two.counts };
}

/** 10 products of 10 SKUs each; a stock tool's batch of all 100 unchanged; each call's rows read. */
async function stockToolReads() {
  const p = `${uid("U")}-`;
  for (let j = 0; j < 10; j++) {
    const list = Array.from({ length: 10 }, (_, k) => size(k, `${p}${j}-${k}`, 5));
    const made = await post("/v1/products", { title: `U${j}`, price: 10, variants: { add: list } });
    expect(made.status, made.text).toBe(200);
  }
  const batch = Array.from({ length: 100 }, (_, k) => ({ sku: `${p}${Math.floor(k / 10)}-${k % 10}`, stock: 5 }));
  const w = wrapD1();
  const r = await put("/v1/products", batch, { env: { DB: w.db } });
  expect(r.json.success, r.text).toBe(100);
  return w.counts;
}

// Where the rows went, for a failure's message: each statement's rows written, in order.
const shown = (c: { rows: { written: number }[] }) => JSON.stringify(c.rows.map((r) => r.written));

describe("rows a PUT writes", () => {
  it("the derived least: qty, price and SKU are in no index, option values and positions are", () => {
    expect(indexEntries(variants, ["qty", "price", "sku"])).toBe(0);
    expect(indexEntries(variants, ["option1_value"])).toBe(1);
    expect(indexEntries(variants, ["position"])).toBe(1);
    expect(indexEntries(products, ["stock", "title"])).toBe(0);
    expect(indexEntries(products, ["slug"])).toBe(1);
  });

  it(`a sync of ${MAX_VARIANTS} variants sent again writes nothing; with one qty changed, that row`, async () => {
    const { same, one } = await syncAgain();
    expect(same.rowsWritten, shown(same)).toBeLessThanOrEqual(3);
    expect(one.rowsWritten, shown(one)).toBeLessThanOrEqual(least(variants, ["qty"], 1, 1) + 3);
  });

  it("a stock tool's batch of 100 SKUs writes nothing when nothing changed, and what changed when 2 did", async () => {
    const { same, two } = await stockTool();
    expect(same.rowsWritten, shown(same)).toBeLessThanOrEqual(3);
    expect(two.rowsWritten, shown(two)).toBeLessThanOrEqual(least(products, ["stock"], 2, 2) + 3);
  });
});

// Rows a stock tool's batch reads (docs/design.md, "Writes"). A plain read of the same work looks
// each SKU up in the registry's index and reads its variant by key: 100 list rows, 100 index
// rows, 100 variants. The read batch here reads the list and the registry twice (the products and
// their variants are two statements), each product's 10 variants twice (the rows, and the
// structure the write's guard holds), the products and their versions; the sizes estimate, an
// ORDER BY, `IN (SELECT ... json_each)` and the SKU owners' own lookup are not read at all.
describe("rows a PUT reads", () => {
  const shownRead = (c: { rows: { sql: string; read: number }[] }) =>
    c.rows.map((r) => `${r.read} ${r.sql.replace(/\s+/g, " ").slice(0, 60)}`).join("\n");

  it("a stock tool's batch of 100 SKUs over 10 products reads its read batch in 2 statements, about 6 rows a SKU", async () => {
    const c = await stockToolReads();
    // The owners of SKUs that only select are the rows the selection reads: no lookup of their
    // own, and no slug is given, so the read is the products and their variants.
    expect(c.statementsPerCall[0]).toBe(2);
    const read = c.rows.slice(0, 2).reduce((n, r) => n + r.read, 0);
    expect(read, shownRead(c)).toBeLessThanOrEqual(2 * (100 + 100) + 2 * 100 + 10 + 10 + 20);
    // The whole request: the read, the guard (the products' structure again) and the answer (the
    // products as stored, every variant).
    expect(c.rowsRead, shownRead(c)).toBeLessThanOrEqual(1000);
  });
});

describe("events of those writes", () => {
  beforeAll(subscribeAll);

  it("a product.update only for a product that changed", async () => {
    const before = await eventCount();
    await syncAgain();
    // The sync sent again: none; one qty changed: one.
    expect(await eventCount()).toBe(before + 1);
    await stockTool();
    expect(await eventCount()).toBe(before + 3);
  });
});
