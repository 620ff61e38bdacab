// The method check: the profiler read on a loop of known cost (bench/README.md, Method).
import { authorization, PROFILE, quantile } from "./options.mjs";
import { profiled } from "./profile.mjs";

/** Iterations of the bench worker's burn loop per CPU millisecond, timed in this Node process. */
function burnRate() {
  const burn = (/** @type {number} */ n) => {
    let x = 1;
    for (let i = 0; i < n; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
    return x;
  };
  burn(5_000_000); // optimise first
  /** @type {number[]} */
  const rates = [];
  for (let k = 0; k < 7; k++) {
    const c0 = process.cpuUsage();
    burn(5_000_000);
    const u = process.cpuUsage(c0);
    rates.push(5_000_000 / ((u.user + u.system) / 1000));
  }
  return quantile(rates, 0.5);
}

/**
 * The method checked on a loop of known cost: the burn route at a size Node times at 5 ms, at
 * twice that, as burn + one D1 query + burn, and as burn + one cache delete + burn. Each is net
 * of the empty route. Twice the loop must read twice the cost (nothing lost at the start of a
 * request), and the loop around a D1 query or a cache delete must read as the loop twice, not
 * plus the wait on local D1 or the cache's stand-in. The loop is also timed from outside,
 * unprofiled (wall time, net of the empty route's): the profile must read what the isolate took,
 * whatever speed V8 runs the loop at in this isolate (the ninth round in bench/README.md's history).
 * @param {import("./profile.mjs").Cdp} cdp
 * @param {string} base
 * @param {import("./profile.mjs").GapRule} rule
 */
export async function calibrate(cdp, base, rule) {
  const rate = burnRate();
  const ms = 5;
  const n = Math.round(rate * ms);
  /** @type {Record<string, number[]>} */
  const got = {
    bare: [],
    one: [],
    two: [],
    d1: [],
    naiveD1: [],
    cache: [],
    cacheD1Only: [],
    wallBare: [],
    wallTwo: [],
  };
  const wall = async (/** @type {string} */ p) => {
    const t0 = performance.now();
    await (await fetch(`${base}${p}`, { headers: { authorization } })).arrayBuffer();
    return performance.now() - t0;
  };
  // Short loops first, unprofiled, so V8 optimises the loop by its usual tier-up. V8 still runs
  // it unoptimised in some isolates for whole stretches (about 15 times Node's figure, seen with
  // and without the profiler): the wall-time comparison tells that from the profile misreading.
  for (let i = 0; i < 50; i++) {
    await (await fetch(`${base}/__bench/burn?n=${Math.round(n / 50)}`, { headers: { authorization } })).arrayBuffer();
  }
  for (let i = 0; i < PROFILE.warmup + PROFILE.requests; i++) {
    const z = await profiled(cdp, base, { method: "GET", path: "/__bench/burn?n=0" }, rule);
    const a = await profiled(cdp, base, { method: "GET", path: `/__bench/burn?n=${n}` }, rule);
    const b = await profiled(cdp, base, { method: "GET", path: `/__bench/burn?n=${2 * n}` }, rule);
    const d = await profiled(cdp, base, { method: "GET", path: `/__bench/burn?n=${n}&d1=1` }, rule);
    const k = await profiled(cdp, base, { method: "GET", path: `/__bench/burn?n=${n}&cache=1` }, rule);
    // Twice the loop, so the loop stands well above the jitter of a request's wall time.
    const wz = await wall("/__bench/burn?n=0");
    const wb = await wall(`/__bench/burn?n=${2 * n}`);
    if (i < PROFILE.warmup) continue;
    got.wallBare.push(wz);
    got.wallTwo.push(wb);
    got.bare.push(z.ms);
    got.one.push(a.ms);
    got.two.push(b.ms);
    got.d1.push(d.ms);
    got.naiveD1.push(d.naiveMs);
    got.cache.push(k.ms);
    got.cacheD1Only.push(k.d1OnlyMs);
  }
  const base0 = quantile(got.bare, 0.5);
  const net = (/** @type {number[]} */ xs) => quantile(xs, 0.5) - base0;
  return {
    expectedMs: ms,
    iterations: n,
    bareMs: base0,
    burnMs: net(got.one),
    burn2Ms: net(got.two),
    burnD1Ms: net(got.d1),
    naiveD1Ms: net(got.naiveD1),
    burnCacheMs: net(got.cache),
    burnCacheD1OnlyMs: net(got.cacheD1Only),
    wall2Ms: quantile(got.wallTwo, 0.5) - quantile(got.wallBare, 0.5),
  };
}
