// The throughput phase (`--throughput`; bench/README.md, "Throughput"): requests per second of the
// store against a bare hand-written Worker doing the same D1 batch (bench/bare/index.ts), both in
// one `wrangler dev`, measured from outside with wrk (autocannon where wrk is not installed), in
// alternating slices; and the bare batch with the store's per-request parts added one at a time,
// so that what separates the two is named part by part.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { orderBody } from "./cases-everyday.mjs";
import { apiKey, authorization, fmt, log } from "./options.mjs";
import { seedOrderCatalog } from "./seed.mjs";
import { startWorker } from "./server.mjs";

export const THROUGHPUT = { connections: 8, seconds: 3, rounds: 3, warmupSeconds: 1, target: 0.8 };

// The store's per-request parts in the order src/app.ts runs them (bench/bare/index.ts, PARTS),
// each step adding one to the step before it.
const STEPS = [
  { name: "bare: a fetch handler, the batch, its answer", parts: "none" },
  { name: "+ Hono (a route, c.json)", parts: "hono" },
  { name: "+ request id (hono/request-id)", parts: "hono,id" },
  { name: "+ the request's log line (src/keys/auth.ts)", parts: "hono,id,log" },
  { name: "+ CORS preflight and no-store headers (src/keys)", parts: "hono,id,log,cors,nostore" },
  { name: "+ authentication (src/keys/auth.ts)", parts: "hono,id,log,cors,nostore,auth" },
  { name: "+ the D1 session (src/platform/d1.ts)", parts: "hono,id,log,cors,nostore,auth,session" },
  {
    name: "+ the catalogue pointer's cache delete (src/products/version.ts): the whole platform",
    parts: "hono,id,log,cors,nostore,auth,session,catalog",
  },
  { name: "the store", parts: undefined },
];

/** The two writes: an order of 3 lines, a stock update by SKU (its count alternating). */
const SCENARIOS = [
  {
    id: "orders-1x3",
    label: "POST /v1/orders 1 order x 3 lines",
    method: "POST",
    path: "/v1/orders",
    bodies: [orderBody(1, 3)],
  },
  {
    id: "stock",
    label: "PUT /v1/products stock by SKU",
    method: "PUT",
    path: "/v1/products",
    bodies: [5, 6].map((stock) => JSON.stringify({ sku: "STK-1", stock })),
  },
];

const hasWrk = (() => {
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore" });
    return true;
  } catch (e) {
    // wrk --version exits 1 after printing its version
    return /** @type {{ status?: number }} */ (e).status === 1;
  }
})();

/** @param {string} s */
const lua = (s) => JSON.stringify(s);

/**
 * One slice of load on one step: requests served and non-2xx answers.
 * @param {string} base @param {string} dir @param {(typeof SCENARIOS)[number]} sc @param {string | undefined} parts @param {number} seconds
 * @returns {Promise<{ requests: number, bad: number }>}
 */
async function slice(base, dir, sc, parts, seconds) {
  const headers = { authorization, "content-type": "application/json", ...(parts ? { "x-bare": parts } : {}) };
  if (hasWrk) {
    const script = path.join(dir, "s.lua");
    writeFileSync(
      script,
      [
        `local bodies = { ${sc.bodies.map(lua).join(", ")} }`,
        "local i = 0",
        `wrk.method = ${lua(sc.method)}`,
        ...Object.entries(headers).map(([k, v]) => `wrk.headers[${lua(k)}] = ${lua(v)}`),
        `request = function() i = i + 1; return wrk.format(nil, ${lua(sc.path)}, nil, bodies[(i % #bodies) + 1]) end`,
      ].join("\n"),
    );
    const out = execFileSync(
      "wrk",
      ["-t1", `-c${THROUGHPUT.connections}`, `-d${seconds}s`, "--timeout", "30s", "-s", script, base],
      { encoding: "utf8" },
    );
    const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
    const bad = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
    return { requests, bad };
  }
  let i = 0;
  const r = await autocannon({
    url: base,
    connections: THROUGHPUT.connections,
    duration: seconds,
    requests: [
      {
        method: /** @type {any} */ (sc.method),
        path: sc.path,
        headers,
        setupRequest: (/** @type {any} */ req) => ({ ...req, body: sc.bodies[i++ % sc.bodies.length] }),
      },
    ],
  });
  return { requests: r.requests.total, bad: r.non2xx + r.errors + r.timeouts };
}

/**
 * The phase: its own bare Worker on a fresh D1 with the order catalogue, each scenario's steps in
 * alternating slices, the table of what it measured.
 */
export async function throughput() {
  const persistDir = mkdtempSync(path.join(os.tmpdir(), "edge-store-bench-bare-"));
  const dir = mkdtempSync(path.join(os.tmpdir(), "edge-store-bench-wrk-"));
  const config = path.resolve(import.meta.dirname, "../bare/wrangler.toml");
  const server = await startWorker({ persistDir, apiKey, config });
  const load = [
    os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" "),
  ];
  const started = new Date();
  /** @type {{ sc: (typeof SCENARIOS)[number], steps: { name: string, rps: number, bad: number }[] }[]} */
  const results = [];
  try {
    await seedOrderCatalog({ base: server.base, authorization });
    for (const sc of SCENARIOS) {
      const sums = STEPS.map(() => ({ requests: 0, bad: 0 }));
      for (const s of STEPS) await slice(server.base, dir, sc, s.parts, THROUGHPUT.warmupSeconds);
      for (let k = 0; k < THROUGHPUT.rounds; k++) {
        for (const [n, s] of STEPS.entries()) {
          const r = await slice(server.base, dir, sc, s.parts, THROUGHPUT.seconds);
          sums[n].requests += r.requests;
          sums[n].bad += r.bad;
        }
      }
      const seconds = THROUGHPUT.rounds * THROUGHPUT.seconds;
      const steps = STEPS.map((s, n) => ({ name: s.name, rps: sums[n].requests / seconds, bad: sums[n].bad }));
      results.push({ sc, steps });
      log(`${sc.id}: ${steps.map((s) => `${fmt(s.rps, 0)}`).join(" / ")} req/s`);
    }
  } finally {
    await server.stop();
    rmSync(persistDir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
  load.push(
    os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" "),
  );
  return render(results, started, load);
}

/**
 * @param {{ sc: (typeof SCENARIOS)[number], steps: { name: string, rps: number, bad: number }[] }[]} results
 * @param {Date} started @param {string[]} load
 */
function render(results, started, load) {
  const out = [
    `Run ${started.toISOString().slice(0, 16).replace("T", " ")} UTC, ${hasWrk ? "wrk" : "autocannon"} ${THROUGHPUT.connections} connections, ` +
      `${THROUGHPUT.rounds} rounds of ${THROUGHPUT.seconds} s per step after ${THROUGHPUT.warmupSeconds} s of warm-up, the steps alternated within each round; ` +
      `load average ${load[0]} at the start and ${load[1]} at the end.`,
  ];
  for (const { sc, steps } of results) {
    const bare = steps[0].rps;
    const store = steps[steps.length - 1].rps;
    out.push(
      "",
      `${sc.label}: the store at ${fmt(store / bare, 2)} of the bare Worker (target ${THROUGHPUT.target}: ${store / bare >= THROUGHPUT.target ? "met" : "**MISSED**"}).`,
      "",
      "| step | req/s | of bare | server time a request, µs | the step adds, µs | non-2xx |",
      "|---|---:|---:|---:|---:|---:|",
    );
    steps.forEach((s, n) => {
      const us = 1e6 / s.rps;
      const before = n ? 1e6 / steps[n - 1].rps : undefined;
      out.push(
        `| ${s.name} | ${fmt(s.rps, 0)} | ${fmt(s.rps / bare, 2)} | ${fmt(us, 0)} | ${before === undefined ? "" : fmt(us - before, 0)} | ${s.bad} |`,
      );
    });
  }
  return out.join("\n");
}
