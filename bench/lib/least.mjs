// The least a correct write must write, per case, derived from the schema D1 has (its indexes and
// AUTOINCREMENT tables, read by /__bench/schema) and what the case changes; each case's plain
// baseline; and the rows, CPU and D1 targets (bench/README.md, "Rows").

/**
 * @typedef {Record<string, { autoincrement: boolean, indexes: { name: string, columns: string[] }[] }>} Schema
 * @typedef {{ rows: number, text: string }} Part
 * @typedef {ReturnType<typeof writer>} Writer
 */

/**
 * What one change costs in D1's rows written, with the derivation as text: a row written is one
 * row plus an entry of every index that holds a column the statement sets (an insert: every index
 * of the table), plus sqlite_sequence once for an insert statement into an AUTOINCREMENT table.
 * @param {Schema} schema
 */
export function writer(schema) {
  /** @param {string} name */
  const table = (name) => {
    const t = schema[name];
    if (!t) throw new Error(`least: the schema has no table ${name}`);
    return t;
  };
  return {
    /**
     * `n` rows of `name` updated, setting the columns `set` (only those whose value changes).
     * @param {string} name @param {string[]} set @param {number} [n]
     * @returns {Part}
     */
    update(name, set, n = 1) {
      const hit = table(name).indexes.filter((i) => i.columns.some((c) => set.includes(c)));
      const each = 1 + hit.length;
      const why = hit.length ? `the row, ${hit.map((i) => i.name).join(", ")}` : "no index holds them";
      return { rows: n * each, text: `${n} x ${name} setting ${set.join(", ")} (${each}: ${why})` };
    },
    /**
     * `n` rows of `name` inserted by one statement.
     * @param {string} name @param {number} [n]
     * @returns {Part}
     */
    insert(name, n = 1) {
      const t = table(name);
      const each = 1 + t.indexes.length;
      const seq = t.autoincrement ? 1 : 0;
      const why = t.indexes.length ? `the row, ${t.indexes.map((i) => i.name).join(", ")}` : "the row";
      return {
        rows: n * each + seq,
        text: `${n} x ${name} inserted (${each}: ${why})${seq ? " + sqlite_sequence" : ""}`,
      };
    },
  };
}

/**
 * Stock counts changed on `variants` variants of `products` products: each variant's qty (and
 * its updated_at), each product's version row (what If-Match and the write guards read) and the
 * catalogue's version once (what the storefront's cache keys on); `productRow` adds each product's
 * own updated_at, which every product write moves (docs/products.md, "Updating products") and an
 * order's stock decrement does not.
 * @param {Writer} w @param {number} variants @param {number} products @param {boolean} productRow
 * @returns {Part[]}
 */
function stock(w, variants, products, productRow) {
  if (!variants) return [];
  return [
    w.update("variants", ["qty", "updated_at"], variants),
    ...(productRow ? [w.update("products", ["updated_at"], products)] : []),
    w.update("product_versions", ["version"], products),
    w.update("catalog_version", ["version"]),
  ];
}

/** An order of `lines` lines over as many variants of as many products, its customer known already. @param {Writer} w @param {number} orders @param {number} lines @param {number} products */
const order = (w, orders, lines, products) => [
  w.insert("orders", orders),
  w.insert("order_lines", lines),
  ...stock(w, lines, products, false),
];

/**
 * Per case id: `least` (what it must write at the least, as parts of a sum; an empty list is
 * nothing), `unchanged` (a body that changes nothing: at most NOTHING_CHANGED rows), `plain` (the
 * hand-written baseline of the same work: rows, CPU and D1 time beside it), `requests` (a push of
 * several requests: the bookkeeping allowance is per request). Cases not named have no least.
 * @type {Record<string, { least?: (w: Writer) => Part[], unchanged?: boolean, plain?: string, requests?: number }>}
 */
export const ROWS = {
  "orders-1x3": { least: (w) => order(w, 1, 3, 3), plain: "batch" },
  "orders-1x3-key": { least: (w) => order(w, 1, 3, 3), plain: "batch" },
  "orders-1x3-cold": { least: (w) => order(w, 1, 3, 3), plain: "batch" },
  "orders-20x5": { least: (w) => order(w, 20, 100, 40), plain: "batch-20x5" },
  stock: { least: (w) => stock(w, 1, 1, true) },
  "stock-cold": { least: (w) => stock(w, 1, 1, true) },
  "stock-100": { least: (w) => stock(w, 100, 1, true) },
  "stock-batch": { least: (w) => stock(w, 100, 40, true) },
  "stock-batch-same": { least: () => [], unchanged: true },
  "stock-batch-2": { least: (w) => stock(w, 2, 2, true) },
  "push-5000": { least: (w) => pushLeast(w), requests: 50 },
  "push-5000-same": { least: () => [], unchanged: true, requests: 50 },
  "orders-status": {
    least: (w) => [w.update("orders", ["status", "status_date", "updated_at"])],
    plain: "status-batch",
  },
  "orders-cancel": {
    least: (w) => [
      w.update("orders", ["status", "status_date", "date_cancelled", "updated_at"]),
      ...stock(w, 3, 3, false),
    ],
    plain: "cancel-batch",
  },
  "sync-10": { least: (w) => stock(w, 10, 1, true) },
  "sync-100": { least: (w) => stock(w, 100, 1, true) },
  "sync-2048": { least: (w) => stock(w, 2048, 1, true), plain: "d1-sync-2048" },
  "sync-2048-js": { least: (w) => stock(w, 2048, 1, true), plain: "d1-sync-2048" },
  "sync-2048-minimal": { least: (w) => stock(w, 2048, 1, true), plain: "d1-sync-2048" },
  "sync-2048-same": { least: () => [], unchanged: true, plain: "d1-sync-2048" },
  "sync-2048-one": { least: (w) => stock(w, 1, 1, true), plain: "d1-sync-2048" },
  "sync-2048-refused": { least: () => [] },
  "update-2048": { least: (w) => stock(w, 2048, 1, true) },
  "adjust-2048": { least: (w) => stock(w, 2048, 1, true) },
  "update-2048-refused": { least: () => [] },
  "create-2048": {
    least: (w) => [
      w.insert("products"),
      w.insert("variants", 2048),
      w.insert("skus", 2048),
      w.insert("product_versions"),
      w.update("catalog_version", ["version"]),
    ],
    plain: "d1-create-2048",
  },
  "get-2048": { plain: "d1-get-2048" },
  "get-2048-pk": { plain: "d1-get-2048" },
  "list-products": { plain: "d1-list-products" },
};

/** The push's 50 requests each change 2 counts of 2 products (bench/lib/cases-rows.mjs). @param {Writer} w */
function pushLeast(w) {
  const one = stock(w, 2, 2, true);
  const rows = one.reduce((n, p) => n + p.rows, 0);
  return [{ rows: 50 * rows, text: `50 requests x (${one.map((p) => p.text).join(" + ")} = ${rows})` }];
}

/** Rows of bookkeeping a write may add to its least (outbox, idempotency record, history). */
export const BOOKKEEPING = 3;
/** What a body that changes nothing may write. */
export const NOTHING_CHANGED = 3;
export const READ_RATIO = 1.25;
export const CPU_RATIO = 1.5;
export const D1_RATIO = 1.5;

/**
 * A case's least, summed, with its derivation; undefined where the case has none.
 * @param {Schema | undefined} schema @param {string} id
 */
export function leastOf(schema, id) {
  const spec = ROWS[id];
  if (!spec?.least || !schema) return undefined;
  const parts = spec.least(writer(schema));
  const rows = parts.reduce((n, p) => n + p.rows, 0);
  return { rows, text: parts.length ? `${parts.map((p) => p.text).join(" + ")} = ${rows}` : "nothing changes: 0" };
}

/**
 * The targets a case's figures are held to, each "met" or "MISSED" with its figures.
 * @param {string} id
 * @param {Record<string, any>} rows every case's row (its `rows`: read, written; its `workerd`: CPU and SQL medians)
 * @param {Schema | undefined} schema
 * @returns {string[]}
 */
export function rowTargets(id, rows, schema) {
  const spec = ROWS[id] ?? {};
  const r = rows[id];
  const out = [];
  const verdict = (/** @type {boolean} */ ok) => (ok ? "met" : "**MISSED**");
  const least = leastOf(schema, id);
  if (r?.rows && least) {
    const allowed = spec.unchanged
      ? NOTHING_CHANGED * (spec.requests ?? 1)
      : least.rows + BOOKKEEPING * (spec.requests ?? 1);
    const what = spec.unchanged ? "unchanged" : "written";
    out.push(`${what} ${r.rows.written} <= ${allowed}: ${verdict(r.rows.written <= allowed)}`);
  }
  const plain = spec.plain ? rows[spec.plain] : undefined;
  if (r?.rows && plain?.rows && r.case.method === "GET") {
    const x = r.rows.read / Math.max(1, plain.rows.read);
    out.push(`read ${x.toFixed(2)}x plain: ${verdict(x <= READ_RATIO)}`);
  }
  if (r?.workerd && plain?.workerd) {
    const x = r.workerd.median / plain.workerd.median;
    out.push(`CPU ${x.toFixed(2)}x plain: ${verdict(x <= CPU_RATIO)}`);
    const sql = r.workerd.plainSqlMedian ?? plain.workerd.sqlMedian;
    if (sql && r.workerd.sqlMedian !== undefined) {
      const y = r.workerd.sqlMedian / sql;
      out.push(`D1 ${y.toFixed(2)}x plain: ${verdict(y <= D1_RATIO)}`);
    }
  }
  return out;
}
