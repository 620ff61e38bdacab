// The rows phase: a case's requests without the profiler and without load, each one's D1 rows read
// and written (the bench worker's x-bench-d1-rows, bench/worker/count.ts), statements and wall time;
// a push's requests summed (bench/README.md, "Rows").
import { pathOf } from "./cases.mjs";
import { fmt, log } from "./options.mjs";

/** Requests per case in the rows phase: rows are deterministic, so a few show that they repeat. */
export const ROWS_REQUESTS = Number(process.env.BENCH_ROWS_REQUESTS) || 3;

/**
 * One request of a case, its counts read after its whole body (a streamed answer's later round
 * trips are made after its headers leave).
 * @param {import("./requests.mjs").Target} t @param {import("./cases.mjs").Case} c
 * @param {{ path: string, body?: string }} r
 */
async function once(t, c, r) {
  const t0 = performance.now();
  const res = await fetch(`${t.base}${r.path}`, {
    method: c.method,
    headers: { authorization: t.authorization, "content-type": "application/json", ...c.headers },
    body: r.body,
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  const ok = c.status ? res.status === c.status : res.status >= 200 && res.status <= 299;
  if (!ok) throw new Error(`${c.id}: answered ${res.status} ${text.slice(0, 200)}`);
  const headers = c.heap
    ? (await fetch(`${t.base}/__bench/counts`, { headers: { authorization: t.authorization } })).headers
    : res.headers;
  const [calls, statements] = (headers.get("x-bench-d1") ?? "/").split("/").map(Number);
  const rows = headers.get("x-bench-d1-rows");
  if (!rows || rows === "n/a") throw new Error(`${c.id}: the worker counted no rows (x-bench-d1-rows: ${rows})`);
  const [read, written] = rows.split("/").map(Number);
  return { read, written, calls, statements, ms };
}

/**
 * A case's rows: `ROWS_REQUESTS` requests (a push: as many pushes), from request 1 on (the probe
 * sent request 0, and a case alternating two bodies changes something on every request after it).
 * `rows` says the last one's and whether every one wrote and read the same.
 * @param {import("./requests.mjs").Target} t @param {import("./cases.mjs").Case} c @param {Record<string, any>} row
 * @param {number} [times]
 */
export async function rowsCase(t, c, row, times = ROWS_REQUESTS) {
  const runs = [];
  for (let i = 1; i <= times; i++) {
    if (c.push) {
      c.push.start();
      const sum = { read: 0, written: 0, calls: 0, statements: 0, ms: 0 };
      for (let j = 0; j < c.push.requests; j++) {
        const r = await once(t, c, { path: pathOf(c, j), body: c.push.body(j) });
        for (const k of /** @type {const} */ (["read", "written", "calls", "statements", "ms"])) sum[k] += r[k];
      }
      runs.push(sum);
    } else {
      runs.push(await once(t, c, { path: pathOf(c, i), body: c.body?.(i) }));
    }
  }
  const last = runs[runs.length - 1];
  const reads = runs.map((r) => r.read);
  const writes = runs.map((r) => r.written);
  const same = new Set(reads).size === 1 && new Set(writes).size === 1;
  row.rows = {
    read: last.read,
    written: last.written,
    calls: last.calls,
    statements: last.statements,
    ms: last.ms,
    same,
    ...(same ? {} : { reads, writes }),
  };
  log(
    `${c.id}: rows read ${last.read}, written ${last.written}, D1 ${last.calls} / ${last.statements}, ${fmt(last.ms, 0)} ms${same ? "" : ` (varied: read ${reads.join(", ")}; written ${writes.join(", ")})`}`,
  );
}
