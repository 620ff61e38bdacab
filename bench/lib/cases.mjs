// What a case is, the list of every case (cases-everyday.mjs, then cases-large.mjs), and the
// probe that tells whether a case can be measured.
import { everydayCases } from "./cases-everyday.mjs";
import { largeCases } from "./cases-large.mjs";
import { rowsCases } from "./cases-rows.mjs";
import { request } from "./requests.mjs";

/**
 * @typedef {import("./requests.mjs").Target} Target
 * @typedef {{
 *   id: string, label: string, method: string, path: string | ((i: number) => string),
 *   body?: (i: number) => string,
 *   baseline?: "bare" | "batch" | "status-batch" | "cancel-batch",
 *   d1Baseline?: string,
 *   load: boolean,
 *   cpuIterations: number,
 *   profile?: boolean,
 *   connections?: number,
 *   contention?: boolean,
 *   heap?: boolean,
 *   bySize?: boolean,
 *   requests?: number,
 *   headers?: Record<string, string>,
 *   status?: number,
 *   verify?: (t: Target, invocations: number) => Promise<{ ok: boolean, text: string }>,
 *   push?: { requests: number, start: () => void, body: (j: number) => string },
 * }} Case
 *
 * `path`: a function of the request's index (-1 for the probe and the load phase) where each
 * request must differ, e.g. to miss the edge cache every time. `d1Baseline`: the hand-written plain-SQL
 * case (bench/worker/plain.ts) whose D1 SQL time the "D1 ratio" column divides this case's by. `load`: also run under autocannon (req/s, and the ratio to `baseline`). `profile` (default
 * true): workerd CPU per request. `cpuIterations`: requests of the optional Node CPU phase
 * (`--node`). `connections`: autocannon connections (default 8). `contention`: a load case that
 * reports its share of 503 answers (writers losing the race) instead of a ratio. `heap`: also its wall time,
 * answer bytes and D1 counts after the body (a streamed answer), and the isolate's heap in 5 more
 * requests. `requests`: profiled requests, when fewer than the bench's (a case of seconds). `bySize`:
 * a page whose CPU grows with its size, never refused: where it passes 10 ms is reported, not missed. `verify`: run
 * after the case's profiled requests, with how many requests it served (probe included); says
 * whether they all did the work the case claims. `push`: not one request but `requests` of them in a
 * row (`start` before each push), reported as the push's total rows and time (bench/lib/rows.mjs).
 */

/**
 * The path of a case's request `i` (see Case).
 * @param {Case} c
 * @param {number} i
 */
export const pathOf = (c, i) => (typeof c.path === "function" ? c.path(i) : c.path);

/**
 * The ids seeding leaves for the cases (bench/lib/seed.mjs).
 * @typedef {{ syncIds: Record<number, number>, syncVariantIds: Record<number, number[]>, sameId: number, oneId: number,
 *   pageBig: number[], pageOffset: number, statusOrder: number, baselineStatusOrder: number,
 *   cancelOrders: number[], baselineCancelOrders: number[], secretKey: string, publishableKey: string,
 *   schema: import("./least.mjs").Schema }} Ids
 */

/**
 * Every case, in the order they run and print.
 * @param {Ids} ids
 * @returns {Case[]}
 */
export function cases(ids) {
  const everyday = everydayCases(ids);
  const large = largeCases(ids);
  const rows = Object.fromEntries([...Object.values(rowsCases(ids))].flat().map((c) => [c.id, c]));
  /** Puts the named cases of cases-rows.mjs after case `id`. @param {Case[]} list @param {string} id @param {string[]} ids */
  const after = (list, id, ids) => {
    const i = list.findIndex((c) => c.id === id);
    if (i < 0) throw new Error(`cases: no case ${id}`);
    list.splice(i + 1, 0, ...ids.map((k) => rows[k]));
  };
  after(everyday, "get-product-key", ["get-10-pk"]);
  after(everyday, "orders-20x5", ["batch-20x5"]);
  after(everyday, "stock-batch", ["stock-batch-same", "stock-batch-2"]);
  after(everyday, "orders-cancel", ["push-5000", "push-5000-same"]);
  after(large, "sync-2048-minimal", ["sync-2048-same", "sync-2048-one"]);
  after(large, "get-2048-pk", ["d1-get-2048"]);
  for (const c of large) if (c.id === "get-2048" || c.id === "get-2048-pk") c.d1Baseline = "d1-get-2048";
  return [...everyday, ...large];
}

/**
 * One request of the case, to tell "not merged yet" (the app's own 404 `no route ...`) and
 * failures apart from a case that can be measured.
 * @param {Target} t @param {Case} c
 * @returns {Promise<{ ok: true } | { ok: false, reason: string }>}
 */
export async function probe(t, c) {
  // A push is measured whole or not at all: its first failing request stops it (bench/lib/rows.mjs).
  if (c.push) return { ok: true };
  const r = await request(t, c.method, pathOf(c, -1), c.body?.(0));
  if (r.status === 404 && /^no route /.test(r.json?.error ?? ""))
    return { ok: false, reason: "n/a (endpoint not merged)" };
  if (c.status ? r.status !== c.status : r.status < 200 || r.status > 299) {
    const why = r.json?.errors?.[0] ?? r.json?.error ?? r.text.slice(0, 120);
    return { ok: false, reason: `error ${r.status}: ${why}` };
  }
  const results = r.json?.results;
  if (results && typeof results === "object") {
    const failed = Object.values(results).find((x) => x && x.success === false);
    if (failed) return { ok: false, reason: `error: an order failed: ${failed.errors?.[0]}` };
  }
  return { ok: true };
}
