// npm run bench [-- --readme] [-- --node] [-- --no-load] : see bench/README.md.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { calibrate } from "./lib/calibrate.mjs";
import { cases, pathOf, probe } from "./lib/cases.mjs";
import { loadBundle, measureCpu } from "./lib/cpu.mjs";
import { busyMs, connect, samplingUs, topFunctions } from "./lib/inspector.mjs";
import { isolate } from "./lib/isolate.mjs";
import {
  apiKey,
  authorization,
  DEADLINE_MS,
  fmt,
  LOAD,
  log,
  only,
  PROFILE,
  PROFILES_DIR,
  quantile,
  started,
  withLoad,
  withNode,
  withReadme,
} from "./lib/options.mjs";
import { heapAround, profiled } from "./lib/profile.mjs";
import { calibrationText, heapText, machine, render } from "./lib/report.mjs";
import { seed } from "./lib/seed.mjs";
import { startWorker } from "./lib/server.mjs";

const here = import.meta.dirname;
const root = path.resolve(here, "..");

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
    connections: c.connections ?? LOAD.connections,
    duration: seconds,
    timeout: 30,
    requests: [
      {
        method: /** @type {any} */ (c.method),
        path: pathOf(c, -1),
        headers: { authorization, "content-type": "application/json", ...c.headers },
        setupRequest: (/** @type {any} */ req) => (c.body ? { ...req, body: c.body(i++) } : req),
      },
    ],
  });
}

/**
 * The Worker's startup (the runtime's limit is 1 s): `wrangler check startup` on the store's own
 * wrangler.toml bundles it as deploy would and profiles the evaluation of its modules.
 */
function measureStartup() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "edge-store-bench-startup-"));
  try {
    const outfile = path.join(dir, "startup.cpuprofile");
    execFileSync(
      process.execPath,
      [path.join(root, "node_modules/wrangler/bin/wrangler.js"), "check", "startup", "--outfile", outfile],
      {
        cwd: root,
        env: { ...process.env, WRANGLER_HIDE_BANNER: "true", WRANGLER_SEND_METRICS: "false", CI: "1" },
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 180_000,
      },
    );
    const profile = JSON.parse(readFileSync(outfile, "utf8"));
    // Default sampling interval (1 ms): busy-to-busy deltas at that resolution.
    return { ms: busyMs(profile, 1000).ms, spanMs: (profile.endTime - profile.startTime) / 1000 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Which gaps of no samples are waits (bench/lib/inspector.mjs, busyMs): every one away from a
 * collection once the sampler has a core of its own, else only D1's. Set with the CPU phase.
 * @type {import("./lib/inspector.mjs").GapRule}
 */
let gapRule = "d1";

async function main() {
  const m = machine();
  log(`machine: ${m.nproc} cores, ${m.model}, node ${m.node}, wrangler ${m.wrangler}, load average ${m.loadavg}`);
  const timer = setTimeout(() => {
    log(`deadline of ${DEADLINE_MS / 1000} s passed: stopping`);
    process.exit(2); // the exit hook of startWorker ends wrangler's process group
  }, DEADLINE_MS);
  timer.unref();
  for (const sig of /** @type {const} */ (["SIGINT", "SIGTERM"])) process.once(sig, () => process.exit(130));

  log("startup: wrangler check startup");
  /** @type {{ ms: number, spanMs: number } | undefined} */
  let startup;
  try {
    startup = measureStartup();
    log(`startup: ${fmt(startup.ms, 1)} ms busy (profile spans ${fmt(startup.spanMs, 1)} ms)`);
  } catch (e) {
    log(`startup: failed (${String(e).slice(0, 200)})`);
  }

  const persistDir = mkdtempSync(path.join(os.tmpdir(), "edge-store-bench-d1-"));
  /** @type {Record<string, any>} */
  const rows = {};
  /** @type {Awaited<ReturnType<typeof calibrate>> | undefined} */
  let calibration;
  const server = await startWorker({ persistDir, apiKey });
  const target = { base: server.base, authorization, apiKey };
  /** @type {Awaited<ReturnType<typeof connect>> | undefined} */
  let cdp;
  /** @type {Record<string, boolean> | undefined} */
  let compiled;
  /** @type {import("./lib/isolate.mjs").Isolation | undefined} */
  let iso;
  let interval = 0;
  try {
    log(`worker up on ${server.base}, inspector on ${server.inspectorPort} (D1 state in ${persistDir}); seeding`);
    const ids = await seed(target);
    const all = cases(ids);
    const list = all.filter((c) => !only || only.includes(c.id));
    cdp = await connect(server.inspectorPort);
    iso = await isolate(cdp.send);
    cdp.onStart(iso.afterStart);
    await cdp.setSampling(samplingUs(iso.on));
    interval = cdp.intervalUs;
    gapRule = iso.on ? "any" : "d1";
    log(`CPU phase ${iso.text}`);
    const compiledRes = await fetch(`${server.base}/__bench/compiled`, { headers: { authorization } });
    compiled = compiledRes.ok ? await compiledRes.json() : undefined;
    log(`compiled validators in workerd: ${JSON.stringify(compiled)}`);

    log(`calibration: burn loop, ${PROFILE.requests} requests each`);
    calibration = await calibrate(cdp, server.base, gapRule);
    log(`calibration: ${calibrationText(calibration)}`);

    for (const c of list) {
      const p = await probe(target, c);
      rows[c.id] = { case: c, status: p.ok ? "ok" : p.reason };
      if (!p.ok) {
        log(`${c.id}: ${p.reason}`);
        continue;
      }
      if (c.profile === false) continue;
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
          server.base,
          { method: c.method, path: pathOf(c, i), body: c.body?.(i), headers: c.headers },
          gapRule,
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
            server.base,
            { method: plain.method, path: pathOf(plain, i), headers: plain.headers },
            gapRule,
          );
          if (b.sqlMs !== null) plainSql.push(Number(b.sqlMs));
        }
        wall.push(r.wallMs);
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
        const h = await heapAround(cdp, server.base, { method: c.method, path, headers: c.headers }, mode);
        heapBases.push(h.before);
        if (h.peak !== undefined) heapPeaks.push(h.peak);
        if (h.live !== undefined) heapLives.push(h.live);
        heapCollections += h.collections;
      }
      if (c.verify) {
        const v = await c.verify(target, 1 + PROFILE.warmup + PROFILE.requests);
        log(`${c.id}: ${v.ok ? "checked" : "CHECK FAILED"}: ${v.text}`);
        if (!v.ok) {
          rows[c.id].status = `error: ${v.text}`;
          continue;
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
      Object.assign(rows[c.id], {
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
          top: topFunctions(slowest.profile, 6, interval, gapRule).map(([f, ms]) => `${f} ${ms.toFixed(1)}`),
        },
      });
      const w = rows[c.id].workerd;
      log(
        `${c.id}: workerd CPU ${fmt(w.median, 2)} ms median, ${fmt(w.p90, 2)} p90, D1 ${d1} (${fmt(w.sqlMedian ?? NaN, 0)} ms of SQL${w.plainSqlMedian !== undefined ? `; its plain SQL beside it ${fmt(w.plainSqlMedian, 0)}` : ""}); top: ${w.top.join(", ")}`,
      );
      if (c.heap) {
        log(
          `${c.id}: ${bytes} bytes; wall ${fmt(w.wallMedian, 1)} ms median, ${fmt(w.wallP90, 1)} p90 (profiler on); ` +
            `D1 SQL ${fmt(w.sqlMedian ?? NaN, 1)} ms median, ${fmt(w.sqlP90 ?? NaN, 1)} p90; ${heapText(w)}`,
        );
      }
    }
    cdp.close();
    cdp = undefined;
    iso.restore();

    for (const c of list) {
      if (rows[c.id].status !== "ok" || !c.load || !withLoad) continue;
      const base = c.baseline ? list.find((b) => b.id === c.baseline) : undefined;
      // A ratio is measured in alternating slices of the case and its baseline, so that the load
      // other processes put on the machine meanwhile falls on both alike.
      const slices = base ? LOAD.rounds : 1;
      const seconds = base ? LOAD.seconds / LOAD.rounds : LOAD.seconds;
      await load(server.base, c, LOAD.warmupSeconds);
      const sum = { requests: 0, baseRequests: 0, bad: 0, s503: 0, p50: /** @type {number[]} */ ([]), errors: 0 };
      for (let k = 0; k < slices; k++) {
        if (base) sum.baseRequests += (await load(server.base, base, seconds)).requests.total;
        const r = await load(server.base, c, seconds);
        sum.requests += r.requests.total;
        sum.bad += r.non2xx + r.errors + r.timeouts;
        sum.errors += r.errors + r.timeouts;
        sum.s503 += r.statusCodeStats?.["503"]?.count ?? 0;
        sum.p50.push(r.latency.p50);
      }
      Object.assign(rows[c.id], {
        rps: sum.requests / LOAD.seconds,
        ratio: base ? sum.requests / Math.max(1, sum.baseRequests) : undefined,
        p50: quantile(sum.p50, 0.5),
        total: sum.requests,
        bad: sum.bad,
        s503: sum.s503,
      });
      log(
        `${c.id}: ${fmt(sum.requests / LOAD.seconds)} req/s${base ? `, ${fmt(rows[c.id].ratio, 2)} of ${base.id}` : ""}, non-2xx or failed ${sum.bad} (503: ${sum.s503})`,
      );
      if (sum.errors > 0) {
        const health = await fetch(`${server.base}/health`, { signal: AbortSignal.timeout(10_000) }).catch((e) => e);
        if (!(health instanceof Response) || !health.ok) {
          log(
            `the worker stopped answering (wrangler ${server.alive() ? "running" : "exited"}); its last output:\n${server.logTail()}`,
          );
          rows[c.id].status = "error: the worker stopped answering under this load";
          break; // the table of what was measured is still written
        }
      }
    }

    if (withNode) {
      log("Node CPU phase: the bench worker's bundle in Node, D1 waits subtracted");
      const worker = await loadBundle();
      for (const c of list) {
        if (rows[c.id].status !== "ok" || !c.cpuIterations) continue;
        const cpu = await measureCpu(worker, target, c);
        Object.assign(rows[c.id], { cpu });
        log(`${c.id}: Node ${fmt(cpu.median, 3)} ms median`);
      }
    }
  } finally {
    cdp?.close();
    iso?.restore();
    await server.stop();
    rmSync(persistDir, { recursive: true, force: true });
  }

  const report = render(rows, m, startup, calibration, compiled, { text: iso?.text, interval, rule: gapRule });
  process.stdout.write(`${report}\n`);
  mkdirSync(path.join(here, "results"), { recursive: true });
  writeFileSync(path.join(here, "results/latest.md"), `${report}\n`);
  writeFileSync(
    path.join(here, "results/latest.json"),
    `${JSON.stringify(
      {
        machine: m,
        load: LOAD,
        profile: PROFILE,
        startup,
        calibration,
        rows: Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, { ...v, case: undefined }])),
      },
      null,
      2,
    )}\n`,
  );
  if (withReadme) {
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

main().catch((e) => {
  process.stderr.write(`${e?.stack ?? e}\n`);
  process.exit(1);
});
