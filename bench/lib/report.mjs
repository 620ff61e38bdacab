// What a run prints and writes: the machine it ran on, the table, the heap and method-check
// lines, and the targets (bench/README.md, "Latest results").
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { leastOf, ROWS, rowTargets } from "./least.mjs";
import {
  CONTENTION_TARGET,
  FREE_PLAN_CPU_MS,
  fmt,
  LOAD,
  PROFILE,
  RATIO_TARGET,
  STARTUP_LIMIT_MS,
  withNode,
} from "./options.mjs";
import { SYNC_SIZES } from "./seed.mjs";

const root = path.resolve(import.meta.dirname, "../..");

/** What the first line of the report says of the machine: cores, CPU, node, wrangler, load. */
export function machine() {
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
  const model = /model name\s*:\s*(.*)/.exec(cpuinfo)?.[1] ?? "unknown CPU";
  let nproc = String(os.availableParallelism());
  try {
    nproc = execFileSync("nproc", { encoding: "utf8" }).trim();
  } catch {}
  const wrangler = JSON.parse(readFileSync(path.join(root, "node_modules/wrangler/package.json"), "utf8")).version;
  return {
    nproc,
    model,
    node: process.version,
    wrangler,
    loadavg: os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" "),
  };
}

/**
 * The heap figures of a case (heapAround, over its 5 requests): live before (median), live
 * mid-answer (the largest reading after a collection, in 2 requests), V8's count at its peak
 * (garbage included, nothing collected on purpose; median and max of 3 requests).
 * @param {{ heapBaseMedian?: number, heapLiveMax?: number, heapPeakMedian?: number, heapPeakMax?: number, heapCollections?: number }} w
 */
export function heapText(w) {
  const mb = (/** @type {number | undefined} */ x) => (x === undefined ? "n/a" : fmt(x / 1024 / 1024, 1));
  return (
    `isolate heap: live ${mb(w.heapBaseMedian)} MB before, live at most ${mb(w.heapLiveMax)} MB mid-answer ` +
    `(${w.heapCollections} collections in 2 requests), peak ${mb(w.heapPeakMedian)} MB median and ${mb(w.heapPeakMax)} MB max ` +
    `with uncollected garbage (3 requests)`
  );
}

/**
 * @param {Record<string, any>} rows
 * @param {ReturnType<typeof machine>} m
 * @param {{ ms: number, spanMs: number } | undefined} startup
 * @param {Awaited<ReturnType<typeof import("./calibrate.mjs").calibrate>> | undefined} cal
 * @param {Record<string, boolean> | undefined} compiled
 * @param {{ text: string | undefined, interval: number, rule: string }} sampling
 * @param {import("./least.mjs").Schema | undefined} schema
 */
export function render(rows, m, startup, cal, compiled, sampling, schema) {
  const out = [];
  out.push(
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${m.nproc} cores (${m.model}), node ${m.node}, ` +
      `wrangler ${m.wrangler} (local workerd); load average at start ${m.loadavg}. CPU: the isolate's profiler, ` +
      `${PROFILE.requests} requests per case after ${PROFILE.warmup} warm-up, sampling every ${sampling.interval} µs, ${sampling.text ?? "not isolated"}; gaps credited as waits: ${sampling.rule === "any" ? "any of over 0.5 ms away from a collection" : "D1's only"}. ` +
      `Load: autocannon ${LOAD.connections} connections (contention rows: their writers), ${LOAD.seconds} s per case after ` +
      `${LOAD.warmupSeconds} s warm-up; a ratio alternates ${LOAD.rounds} slices of the case and its baseline.`,
    "",
    `| case | workerd CPU ms median | p90 | < ${FREE_PLAN_CPU_MS} ms | D1 round trips / statements | D1 SQL ms median | D1 ratio | rows read / written | plain's | least written | rows, CPU, D1 targets | req/s | ratio | non-2xx |${withNode ? " Node CPU ms median |" : ""}`,
    `|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|${withNode ? "---:|" : ""}`,
  );
  for (const r of Object.values(rows)) {
    const c = r.case;
    if (r.status !== "ok") {
      out.push(`| ${c.label} | ${r.status} | | | | | | | | | | | | |${withNode ? " |" : ""}`);
      continue;
    }
    const cols = rowColumns(c.id, rows, schema);
    const w = r.workerd;
    const load = r.rps !== undefined;
    let ratio = "";
    if (load && c.contention) ratio = `503: ${fmt((100 * r.s503) / Math.max(1, r.total), 1)}%`;
    else if (load) ratio = r.ratio !== undefined ? `${fmt(r.ratio, 2)} of ${c.baseline}` : c.baseline ? "n/a" : "-";
    // The case's D1 SQL time over its plain-SQL baseline's (bench/worker/plain.ts).
    // Over the D1 baseline, or where a case has none, the plain baseline its rows stand beside.
    const d1Base = c.d1Baseline ?? ROWS[c.id]?.plain;
    const plainSql = w?.plainSqlMedian ?? (d1Base ? rows[d1Base]?.workerd?.sqlMedian : undefined);
    const d1Ratio = plainSql && w?.sqlMedian !== undefined ? `${fmt(w.sqlMedian / plainSql, 2)} of ${d1Base}` : "";
    const met = w ? (w.median < FREE_PLAN_CPU_MS && w.p90 < FREE_PLAN_CPU_MS ? "met" : "**MISSED**") : "";
    out.push(
      `| ${c.label} | ${w ? fmt(w.median, 2) : ""} | ${w ? fmt(w.p90, 2) : ""} | ${met} | ${w ? (w.calls === undefined ? "-" : `${w.calls} / ${w.statements}${w.others ? ` (${w.others})` : ""}`) : ""} | ${w?.sqlMedian !== undefined ? fmt(w.sqlMedian, 0) : ""} | ${d1Ratio} | ${cols.join(" | ")} | ` +
        `${load ? fmt(r.rps) : ""} | ${ratio} | ${load ? r.bad : ""} |${withNode ? ` ${r.cpu ? fmt(r.cpu.median, 2) : ""} |` : ""}`,
    );
  }
  out.push("");
  for (const r of Object.values(rows)) {
    const w = r.workerd;
    if (!r.case.heap || !w) continue;
    out.push(
      `${r.case.label}: ${fmt(w.bytes / 1024 / 1024, 2)} MB of answer, ${fmt(w.median / (w.bytes / 1024 / 1024), 1)} ms of CPU a MB; ` +
        `wall ${fmt(w.wallMedian, 0)} ms median, ${fmt(w.wallP90, 0)} p90 (profiler on, local D1); D1 SQL ${fmt(w.sqlMedian ?? NaN, 0)} / ${fmt(w.sqlP90 ?? NaN, 0)} ms; ` +
        `${heapText(w)}.`,
    );
  }
  out.push("");
  out.push(
    `Startup (\`wrangler check startup\`, the store's bundle): ${startup ? `${fmt(startup.ms, 1)} ms of CPU (limit ${STARTUP_LIMIT_MS} ms: ${startup.ms < STARTUP_LIMIT_MS ? "met" : "MISSED"})` : "n/a (failed)"}.`,
  );
  if (cal) out.push(`Method check: ${calibrationText(cal)}`);
  const differ = Object.values(rows).filter((r) => r.workerd && Math.abs(r.workerd.d1Only.p90 - r.workerd.p90) >= 0.05);
  if (sampling.rule === "any" && differ.length) {
    out.push(
      `Crediting only D1's gaps as waits (the rule of runs without isolated cores; Method, "Waits on the services beside the Worker"), median / p90: ${differ
        .map((r) => `${r.case.id} ${fmt(r.workerd.d1Only.median, 2)} / ${fmt(r.workerd.d1Only.p90, 2)}`)
        .join(", ")}.`,
    );
  }
  if (compiled) {
    const names = Object.entries(compiled);
    out.push(
      `Compiled validators in this workerd: ${names.map(([k, v]) => `${k} ${v ? "yes" : "NO (runtime parser)"}`).join(", ")}.`,
    );
  }
  out.push("", "Targets:", "");
  /** @param {string | undefined} status */
  const na = (status) => (status?.startsWith("n/a") ? status : `n/a (${status ?? "not run"})`);
  // Pages answered whole past the free plan's CPU by their size alone (docs/modelled-reads.md,
  // "Paging"): reported as where a page leaves the budget, not as a miss.
  const bySize = Object.values(rows).filter((r) => r.workerd && r.case.bySize);
  const missed = Object.values(rows).filter(
    (r) => r.workerd && !r.case.bySize && (r.workerd.median >= FREE_PLAN_CPU_MS || r.workerd.p90 >= FREE_PLAN_CPU_MS),
  );
  const measured = Object.values(rows).filter((r) => r.workerd && !r.case.bySize).length;
  out.push(
    `- workerd CPU < ${FREE_PLAN_CPU_MS} ms (median and p90), every case of a bounded size: ${missed.length ? `MISSED by ${missed.map((r) => r.case.id).join(", ")}` : "met"} (${measured - missed.length} of ${measured} met)`,
  );
  for (const r of bySize) {
    const w = r.workerd;
    out.push(
      `- ${r.case.id}, answered whole at ${fmt(w.bytes / 1024 / 1024, 2)} MB: ${fmt(w.median, 2)} / ${fmt(w.p90, 2)} ms (${w.median < FREE_PLAN_CPU_MS && w.p90 < FREE_PLAN_CPU_MS ? "inside" : "past"} the free plan's ${FREE_PLAN_CPU_MS} ms by its size; not a target)`,
    );
  }
  /** @param {string} id @param {number} min */
  const ratioTarget = (id, min) => {
    const r = rows[id];
    if (r?.status !== "ok" || r.ratio === undefined) return na(r?.status);
    const x = r.ratio;
    return `${x >= min ? "met" : "MISSED"} (${fmt(x, 2)})`;
  };
  out.push(
    `- orders 1x3 >= ${RATIO_TARGET} of the hand-written batch: warm ${ratioTarget("orders-1x3", RATIO_TARGET)}, cold ${ratioTarget("orders-1x3-cold", RATIO_TARGET)}`,
  );
  out.push(
    `- stock by SKU >= ${RATIO_TARGET} of the hand-written batch: warm ${ratioTarget("stock", RATIO_TARGET)}, cold ${ratioTarget("stock-cold", RATIO_TARGET)}`,
  );
  /** @param {string} id */
  const trips = (id) => (rows[id]?.workerd ? `${rows[id].workerd.calls}` : na(rows[id]?.status));
  out.push(
    `- orders in one D1 round trip: warm ${trips("orders-1x3")}, cold ${trips("orders-1x3-cold")} (${rows["orders-1x3-cold"]?.workerd?.calls === 1 ? "met" : "MISSED"})`,
  );
  /** @param {string} id */
  const consumer = (id) => {
    const w = rows[id]?.workerd;
    if (!w) return na(rows[id]?.status);
    const ok = w.median < FREE_PLAN_CPU_MS && w.p90 < FREE_PLAN_CPU_MS;
    return `${ok ? "met" : "MISSED"} (${fmt(w.median, 2)} / ${fmt(w.p90, 2)} ms, D1 ${w.calls} / ${w.statements})`;
  };
  out.push(
    `- queue consumer invocation at its fetch budget < ${FREE_PLAN_CPU_MS} ms: receivers 200 ${consumer("consume")}, receivers 500 ${consumer("consume-fail")}, keys not cached ${consumer("consume-cold")}`,
  );
  for (const n of [8, 16]) {
    const r = rows[`contention-${n}`];
    if (!r?.total) {
      out.push(`- 503 share at ${n} writers: ${na(r?.status)}`);
      continue;
    }
    const share = r.s503 / r.total;
    const verdict =
      n === 8
        ? ` (target < ${CONTENTION_TARGET * 100}%: ${share < CONTENTION_TARGET ? "met" : "MISSED"})`
        : " (no target)";
    out.push(`- 503 share at ${n} writers on one product: ${fmt(share * 100, 1)}% of ${r.total}${verdict}`);
  }
  const curve = SYNC_SIZES.map((n) => ({ n, ms: rows[`sync-${n}`]?.workerd?.median }));
  if (curve.every((p) => p.ms !== undefined)) {
    const pts = curve.map((p) => `${p.n}: ${fmt(p.ms, 2)} ms`).join(", ");
    // Slope of log(cost) over log(variants) from the smallest to the largest: 1 is linear, 2 quadratic.
    const [lo, hi] = [curve[0], curve[curve.length - 1]];
    const slope = Math.log(hi.ms / lo.ms) / Math.log(hi.n / lo.n);
    out.push(
      `- sync cost curve: ${pts}; log-log slope ${lo.n} -> ${hi.n}: ${fmt(slope, 2)} (${slope <= 1.1 ? "met: no faster than linear" : "MISSED: faster than linear"})`,
    );
  }
  return out.join("\n");
}

/**
 * A case's rows columns: its rows read / written, its plain baseline's, the least it must write,
 * and its targets (bench/lib/least.mjs).
 * @param {string} id @param {Record<string, any>} rows @param {import("./least.mjs").Schema | undefined} schema
 */
export function rowColumns(id, rows, schema) {
  /** @param {any} x */
  const rw = (x) => (x ? `${x.read} / ${x.written}${x.same === false ? " (varied)" : ""}` : "");
  const plain = ROWS[id]?.plain;
  const least = leastOf(schema, id);
  return [
    rw(rows[id]?.rows),
    plain ? rw(rows[plain]?.rows) || "n/a" : "-",
    least ? String(least.rows) : "-",
    rowTargets(id, rows, schema).join("; "),
  ];
}

/**
 * The rows phase's report (`--rows`): per case its rows, statements and time beside its plain
 * baseline and least, its targets, then how each least was derived.
 * @param {Record<string, any>} rows @param {ReturnType<typeof machine>} m @param {import("./least.mjs").Schema | undefined} schema
 * @param {number} requests
 */
export function renderRows(rows, m, schema, requests) {
  const out = [
    `Rows ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${m.nproc} cores, node ${m.node}, wrangler ${m.wrangler} (local workerd and D1); ` +
      `load average at start ${m.loadavg}. ${requests} requests per case (a push: ${requests} pushes), no profiler, no load; ` +
      `rows as D1's meta reports them, summed over the request's calls, the last request's shown ("varied" where the requests differed).`,
    "",
    "| case | rows read | rows written | D1 round trips / statements | wall ms | plain's read / written | least written | targets |",
    "|---|---:|---:|---:|---:|---:|---:|---|",
  ];
  for (const r of Object.values(rows)) {
    const c = r.case;
    if (r.status !== "ok" || !r.rows) {
      out.push(`| ${c.label} | ${r.status === "ok" ? "n/a (not measured)" : r.status} | | | | | | |`);
      continue;
    }
    const [, plain, least, targets] = rowColumns(c.id, rows, schema);
    const x = r.rows;
    out.push(
      `| ${c.label} | ${x.read}${x.same ? "" : ` (${x.reads.join(", ")})`} | ${x.written}${x.same ? "" : ` (${x.writes.join(", ")})`} | ${x.calls} / ${x.statements} | ${fmt(x.ms, 0)} | ${plain} | ${least} | ${targets} |`,
    );
  }
  out.push("", "Least written, as derived from the schema (bench/lib/least.mjs):", "");
  for (const r of Object.values(rows)) {
    const least = leastOf(schema, r.case.id);
    if (least) out.push(`- ${r.case.id}: ${least.text}`);
  }
  return out.join("\n");
}

/** @param {Awaited<ReturnType<typeof import("./calibrate.mjs").calibrate>>} cal */
export function calibrationText(cal) {
  return (
    `a loop Node times at ${cal.expectedMs} ms of CPU (${cal.iterations} iterations) reads ${fmt(cal.burnMs, 2)} ms ` +
    `(${fmt(cal.burnMs / cal.expectedMs, 2)} of Node's figure; another V8); twice the loop reads ${fmt(cal.burn2Ms, 2)} ms ` +
    `(${fmt(cal.burn2Ms / cal.burnMs, 2)} x the loop; 2 expected); the loop, one D1 query, the loop again reads ` +
    `${fmt(cal.burnD1Ms, 2)} ms (${fmt(cal.burnD1Ms / cal.burn2Ms, 2)} of twice the loop; 1 expected), where summing ` +
    `every sample's delta would say ${fmt(cal.naiveD1Ms, 2)} ms; the loop, one Cache API delete, the loop again reads ` +
    `${fmt(cal.burnCacheMs, 2)} ms (${fmt(cal.burnCacheMs / cal.burn2Ms, 2)} of twice the loop; 1 expected), where crediting ` +
    `only D1's gaps would say ${fmt(cal.burnCacheD1OnlyMs, 2)} ms. Timed from outside without the profiler, twice the ` +
    `loop takes ${fmt(cal.wall2Ms, 2)} ms of wall time, which the profile reads as ${fmt(cal.burn2Ms / cal.wall2Ms, 2)} of it ` +
    `(1 expected, whatever speed this isolate runs the loop at). Medians, net of the empty route (${fmt(cal.bareMs, 2)} ms).`
  );
}
