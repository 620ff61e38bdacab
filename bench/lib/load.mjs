// The load phase: autocannon on a case (and its baseline, for a ratio), 127.0.0.1 only.
import autocannon from "autocannon";
import { pathOf } from "./cases.mjs";
import { authorization, fmt, LOAD, log, quantile } from "./options.mjs";

/**
 * @param {string} base
 * @param {import("./cases.mjs").Case} c
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
 * The load phase: each case with `load` its probe passed, under autocannon (in slices alternating
 * with its baseline when it has one), its figures into its row. Ends at a case after which the
 * worker stops answering, with that row's status saying so.
 * @param {Awaited<ReturnType<typeof import("./server.mjs").startWorker>>} server
 * @param {import("./cases.mjs").Case[]} list
 * @param {Record<string, any>} rows
 */
export async function loadPhase(server, list, rows) {
  for (const c of list) {
    if (rows[c.id].status !== "ok" || !c.load) continue;
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
}
