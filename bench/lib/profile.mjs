// The CPU phase: a case's requests under workerd's profiler (their CPU, D1 counts and SQL time),
// the isolate's heap around a request without it, and the figures of the case.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { pathOf } from "./cases.mjs";
import { busyMs, topFunctions } from "./inspector.mjs";
import { authorization, fmt, log, PROFILE, PROFILES_DIR, quantile } from "./options.mjs";
import { heapText } from "./report.mjs";

/**
 * @typedef {Awaited<ReturnType<typeof import("./inspector.mjs").connect>>} Cdp
 * @typedef {import("./inspector.mjs").GapRule} GapRule
 */

/**
 * @param {Cdp} cdp
 * @param {string} base
 * @param {{ method: string, path: string, body?: string, headers?: Record<string, string> }} r
 * @param {GapRule} rule which gaps of no samples are waits (bench/lib/inspector.mjs, busyMs)
 */
export async function profiled(cdp, base, r, rule, after = false) {
  const { result, profile } = await cdp.profile(async () => {
    const t0 = performance.now();
    const res = await fetch(`${base}${r.path}`, {
      method: r.method,
      headers: { authorization, "content-type": "application/json", ...r.headers },
      body: r.body,
      signal: AbortSignal.timeout(60_000),
    });
    const bytes = (await res.arrayBuffer()).byteLength;
    return { res, bytes, wallMs: performance.now() - t0 };
  });
  // A streamed answer's headers count only its first round trip: with `after`, the whole
  // request's counts are read once its body is in, outside the profile.
  const { res, bytes, wallMs } = result;
  const counts = after ? (await fetch(`${base}/__bench/counts`, { headers: { authorization } })).headers : res.headers;
  return {
    status: res.status,
    d1: counts.get("x-bench-d1"),
    sqlMs: counts.get("x-bench-d1-ms"),
    rows: counts.get("x-bench-d1-rows"),
    bytes,
    wallMs,
    profile,
    ...busyMs(profile, cdp.intervalUs, rule),
  };
}

/**
 * The isolate's heap around one request, without the profiler (bench/README.md, Method, "Heap").
 * workerd's inspector leaves `HeapProfiler.collectGarbage` unanswered, but a heap snapshot
 * (`HeapProfiler.takeHeapSnapshot`) collects every unreachable object first, as V8 does before any
 * snapshot; after one, `Runtime.getHeapUsage` (V8's heap plus the ArrayBuffers' memory outside it)
 * is what the isolate holds live. `before`: live, after a snapshot taken before the request. Then
 * one of two readings:
 * - `"peak"`: V8's count read every millisecond or so while the request runs, uncollected garbage
 *   included, and nothing collected on purpose: at least what the request needed at once.
 * - `"live"`: the answer's body is read piece by piece, and after the first piece and then every
 *   100 ms the reader stops, a snapshot is taken and the count read: what the isolate holds live
 *   from one chunk to the next (the client holds the rest of the answer meanwhile, so the stream
 *   is mid-page). The snapshots' own data is dropped.
 * @param {Cdp} cdp
 * @param {string} base
 * @param {{ method: string, path: string, headers?: Record<string, string> }} r
 * @param {"peak" | "live"} mode
 */
export async function heapAround(cdp, base, r, mode) {
  const heapNow = async () => {
    const h = await cdp.send("Runtime.getHeapUsage");
    return h.usedSize + (h.backingStorageSize ?? 0);
  };
  const collect = () => cdp.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false }, 120_000);
  await cdp.send("HeapProfiler.enable");
  await collect();
  const before = await heapNow();
  let peak = before;
  let live = 0;
  let collections = 0;
  let done = false;
  const poll = (async () => {
    while (!done && mode === "peak") {
      peak = Math.max(peak, await heapNow());
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  })();
  const res = await fetch(`${base}${r.path}`, {
    method: r.method,
    headers: { authorization, "content-type": "application/json", ...r.headers },
    signal: AbortSignal.timeout(300_000),
  });
  if (!res.body) throw new Error(`${r.path}: no body`);
  const reader = res.body.getReader();
  let last = 0;
  for (;;) {
    const { done: end } = await reader.read();
    if (end) break;
    if (mode === "live" && performance.now() - last >= 100) {
      await collect();
      live = Math.max(live, await heapNow());
      collections++;
      last = performance.now();
    }
  }
  done = true;
  await poll;
  if (mode === "peak") peak = Math.max(peak, await heapNow());
  return { before, peak: mode === "peak" ? peak : undefined, live: collections ? live : undefined, collections };
}

/**
 * The CPU phase of one case its probe passed: its profiled requests (a read with a plain-SQL
 * baseline has the baseline's request after each), its heap in 5 more (`heap`), its check
 * (`verify`); their figures go to `row.workerd`, or `row.status` says the check failed.
 * @param {{ cdp: Cdp, target: import("./requests.mjs").Target, all: import("./cases.mjs").Case[], rule: GapRule }} run
 * @param {import("./cases.mjs").Case} c
 * @param {Record<string, any>} row
 */
export async function profileCase({ cdp, target, all, rule }, c, row) {
  const cpu = [];
  const naive = [];
  /** The same requests read by the "d1" rule, printed beside the table (Method). */
  const d1Only = [];
  /** @type {number[]} D1's own SQL time per request, not the isolate's CPU ("How to read them"). */
  const sql = [];
  /** Wall time (profiler on), heap peak and idle heap per request (with `heap`), answer bytes. */
  /** @type {number[]} */
  const wall = [];
  /** @type {number[]} */
  const heapPeaks = [];
  /** @type {number[]} */
  const heapBases = [];
  /** @type {number[]} live heap while streaming, per request (heapAround) */
  const heapLives = [];
  let heapCollections = 0;
  let bytes = 0;
  /** @type {string | null} */
  let d1 = null;
  /** Every profiled request's D1 count, for a case whose count varies (see `others` below). */
  /** @type {Map<string, number>} */
  const d1Seen = new Map();
  /** @type {any} */
  let slowest;
  /** Rows read and written per profiled request ("read/written"), for `row.rows`. @type {string[]} */
  const rowCounts = [];
  // A read's plain-SQL baseline, read right after each of the case's requests: taken a minute
  // apart, the two medians met different loads from other processes and their ratio swung
  // from 1.0 to 2.8 for the same code (bench/rounds.md, "The write plans and the page's SQL"). Not a write's: its
  // baseline writes the case's product, so each would find what the other just wrote.
  const plain = c.d1Baseline && c.method === "GET" ? all.find((b) => b.id === c.d1Baseline) : undefined;
  /** @type {number[]} */
  const plainSql = [];
  for (let i = 0; i < PROFILE.warmup + (c.requests ?? PROFILE.requests); i++) {
    const r = await profiled(
      cdp,
      target.base,
      { method: c.method, path: pathOf(c, i), body: c.body?.(i), headers: c.headers },
      rule,
      c.heap,
    );
    if (c.status ? r.status !== c.status : r.status < 200 || r.status > 299)
      throw new Error(`${c.id}: answered ${r.status} while profiled`);
    if (i < PROFILE.warmup) continue;
    if (PROFILES_DIR)
      writeFileSync(path.join(PROFILES_DIR, `${c.id}-${i - PROFILE.warmup}.cpuprofile`), JSON.stringify(r.profile));
    cpu.push(r.ms);
    naive.push(r.naiveMs);
    d1Only.push(r.d1OnlyMs);
    if (r.sqlMs !== null) sql.push(Number(r.sqlMs));
    if (plain) {
      const b = await profiled(
        cdp,
        target.base,
        { method: plain.method, path: pathOf(plain, i), headers: plain.headers },
        rule,
      );
      if (b.sqlMs !== null) plainSql.push(Number(b.sqlMs));
    }
    wall.push(r.wallMs);
    if (r.rows && r.rows !== "n/a") rowCounts.push(r.rows);
    bytes = r.bytes;
    d1 = r.d1;
    if (r.d1) d1Seen.set(r.d1, (d1Seen.get(r.d1) ?? 0) + 1);
    if (!slowest || r.ms > slowest.ms) slowest = r;
  }
  // The heap, in requests of its own: reading it while profiling would bill the reads as CPU.
  // Its peak in three, its live size mid-answer in two (collections would lower the peak).
  for (let i = 0; c.heap && i < 5; i++) {
    const mode = i % 2 ? "live" : "peak";
    const path = pathOf(c, i);
    const h = await heapAround(cdp, target.base, { method: c.method, path, headers: c.headers }, mode);
    heapBases.push(h.before);
    if (h.peak !== undefined) heapPeaks.push(h.peak);
    if (h.live !== undefined) heapLives.push(h.live);
    heapCollections += h.collections;
  }
  if (c.verify) {
    const v = await c.verify(target, 1 + PROFILE.warmup + PROFILE.requests);
    log(`${c.id}: ${v.ok ? "checked" : "CHECK FAILED"}: ${v.text}`);
    if (!v.ok) {
      row.status = `error: ${v.text}`;
      return;
    }
  }
  // The baselines under /__bench/ do not go through the counting wrapper: no count.
  const [calls, statements] = d1 ? d1.split("/").map(Number) : [undefined, undefined];
  // The last request's count, and how many requests counted otherwise: the cached storefront
  // read makes no query while the colo's 2 s version entry lives, and one after it expired,
  // which on a slow machine can fall between two profiled requests.
  const others = [...d1Seen]
    .filter(([k]) => k !== d1)
    .map(([k, n]) => `${k.replace("/", " / ")} in ${n} of ${PROFILE.requests}`)
    .join(", ");
  Object.assign(row, {
    workerd: {
      median: quantile(cpu, 0.5),
      p90: quantile(cpu, 0.9),
      naiveMedian: quantile(naive, 0.5),
      d1Only: { median: quantile(d1Only, 0.5), p90: quantile(d1Only, 0.9) },
      sqlMedian: sql.length ? quantile(sql, 0.5) : undefined,
      sqlP90: sql.length ? quantile(sql, 0.9) : undefined,
      plainSqlMedian: plainSql.length ? quantile(plainSql, 0.5) : undefined,
      wallMedian: quantile(wall, 0.5),
      wallP90: quantile(wall, 0.9),
      bytes,
      heapPeakMax: c.heap ? Math.max(...heapPeaks) : undefined,
      heapPeakMedian: c.heap ? quantile(heapPeaks, 0.5) : undefined,
      heapBaseMedian: c.heap ? quantile(heapBases, 0.5) : undefined,
      heapLiveMax: heapLives.length ? Math.max(...heapLives) : undefined,
      heapCollections,
      calls,
      statements,
      others,
      top: topFunctions(slowest.profile, 6, cdp.intervalUs, rule).map(([f, ms]) => `${f} ${ms.toFixed(1)}`),
    },
  });
  if (rowCounts.length) {
    const [read, written] = rowCounts[rowCounts.length - 1].split("/").map(Number);
    const same = new Set(rowCounts).size === 1;
    row.rows = { read, written, calls, statements, same, ...(same ? {} : { seen: [...new Set(rowCounts)] }) };
  }
  const w = row.workerd;
  log(
    `${c.id}: workerd CPU ${fmt(w.median, 2)} ms median, ${fmt(w.p90, 2)} p90, D1 ${d1}, rows ${rowCounts.at(-1) ?? "n/a"} (${fmt(w.sqlMedian ?? NaN, 0)} ms of SQL${w.plainSqlMedian !== undefined ? `; its plain SQL beside it ${fmt(w.plainSqlMedian, 0)}` : ""}); top: ${w.top.join(", ")}`,
  );
  if (c.heap) {
    log(
      `${c.id}: ${bytes} bytes; wall ${fmt(w.wallMedian, 1)} ms median, ${fmt(w.wallP90, 1)} p90 (profiler on); ` +
        `D1 SQL ${fmt(w.sqlMedian ?? NaN, 1)} ms median, ${fmt(w.sqlP90 ?? NaN, 1)} p90; ${heapText(w)}`,
    );
  }
}
