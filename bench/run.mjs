// npm run bench [-- --readme] [-- --node] [-- --no-load] [-- --rows [--docs]] [-- --throughput] : see bench/README.md.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { calibrate } from "./lib/calibrate.mjs";
import { cases, probe } from "./lib/cases.mjs";
import { loadBundle, measureCpu } from "./lib/cpu.mjs";
import { figures, freePlanTable, withTable } from "./lib/free-plan.mjs";
import { busyMs, connect, samplingUs } from "./lib/inspector.mjs";
import { isolate } from "./lib/isolate.mjs";
import { loadPhase } from "./lib/load.mjs";
import {
  apiKey,
  authorization,
  DEADLINE_MS,
  fmt,
  LOAD,
  log,
  only,
  PROFILE,
  rowsOnly,
  started,
  throughputOnly,
  withDocs,
  withLoad,
  withNode,
  withReadme,
} from "./lib/options.mjs";
import { profileCase } from "./lib/profile.mjs";
import { calibrationText, machine, render, renderRows } from "./lib/report.mjs";
import { ROWS_REQUESTS, rowsCase } from "./lib/rows.mjs";
import { seed } from "./lib/seed.mjs";
import { startWorker } from "./lib/server.mjs";
import { throughput } from "./lib/throughput.mjs";

const here = import.meta.dirname;
const root = path.resolve(here, "..");

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

/** Replaces what is between `start` and `end` in `file` with `text`. @param {string} file @param {string} start @param {string} end @param {string} text */
function replaceBetween(file, start, end, text) {
  const old = readFileSync(file, "utf8");
  const a = old.indexOf(start);
  const b = old.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${path.relative(root, file)} lacks the markers ${start} ${end}`);
  writeFileSync(file, `${old.slice(0, a + start.length)}\n${text}\n${old.slice(b)}`);
  log(`${path.relative(root, file)} updated`);
}

/**
 * `--rows`: the rows phase alone, no profiler, no load, no startup check (bench/lib/rows.mjs):
 * every case's rows beside its plain baseline, least and targets, in a few minutes.
 * @param {ReturnType<typeof machine>} m
 */
async function mainRows(m) {
  const persistDir = mkdtempSync(path.join(os.tmpdir(), "edge-store-bench-d1-"));
  /** @type {Record<string, any>} */
  const rows = {};
  const server = await startWorker({ persistDir, apiKey });
  /** @type {import("./lib/least.mjs").Schema | undefined} */
  let schema;
  try {
    const target = { base: server.base, authorization, apiKey };
    log(`worker up on ${server.base}; seeding`);
    const ids = await seed(target);
    schema = ids.schema;
    for (const c of cases(ids).filter((c) => !only || only.includes(c.id))) {
      if (c.contention) {
        rows[c.id] = { case: c, status: "n/a (a load case)" };
        continue;
      }
      const p = await probe(target, c);
      rows[c.id] = { case: c, status: p.ok ? "ok" : p.reason };
      if (!p.ok) {
        log(`${c.id}: ${p.reason}`);
        continue;
      }
      await rowsCase(target, c, rows[c.id]);
      if (c.verify) {
        const v = await c.verify(target, 1 + ROWS_REQUESTS);
        if (!v.ok) rows[c.id].status = `error: ${v.text}`;
      }
    }
  } finally {
    await server.stop();
    rmSync(persistDir, { recursive: true, force: true });
  }
  const report = renderRows(rows, m, schema, ROWS_REQUESTS);
  process.stdout.write(`${report}\n`);
  mkdirSync(path.join(here, "results"), { recursive: true });
  writeFileSync(path.join(here, "results/rows.md"), `${report}\n`);
  const plain = Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, { ...v, case: undefined }]));
  writeFileSync(
    path.join(here, "results/rows.json"),
    `${JSON.stringify({ machine: m, schema, rows: plain }, null, 2)}\n`,
  );
  if (withReadme)
    replaceBetween(path.join(here, "README.md"), "<!-- bench:rows:start -->", "<!-- bench:rows:end -->", report);
  if (withDocs) {
    const when = `${new Date().toISOString().slice(0, 10)}, wrangler ${m.wrangler}, local D1`;
    const f = figures(rows);
    writeFileSync(path.join(here, "free-plan.json"), `${JSON.stringify({ when, figures: f }, null, 2)}\n`);
    const file = path.join(root, "docs/performance.md");
    writeFileSync(file, withTable(readFileSync(file, "utf8"), freePlanTable(f, when)));
    log("docs/performance.md and bench/free-plan.json updated");
  }
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

async function main() {
  const m = machine();
  log(`machine: ${m.nproc} cores, ${m.model}, node ${m.node}, wrangler ${m.wrangler}, load average ${m.loadavg}`);
  const timer = setTimeout(() => {
    log(`deadline of ${DEADLINE_MS / 1000} s passed: stopping`);
    process.exit(2); // the exit hook of startWorker ends wrangler's process group
  }, DEADLINE_MS);
  timer.unref();
  for (const sig of /** @type {const} */ (["SIGINT", "SIGTERM"])) process.once(sig, () => process.exit(130));
  if (rowsOnly) return mainRows(m);
  if (throughputOnly) {
    const report = await throughput();
    process.stdout.write(`${report}\n`);
    if (withReadme)
      replaceBetween(
        path.join(here, "README.md"),
        "<!-- bench:throughput:start -->",
        "<!-- bench:throughput:end -->",
        report,
      );
    return;
  }

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
  /** @type {import("./lib/least.mjs").Schema | undefined} */
  let schema;
  try {
    log(`worker up on ${server.base}, inspector on ${server.inspectorPort} (D1 state in ${persistDir}); seeding`);
    const ids = await seed(target);
    schema = ids.schema;
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
      // A push is many requests: its rows and time, not a profile (bench/lib/rows.mjs).
      if (c.push) await rowsCase(target, c, rows[c.id]);
      if (c.profile === false) continue;
      await profileCase({ cdp, target, all, rule: gapRule }, c, rows[c.id]);
    }
    cdp.close();
    cdp = undefined;
    iso.restore();

    if (withLoad) await loadPhase(server, list, rows);

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

  const report = render(rows, m, startup, calibration, compiled, { text: iso?.text, interval, rule: gapRule }, schema);
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
  if (withReadme)
    replaceBetween(path.join(here, "README.md"), "<!-- bench:results:start -->", "<!-- bench:results:end -->", report);
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

main().catch((e) => {
  process.stderr.write(`${e?.stack ?? e}\n`);
  process.exit(1);
});
