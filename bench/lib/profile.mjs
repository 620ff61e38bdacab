// One request of a case under workerd's profiler (its CPU, D1 counts and SQL time), and the
// isolate's heap around one request without it.
import { busyMs } from "./inspector.mjs";
import { authorization } from "./options.mjs";

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
