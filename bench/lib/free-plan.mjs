// The free-plan shop of docs/performance.md, from the rows phase's figures: how many of each
// everyday operation fit the Workers Free plan's daily rows, and the goal shop's day. The one source
// of that table: `npm run bench -- --rows --docs` writes it and bench/free-plan.json (the figures),
// and test/node/free-plan.test.mjs renders the JSON again and compares.

export const CAPS = { written: 100_000, read: 5_000_000 };
export const MARKERS = { start: "<!-- bench:free-plan:start -->", end: "<!-- bench:free-plan:end -->" };

/** The operations of the table, each a case of the bench. */
export const OPERATIONS = [
  { id: "orders-1x3", what: "orders of 3 lines (`POST /v1/orders`)" },
  {
    id: "push-5000",
    what: "full stock pushes of a 5,000-SKU catalogue, 2 % of the counts changed (50 batches of 100 SKUs)",
  },
  { id: "push-5000-same", what: "the same push with nothing changed" },
  { id: "get-10-pk", what: "product page views, a storefront reading a product of 10 variants past the cache" },
  { id: "get-2048-pk", what: "product page views of a product of 2,048 variants past the cache" },
];

/** The goal shop: a push every 15 minutes with 2 % changed, and its orders. */
export const GOAL = { pushes: 96, push: "push-5000", orders: 1000, order: "orders-1x3" };

/**
 * The figures the table is made from, picked out of a run's rows.
 * @param {Record<string, any>} rows
 * @returns {Record<string, { read: number, written: number }>}
 */
export function figures(rows) {
  /** @type {Record<string, { read: number, written: number }>} */
  const out = {};
  for (const id of new Set([...OPERATIONS.map((o) => o.id), GOAL.push, GOAL.order])) {
    const r = rows[id]?.rows;
    if (r) out[id] = { read: r.read, written: r.written };
  }
  return out;
}

const n = (/** @type {number} */ x) => (Number.isFinite(x) ? Math.floor(x).toLocaleString("en-US") : "unlimited");

/**
 * The table as docs/performance.md shows it.
 * @param {Record<string, { read: number, written: number }>} f
 * @param {string} when the run's date and what it ran on
 */
export function freePlanTable(f, when) {
  const out = [
    `Measured by \`npm run bench -- --rows --docs\` (${when}). Rows each, and how many fit in a day inside the free plan's ${n(CAPS.written)} rows written and ${n(CAPS.read)} read:`,
    "",
    "| a day of | rows written each | rows read each | a day by rows written | a day by rows read | a day, at most |",
    "|---|---:|---:|---:|---:|---:|",
  ];
  for (const o of OPERATIONS) {
    const x = f[o.id];
    if (!x) {
      out.push(`| ${o.what} | n/a | n/a | | | |`);
      continue;
    }
    const byW = CAPS.written / x.written;
    const byR = CAPS.read / x.read;
    out.push(`| ${o.what} | ${n(x.written)} | ${n(x.read)} | ${n(byW)} | ${n(byR)} | ${n(Math.min(byW, byR))} |`);
  }
  const p = f[GOAL.push];
  const o = f[GOAL.order];
  out.push("");
  if (!p || !o) {
    out.push("The goal shop: n/a (its cases were not measured).");
    return out.join("\n");
  }
  const written = GOAL.pushes * p.written + GOAL.orders * o.written;
  const read = GOAL.pushes * p.read + GOAL.orders * o.read;
  const met = written <= CAPS.written && read <= CAPS.read;
  out.push(
    "| the goal shop's day | rows written | rows read | inside both caps |",
    "|---|---:|---:|---|",
    `| 5,000 SKUs whose stock tool pushes every figure every 15 minutes (${GOAL.pushes} pushes, 2 % changed each time) and ${n(GOAL.orders)} orders of 3 lines | ${n(written)} (${((100 * written) / CAPS.written).toFixed(0)} % of the cap) | ${n(read)} (${((100 * read) / CAPS.read).toFixed(0)} % of the cap) | ${met ? "met" : "**MISSED**"} |`,
  );
  return out.join("\n");
}

/**
 * `text` with the table between the markers replaced.
 * @param {string} text @param {string} table
 */
export function withTable(text, table) {
  const a = text.indexOf(MARKERS.start);
  const b = text.indexOf(MARKERS.end);
  if (a < 0 || b < a) throw new Error("docs/performance.md lacks the free-plan markers");
  return `${text.slice(0, a + MARKERS.start.length)}\n${table}\n${text.slice(b)}`;
}
