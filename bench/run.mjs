// npm run bench [-- --readme] : see bench/README.md.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { cases, probe, seed } from "./lib/cases.mjs";
import { loadBundle, measureCpu } from "./lib/cpu.mjs";
import { cpuSeconds, startWorker } from "./lib/server.mjs";

const LOAD = { connections: 8, warmupSeconds: 1, seconds: 5 };
const FREE_PLAN_CPU_MS = 10;
const started = Date.now();
const here = import.meta.dirname;
const apiKey = `bench-${process.pid}`;
const authorization = `Basic ${Buffer.from(`${apiKey}:${apiKey}`).toString("base64")}`;

/** @param {string} s */
const log = (s) => process.stderr.write(`[bench +${((Date.now() - started) / 1000).toFixed(0)}s] ${s}\n`);

/**
 * @param {string} base
 * @param {import("./lib/cases.mjs").Case} c
 * @param {number} seconds
 * @returns {Promise<any>}
 */
function load(base, c, seconds) {
  let i = 0;
  return autocannon({
    url: base,
    connections: LOAD.connections,
    duration: seconds,
    requests: [
      {
        method: /** @type {any} */ (c.method),
        path: c.path,
        headers: { authorization, "content-type": "application/json" },
        setupRequest: (/** @type {any} */ req) => (c.body ? { ...req, body: c.body(i++) } : req),
      },
    ],
  });
}

function machine() {
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
  const model = /model name\s*:\s*(.*)/.exec(cpuinfo)?.[1] ?? "unknown CPU";
  let nproc = String(os.availableParallelism());
  try {
    nproc = execFileSync("nproc", { encoding: "utf8" }).trim();
  } catch {}
  const wrangler = JSON.parse(readFileSync(path.join(here, "../node_modules/wrangler/package.json"), "utf8")).version;
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

/** @param {number | undefined} x @param {number} [d] */
const fmt = (x, d = 1) => (x === undefined || Number.isNaN(x) ? "n/a" : x.toFixed(d));

async function main() {
  const m = machine();
  log(`machine: ${m.nproc} cores, ${m.model}, node ${m.node}, wrangler ${m.wrangler}, load average ${m.loadavg}`);
  const persistDir = mkdtempSync(path.join(os.tmpdir(), "edge-store-bench-d1-"));
  const server = await startWorker({ persistDir, apiKey });
  const target = { base: server.base, authorization, apiKey };
  /** @type {Record<string, any>} */
  const rows = {};
  try {
    log(`worker up on ${server.base} (D1 state in ${persistDir}); seeding`);
    const ids = await seed(target);
    const list = cases(ids);
    const workerd = server.workerdPids();

    for (const c of list) {
      const p = await probe(target, c);
      rows[c.id] = { case: c, status: p.ok ? "ok" : p.reason };
      if (!p.ok) {
        log(`${c.id}: ${p.reason}`);
        continue;
      }
      if (!c.load) continue;
      await load(server.base, c, LOAD.warmupSeconds);
      const cpu0 = cpuSeconds(workerd);
      const r = await load(server.base, c, LOAD.seconds);
      const cpu1 = cpuSeconds(workerd);
      const total = r.requests.total;
      Object.assign(rows[c.id], {
        rps: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        total,
        bad: r.non2xx + r.errors + r.timeouts,
        workerdCpuMs: total ? ((cpu1 - cpu0) * 1000) / total : undefined,
      });
      log(`${c.id}: ${fmt(r.requests.average)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms`);
    }

    log("CPU phase: the bench worker's bundle in Node, D1 waits subtracted");
    const worker = await loadBundle();
    for (const c of list) {
      if (rows[c.id].status !== "ok") continue;
      const cpu = await measureCpu(worker, target, c);
      Object.assign(rows[c.id], { cpu });
      log(`${c.id}: handler ${fmt(cpu.median, 3)} ms median, ${fmt(cpu.p90, 3)} ms p90, ${fmt(cpu.calls)} D1 calls`);
    }
  } finally {
    await server.stop();
    rmSync(persistDir, { recursive: true, force: true });
  }

  const report = render(rows, m);
  process.stdout.write(`${report}\n`);
  mkdirSync(path.join(here, "results"), { recursive: true });
  writeFileSync(path.join(here, "results/latest.md"), `${report}\n`);
  writeFileSync(
    path.join(here, "results/latest.json"),
    `${JSON.stringify({ machine: m, load: LOAD, rows: Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, { ...v, case: undefined }])) }, null, 2)}\n`,
  );
  if (process.argv.includes("--readme")) {
    const file = path.join(here, "README.md");
    const text = readFileSync(file, "utf8");
    const start = "<!-- bench:results:start -->";
    const end = "<!-- bench:results:end -->";
    const a = text.indexOf(start);
    const b = text.indexOf(end);
    if (a < 0 || b < 0) throw new Error("bench/README.md lacks the results markers");
    writeFileSync(file, `${text.slice(0, a + start.length)}\n${report}\n${text.slice(b)}`);
    log("bench/README.md updated");
  }
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/**
 * @param {Record<string, any>} rows
 * @param {ReturnType<typeof machine>} m
 */
function render(rows, m) {
  const out = [];
  out.push(
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${m.nproc} cores (${m.model}), node ${m.node}, ` +
      `wrangler ${m.wrangler} (local workerd); load average at start ${m.loadavg}. ` +
      `autocannon ${LOAD.connections} connections, ${LOAD.seconds} s per case after ${LOAD.warmupSeconds} s warm-up, over 127.0.0.1.`,
    "",
    "| case | req/s | p50 ms | p99 ms | ratio | non-2xx | handler CPU ms (median / p90) | D1 calls / statements per req | workerd CPU ms/req |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
  );
  for (const r of Object.values(rows)) {
    const c = r.case;
    if (r.status !== "ok") {
      out.push(`| ${c.label} | ${r.status} | | | | | | | |`);
      continue;
    }
    const base = c.baseline ? rows[c.baseline] : undefined;
    const ratio = base?.rps && r.rps ? `${fmt(r.rps / base.rps, 2)} of ${c.baseline}` : c.baseline ? "n/a" : "-";
    const load = r.rps !== undefined;
    out.push(
      `| ${c.label} | ${load ? fmt(r.rps) : "(CPU only)"} | ${load ? r.p50 : ""} | ${load ? r.p99 : ""} | ${load ? ratio : ""} | ${load ? r.bad : ""} | ` +
        `${r.cpu ? `${fmt(r.cpu.median, 3)} / ${fmt(r.cpu.p90, 3)}` : "n/a"} | ${r.cpu ? `${fmt(r.cpu.calls, 1)} / ${fmt(r.cpu.statements, 1)}` : ""} | ${load ? fmt(r.workerdCpuMs, 2) : ""} |`,
    );
  }
  out.push("", "Targets:", "");
  /** @param {string | undefined} status */
  const na = (status) => (status?.startsWith("n/a") ? status : `n/a (${status ?? "not run"})`);
  /** @param {string} id @param {number} min */
  const ratioTarget = (id, min) => {
    const r = rows[id];
    const b = rows[r?.case.baseline];
    if (r?.status !== "ok" || !r.rps || !b?.rps) return na(r?.status);
    const x = r.rps / b.rps;
    return `${x >= min ? "met" : "MISSED"} (${fmt(x, 2)})`;
  };
  /** @param {string} id @param {number} max */
  const cpuTarget = (id, max) => {
    const r = rows[id];
    if (!r?.cpu) return na(r?.status);
    return `${r.cpu.median < max ? "met" : "MISSED"} (${fmt(r.cpu.median, 3)} ms)`;
  };
  out.push(`- orders 1x3 >= 0.8 of the hand-written batch: ${ratioTarget("orders-1x3", 0.8)}`);
  out.push(`- stock update by SKU >= 0.8 of the hand-written batch: ${ratioTarget("stock", 0.8)}`);
  out.push(`- handler CPU < 2 ms: orders 1x3 ${cpuTarget("orders-1x3", 2)}; stock by SKU ${cpuTarget("stock", 2)}`);
  out.push(
    `- handler CPU < ${FREE_PLAN_CPU_MS} ms for the 2,048-variant sync: ${cpuTarget("sync-2048", FREE_PLAN_CPU_MS)}`,
  );
  const curve = [10, 100, 1000, 2048].map((n) => ({ n, ms: rows[`sync-${n}`]?.cpu?.median }));
  if (curve.every((p) => p.ms !== undefined)) {
    const pts = curve.map((p) => `${p.n}: ${fmt(p.ms, 3)} ms (${fmt((p.ms / p.n) * 1000, 2)} µs/variant)`).join(", ");
    // Slope of log(cost) over log(variants) between 100 and 2,048: 1 is linear, 2 quadratic.
    const slope = Math.log(curve[3].ms / curve[1].ms) / Math.log(2048 / 100);
    out.push(
      `- sync cost curve: ${pts}; log-log slope 100 -> 2,048: ${fmt(slope, 2)} (${slope <= 1.1 ? "met: no faster than linear" : "MISSED: faster than linear"})`,
    );
  } else {
    out.push(`- sync cost curve: ${na(rows["sync-10"]?.status)}`);
  }
  return out.join("\n");
}

main().catch((e) => {
  process.stderr.write(`${e?.stack ?? e}\n`);
  process.exit(1);
});
