// CPU per request measured inside workerd: the V8 sampling profiler of the Worker's isolate,
// driven over the Chrome DevTools Protocol on `wrangler dev --inspector-port` (see
// bench/README.md, "Method"). Workers' clocks stand still while JavaScript runs, so the Worker
// cannot time itself; the profiler samples from outside the isolate.
import WebSocket from "ws";

/**
 * Sampling interval asked of the profiler, in microseconds. With isolated cores (isolate.mjs) the
 * sampler keeps to it, and every sample's signal costs the Worker's thread a few µs: at 50 µs the
 * method check read a loop 1.25 of its unprofiled time, at 200 µs 1.05. Without isolation 50 µs
 * is asked and about one sample per 130 µs arrives (bench/README.md, "Method").
 * @param {boolean} isolated
 */
export const samplingUs = (isolated) => Number(process.env.BENCH_SAMPLING_US) || (isolated ? 200 : 50);

/**
 * Frames that are not the isolate's own work. `(idle)` is the isolate waiting for I/O; `(program)`
 * is V8 outside any JavaScript frame, which in workerd is mostly the event loop between a D1 call
 * and its answer (the calibration check shows that counting it adds the D1 wait); `(root)` is the
 * tree's root. `(garbage collector)` IS counted: collection runs on the request's thread and is
 * billed as its CPU.
 */
const NOT_BUSY = new Set(["(idle)", "(program)", "(root)"]);

/**
 * @typedef {{ nodes: { id: number, children?: number[], callFrame: { functionName: string, url: string, lineNumber?: number } }[],
 *   startTime: number, endTime: number, samples: number[], timeDeltas: number[] }} Profile
 */

/** A gap between two busy samples longer than this may be a wait (see busyMs). */
export const WAIT_GAP_US = 500;

/**
 * Which gaps between busy samples are waits (busyMs): `"d1"`, only those at a D1 call; `"any"`,
 * every one not at a collection. `"any"` is sound only when the sampler has a core of its own
 * (bench/lib/isolate.mjs): without one, a late sample is the sampler's delay, not a wait.
 * @typedef {"d1" | "any"} GapRule
 */

/**
 * Whether each node of the profile is a frame of, or called from, workerd's D1 binding
 * (`cloudflare-internal:d1-api`): the JavaScript that sends a query and decodes its answer.
 * @param {Profile} p
 */
function d1Frames(p) {
  /** @type {Map<number, number>} */
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  /** @type {Map<number, boolean>} */
  const inD1 = new Map();
  /** @param {number} id @returns {boolean} */
  const walk = (id) => {
    const known = inD1.get(id);
    if (known !== undefined) return known;
    const n = byId.get(id);
    const up = parent.get(id);
    const v = n?.callFrame.url === "cloudflare-internal:d1-api" || (up !== undefined && walk(up));
    inD1.set(id, v);
    return v;
  };
  for (const n of p.nodes) walk(n.id);
  return inD1;
}

/**
 * The gaps of a profile that are waits, by the rule given: for sample i (both it and the one
 * before busy), whether its delta is a wait rather than the isolate's work.
 * @param {Profile} p
 * @param {GapRule} rule
 */
function waitGaps(p, rule) {
  const inD1 = d1Frames(p);
  const gc = new Set(p.nodes.filter((n) => n.callFrame.functionName === "(garbage collector)").map((n) => n.id));
  /** @param {number} i */
  return (i) => {
    if (p.timeDeltas[i] <= WAIT_GAP_US) return false;
    const [a, b] = [p.samples[i - 1], p.samples[i]];
    if (inD1.get(a) || inD1.get(b)) return true;
    return rule === "any" && !gc.has(a) && !gc.has(b);
  };
}

/**
 * Busy time of a profile, in ms. Sample i at time t_i carries timeDeltas[i] = t_i - t_(i-1).
 * The delta is counted only when the samples at both ends of it were busy: the first sample after
 * an await carries the whole wait before it (the profiler takes no samples while the isolate
 * waits), so summing every busy sample's delta would add the D1 wait. The interval that ends in
 * a resumption is credited one sampling interval at most, the profiler's own resolution.
 *
 * More waits hide between busy samples. Local D1, the Cache API's stand-in and the dev server's
 * entry worker (which streams a request's body in) run on the Worker's own thread, and while the
 * thread runs them, ours is neither busy nor idle: the profiler takes no sample at all (V8 samples
 * only an isolate that is entered). So an `await` on one of them can show as a busy sample before
 * it, a gap of the service's whole run, and a busy sample after it, with no idle sample between.
 * A deployed Worker's D1 and cache are remote and its body comes from the network: the isolate
 * idles, unbilled. Such a gap (longer than WAIT_GAP_US) is credited one interval: with `"d1"`
 * only at a D1-binding frame; with `"any"`, the rule of isolated runs, anywhere but at a
 * collection (bench/README.md, "Waits on the services beside the Worker"). The method check in
 * every run shows the effect on a loop around one D1 query and around one cache delete.
 * @param {Profile} p
 * @param {number} intervalUs the interval the profile was sampled at
 * @param {GapRule} [rule]
 */
export function busyMs(p, intervalUs, rule = "d1") {
  /** @type {Map<number, boolean>} */
  const busy = new Map();
  for (const n of p.nodes) busy.set(n.id, !NOT_BUSY.has(n.callFrame.functionName));
  const isWait = waitGaps(p, rule);
  const isD1Wait = rule === "d1" ? isWait : waitGaps(p, "d1");
  let us = 0;
  let naiveUs = 0;
  let gapUs = 0;
  // What the "d1" rule reads, printed beside the "any" rule's figures (bench/README.md, Method).
  let d1OnlyUs = 0;
  for (let i = 1; i < p.samples.length; i++) {
    const d = p.timeDeltas[i];
    if (!busy.get(p.samples[i])) continue;
    naiveUs += d;
    if (!busy.get(p.samples[i - 1])) {
      us += Math.min(d, intervalUs);
      d1OnlyUs += Math.min(d, intervalUs);
      continue;
    }
    if (isWait(i)) {
      us += intervalUs;
      gapUs += d - intervalUs;
    } else us += d;
    d1OnlyUs += isD1Wait(i) ? intervalUs : d;
  }
  return { ms: us / 1000, naiveMs: naiveUs / 1000, gapMs: gapUs / 1000, d1OnlyMs: d1OnlyUs / 1000 };
}

/**
 * Self time per function (busy samples only, the same rules as busyMs), for finding where a case
 * spends its CPU: the top `n` as "name (file): ms".
 * @param {Profile} p
 * @param {number} n
 * @param {number} intervalUs
 * @param {GapRule} [rule]
 */
export function topFunctions(p, n, intervalUs, rule = "d1") {
  /** @type {Map<number, { functionName: string, url: string, lineNumber?: number }>} */
  const frames = new Map(p.nodes.map((x) => [x.id, x.callFrame]));
  const isWait = waitGaps(p, rule);
  /** @type {Map<string, number>} */
  const self = new Map();
  for (let i = 1; i < p.samples.length; i++) {
    const f = frames.get(p.samples[i]);
    const prev = frames.get(p.samples[i - 1]);
    if (!f || !prev || NOT_BUSY.has(f.functionName) || NOT_BUSY.has(prev.functionName)) continue;
    const d = p.timeDeltas[i];
    // The same rule as busyMs: a wait is not the function's.
    const gap = isWait(i);
    // Anonymous functions are told apart by their place in the bundle (line numbers from 1).
    const key = f.functionName || `(anonymous ${f.url.split("/").pop()}:${(f.lineNumber ?? -1) + 1})`;
    self.set(key, (self.get(key) ?? 0) + (gap ? intervalUs : d) / 1000);
  }
  return [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
}

/**
 * A CDP session on the inspector port of `wrangler dev` (its proxy lists one target, the Worker).
 * @param {number} port
 */
export async function connect(port) {
  /** @type {{ webSocketDebuggerUrl: string }[]} */
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${port}`);
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let next = 1;
  /** @type {Map<number, { resolve: (v: any) => void, reject: (e: Error) => void, timer: NodeJS.Timeout }>} */
  const pending = new Map();
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data));
    const p = msg.id !== undefined ? pending.get(msg.id) : undefined;
    if (!p) return; // events (console messages and the like) are not needed here
    pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.error) p.reject(new Error(`CDP ${msg.error.message}`));
    else p.resolve(msg.result);
  });
  ws.on("close", () => {
    for (const p of pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error("inspector connection closed"));
    }
    pending.clear();
  });
  /**
   * @param {string} method
   * @param {Record<string, unknown>} [params]
   * @param {number} [timeoutMs]
   * @returns {Promise<any>}
   */
  const send = (method, params = {}, timeoutMs = 30_000) =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`CDP ${method}: no answer in ${timeoutMs / 1000} s`));
      }, timeoutMs);
      pending.set(id, { resolve, reject, timer });
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send("Profiler.enable");
  /** Run after every Profiler.start, before the lead (bench/lib/isolate.mjs moves the sampler). */
  let afterStart = async () => {};
  return {
    send,
    /** The interval asked of the profiler (samplingUs), in µs; set before the first profile. */
    intervalUs: 0,
    /** @param {number} us */
    async setSampling(us) {
      await send("Profiler.setSamplingInterval", { interval: us });
      this.intervalUs = us;
    },
    /** @param {() => Promise<void>} f */
    onStart(f) {
      afterStart = f;
    },
    /**
     * Profiles one call of `run` (one request): the profiler starts `leadMs` before it, because
     * samples of the first milliseconds after Profiler.start go missing.
     * @template T
     * @param {() => Promise<T>} run
     * @param {number} [leadMs]
     * @returns {Promise<{ result: T, profile: Profile }>}
     */
    async profile(run, leadMs = 15) {
      await send("Profiler.start");
      try {
        await afterStart();
        await new Promise((r) => setTimeout(r, leadMs));
        const result = await run();
        const stopped = await send("Profiler.stop");
        // wrangler dev rebuilds the Worker when a file it bundles changes, and a new isolate has
        // no profile to give: say so rather than fail on the missing field.
        if (!stopped?.profile) throw new Error("Profiler.stop gave no profile: did a source file change mid-run?");
        return { result, profile: /** @type {Profile} */ (stopped.profile) };
      } catch (e) {
        await send("Profiler.stop").catch(() => {});
        throw e;
      }
    },
    close: () => ws.terminate(),
  };
}
