// The handler's own CPU cost per request, measured in Node (see bench/README.md, "CPU cost").
//
// Inside workerd the clocks stand still while JavaScript runs and only move across I/O (a
// Spectre mitigation), so timing app.fetch in a loop there measures D1 waits, not JavaScript.
// Instead the same bundle wrangler builds for the bench worker is imported into Node and its
// fetch handler is called in a loop, with env.DB a shim that runs every statement on the real
// local D1 (so the handler sees real rows) and tracks the time spent waiting on it. Handler cost
// = CPU time of the Node process (process.cpuUsage: user + system, so time the scheduler gave
// to other processes on a busy machine is not counted) over the call, minus the CPU it used
// while any D1 call was in flight (the shim's own HTTP round trip). The wall-clock variant
// (wall time minus D1 wait) is kept beside it.
import { mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { pathOf } from "./cases.mjs";
import { createD1Shim } from "./d1-shim.mjs";
import { wranglerSync } from "./server.mjs";

/** @returns {Promise<{ fetch: (req: Request, env: unknown, ctx: unknown) => Promise<Response> }>} */
export async function loadBundle() {
  const out = mkdtempSync(path.join(tmpdir(), "edge-store-bench-bundle-"));
  wranglerSync(["deploy", "--dry-run", "--outdir", out]);
  // The bundle is ESM; .mjs makes Node read it as such without a package.json beside it.
  renameSync(path.join(out, "index.js"), path.join(out, "index.mjs"));
  const mod = await import(pathToFileURL(path.join(out, "index.mjs")).href);
  rmSync(out, { recursive: true, force: true }); // loaded; the files are no longer needed
  return mod.default;
}

/**
 * @param {{ fetch: (req: Request, env: unknown, ctx: unknown) => Promise<Response> }} worker
 * @param {{ base: string, authorization: string, apiKey: string }} target
 * @param {import("./cases.mjs").Case} c
 */
export async function measureCpu(worker, target, c) {
  const shim = createD1Shim(target.base, target.authorization);
  // Wait time is the union of the intervals in which at least one D1 call was in flight, so
  // concurrent calls (Promise.all) are not subtracted twice.
  const env = { DB: trackUnion(shim.db), API_KEY: target.apiKey, DEFAULT_CURRENCY: "SEK" };
  const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} };
  const warmup = Math.max(3, Math.round(c.cpuIterations / 5));
  /** @type {number[]} */
  const samples = [];
  /** @type {number[]} */
  const wallSamples = [];
  let calls = 0;
  let statements = 0;
  // The app writes one JSON log line per request: still built (that is the handler's cost), but
  // not printed here, where it would bury the table on stdout.
  const log = console.log;
  console.log = () => {};
  try {
    return await loop();
  } finally {
    console.log = log;
  }

  async function loop() {
    for (let i = 0; i < warmup + c.cpuIterations; i++) {
      const req = new Request(`http://bench.local${pathOf(c, i)}`, {
        method: c.method,
        headers: { authorization: target.authorization, "content-type": "application/json" },
        body: c.body?.(i),
      });
      wait.ms = 0;
      wait.cpuMs = 0;
      shim.state.calls = 0;
      shim.state.statements = 0;
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const res = await worker.fetch(req, env, ctx);
      const t1 = performance.now();
      const used = process.cpuUsage(c0);
      await res.arrayBuffer();
      if (res.status < 200 || res.status > 299) throw new Error(`${c.id}: ${res.status} during the CPU run`);
      if (i >= warmup) {
        samples.push((used.user + used.system) / 1000 - wait.cpuMs);
        wallSamples.push(t1 - t0 - wait.ms);
        calls += shim.state.calls;
        statements += shim.state.statements;
      }
    }
    /** @param {number[]} xs @param {number} p */
    const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
    return {
      median: q(samples, 0.5),
      p90: q(samples, 0.9),
      wallMedian: q(wallSamples, 0.5),
      calls: calls / samples.length,
      statements: statements / samples.length,
    };
  }
}

const wait = { ms: 0, cpuMs: 0, inFlight: 0, since: 0, cpuSince: process.cpuUsage() };

/**
 * Wraps the shim's round-trip methods to keep `wait.ms` as the union of in-flight intervals.
 * @param {ReturnType<typeof createD1Shim>["db"]} db
 */
function trackUnion(db) {
  /** @template T @param {() => Promise<T>} f @returns {Promise<T>} */
  const tracked = async (f) => {
    if (wait.inFlight++ === 0) {
      wait.since = performance.now();
      wait.cpuSince = process.cpuUsage();
    }
    try {
      return await f();
    } finally {
      if (--wait.inFlight === 0) {
        wait.ms += performance.now() - wait.since;
        const u = process.cpuUsage(wait.cpuSince);
        wait.cpuMs += (u.user + u.system) / 1000;
      }
    }
  };
  /** @param {any} stmt @returns {any} */
  const wrapStmt = (stmt) => ({
    __inner: stmt,
    bind: (/** @type {unknown[]} */ ...p) => wrapStmt(stmt.bind(...p)),
    all: () => tracked(() => stmt.all()),
    run: () => tracked(() => stmt.run()),
    raw: (/** @type {any} */ o) => tracked(() => stmt.raw(o)),
    first: (/** @type {any} */ col) => tracked(() => stmt.first(col)),
  });
  return {
    prepare: (/** @type {string} */ sql) => wrapStmt(db.prepare(sql)),
    batch: (/** @type {any[]} */ stmts) => tracked(() => db.batch(stmts.map((s) => s.__inner))),
    exec: (/** @type {string} */ sql) => tracked(() => db.exec(sql)),
  };
}
