// What a run is asked (its flags and BENCH_* variables: bench/README.md), the bench's fixed
// settings and targets, and the helpers every phase uses (log, quantile, fmt).
import { mkdirSync } from "node:fs";

export const LOAD = { connections: 8, warmupSeconds: 1, seconds: 6, rounds: 3 };
// Profiled requests per case, after warm-up ones that are not counted (JIT, caches). 30, so that
// a p90 is the 27th of 30: one preempted request on a shared machine does not decide it.
export const PROFILE = { warmup: 3, requests: Number(process.env.BENCH_REQUESTS) || 30 };
export const FREE_PLAN_CPU_MS = 10;
export const STARTUP_LIMIT_MS = 1000;
export const RATIO_TARGET = 0.9;
export const CONTENTION_TARGET = 0.01;
// The whole run is cut off after this long (a hung wrangler must not hang the bench).
export const DEADLINE_MS = Number(process.env.BENCH_DEADLINE_MS) || 15 * 60_000;
export const started = Date.now();
export const apiKey = `bench-${process.pid}`;
export const authorization = `Basic ${Buffer.from(`${apiKey}:${apiKey}`).toString("base64")}`;
export const withNode = process.argv.includes("--node");
export const withLoad = !process.argv.includes("--no-load");
export const withReadme = process.argv.includes("--readme");
// --rows (or BENCH_ROWS_ONLY=1): the rows phase alone, no profiler and no load (bench/lib/rows.mjs).
// --docs with it also writes the free-plan table of docs/performance.md (bench/lib/free-plan.mjs).
export const rowsOnly = process.argv.includes("--rows") || process.env.BENCH_ROWS_ONLY === "1";
export const withDocs = process.argv.includes("--docs");
// --throughput: the store against the bare Worker under wrk, alone (bench/lib/throughput.mjs).
export const throughputOnly = process.argv.includes("--throughput");
// BENCH_ONLY=sync-128,get-128 runs just those cases (for a quick before/after of one change).
// BENCH_PROFILES=<dir>: every profiled request's profile as <case>-<n>.cpuprofile (Chrome DevTools
// opens them), to see where a case's CPU goes.
export const PROFILES_DIR = process.env.BENCH_PROFILES;
if (PROFILES_DIR) mkdirSync(PROFILES_DIR, { recursive: true });
export const only = process.env.BENCH_ONLY?.split(",").filter(Boolean);

/** @param {string} s */
export const log = (s) => process.stderr.write(`[bench +${((Date.now() - started) / 1000).toFixed(0)}s] ${s}\n`);

/** @param {number[]} xs @param {number} p */
export const quantile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];

/** @param {number | undefined} x @param {number} [d] */
export const fmt = (x, d = 1) => (x === undefined || Number.isNaN(x) ? "n/a" : x.toFixed(d));
