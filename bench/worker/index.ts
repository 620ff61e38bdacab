import { Hono } from "hono";
import { requestId } from "hono/request-id";
import type { AppEnv, Bindings } from "../../src/env";
import store from "../../src/index";
import { auth, requestLog } from "../../src/keys/auth";
import { orderCreate } from "../../src/orders/schema";
import { d1Session } from "../../src/platform/d1";
import { isCompiled } from "../../src/platform/fields";
import { productCreate, productUpdate } from "../../src/products/schema";
import { subscribed } from "../../src/webhooks/outbox";
import { type Order, orderBatch } from "./batches";
import { consume } from "./consume";
import { countedDb, countHeaders, countingDb, countRows, resetCounts } from "./count";
import { plain } from "./plain";
import { seed } from "./seed";

/**
 * The store's info lines (one a request, one a consumer invocation: src/keys/auth.ts) are kept
 * in memory here instead of going to workerd's local console. Under `wrangler dev` a console.log
 * holds the isolate about 1 ms while local dev's log plumbing takes the line (200 lines in one
 * request: 150 to 300 ms of wall time, with no profiler attached), a cost no deployed Worker pays
 * that the profile counted as the request's own: 0.3 to 0.8 ms of each case's mean, more of its
 * p90 (the ninth round in bench/README.md's history). Each line is still built by the store and joined
 * here as a console takes it. console.error, the failure path, prints as before.
 */
const kept: string[] = [];
console.log = (...args: unknown[]) => {
  kept.push(args.map(String).join(" "));
  if (kept.length > 64) kept.splice(0, 32);
};

/**
 * The bench worker: every request that is not under /__bench/ goes to the store exactly as
 * src/index.ts serves it, so the store and its baselines share one workerd, one isolate, one D1.
 * The baselines pass through the same platform middleware as every /v1 route (request id, the
 * request's log line, authentication, the D1 session their statements run in: src/app.ts), so
 * the difference they measure is the endpoint's own work (validation, planning, its statements
 * and round trips), not the platform every route pays for.
 */
const bench = new Hono<AppEnv>().basePath("/__bench");
const BASELINES = ["/bare", "/order-batch", "/order-status", "/d1/*"];
for (const path of BASELINES) bench.use(path, requestId(), requestLog);
bench.use("*", auth);
for (const path of BASELINES) bench.use(path, d1Session);

bench.route("/d1", plain);

/** Baseline 1: an authenticated route that does no D1 work at all. */
bench.get("/bare", (c) => c.json({ ok: true }));

/** Baseline 2, the "physical limit" of an order: bench/worker/batches.ts, orderBatch. */
bench.post("/order-batch", async (c) => c.json(await orderBatch(c.var.db.$client, (await c.req.json()) as Order[])));

/**
 * Baseline 3: a PUT /v1/orders status change (or cancel with restock), hand-written: the same SQL
 * as src/orders/status.ts in ONE batch (read the order, give back its lines' stock unless it is
 * cancelled already, the conditional event row, the conditional status update). No validation.
 */
bench.put("/order-status", async (c) => {
  const [{ order_id: id, status }] = (await c.req.json()) as { order_id: number; status: string }[];
  const db = c.var.db.$client;
  const now = Date.now();
  const event = status === "paid" ? "order.new" : status === "done" ? "order.done" : "order.cancelled";
  const stmts = [db.prepare("SELECT * FROM orders WHERE id = ?1").bind(id)];
  if (status === "cancelled") {
    stmts.push(
      db
        .prepare(
          `UPDATE variants SET qty = variants.qty + t.q
           FROM (SELECT variant_id AS id, sum(qty) AS q FROM order_lines WHERE order_id = ?1 AND variant_id IS NOT NULL GROUP BY 1) AS t
           WHERE variants.id = t.id AND (SELECT status FROM orders WHERE id = ?1) <> 'cancelled'`,
        )
        .bind(id),
      db
        .prepare(
          `UPDATE products SET stock = products.stock + t.q
           FROM (SELECT product_id AS id, sum(qty) AS q FROM order_lines WHERE order_id = ?1 AND variant_id IS NULL GROUP BY 1) AS t
           WHERE products.id = t.id AND (SELECT status FROM orders WHERE id = ?1) <> 'cancelled'`,
        )
        .bind(id),
    );
  }
  if (status !== "unpaid") {
    stmts.push(
      db
        .prepare(
          `INSERT INTO events (id, type, order_id, created_at) SELECT ?2, ?3, id, ?4 FROM orders
           WHERE id = ?1 AND status <> 'cancelled' AND status <> ?5 AND (?3 <> 'order.new' OR date_paid IS NULL)
             AND ${subscribed("?3")}`,
        )
        .bind(id, crypto.randomUUID(), event, now, status),
    );
  }
  stmts.push(
    db
      .prepare(
        `UPDATE orders SET status = ?2, status_date = ?3, version = version + 1, updated_at = ?3,
           date_paid = CASE WHEN ?2 = 'paid' AND date_paid IS NULL THEN ?3 ELSE date_paid END,
           date_cancelled = CASE WHEN ?2 = 'cancelled' AND date_cancelled IS NULL THEN ?3 ELSE date_cancelled END
         WHERE id = ?1 AND status <> 'cancelled' AND status <> ?2`,
      )
      .bind(id, status, now),
  );
  const [read] = await db.batch<{ id: number; status: string; currency: string; subtotal: number; total: number }>(
    stmts,
  );
  const o = read.results[0];
  if (!o) return c.json({ code: 404, error: "order not found" }, 404);
  return c.json({
    results: {
      update_1: {
        success: true,
        order_id: o.id,
        status: o.status === "cancelled" ? "cancelled" : status,
        currency: o.currency,
        subtotal: o.subtotal / 100,
        total: o.total / 100,
        errors: [],
        notices: [],
      },
    },
  });
});

bench.route("/", seed);

type ShimStatement = { sql: string; params: unknown[] };
type ShimCall = { op: "all" | "raw" | "run" | "first" | "batch"; stmts: ShimStatement[]; columnNames?: boolean };

/**
 * The D1 end of bench/lib/d1-shim.mjs: runs the statements Node sent against the real local D1
 * and answers with what the binding returned. Used only by the CPU-cost phase, which runs the
 * app in Node and must not count this round trip; never part of a measured HTTP case.
 */
bench.post("/d1", async (c) => {
  const call = (await c.req.json()) as ShimCall;
  const db = c.env.DB;
  const prepared = call.stmts.map((s) => db.prepare(s.sql).bind(...s.params));
  try {
    switch (call.op) {
      case "batch":
        return c.json({ ok: true, value: await db.batch(prepared) });
      case "raw":
        return c.json({ ok: true, value: await prepared[0].raw({ columnNames: call.columnNames === true } as any) });
      case "first":
        return c.json({ ok: true, value: await prepared[0].first() });
      case "run":
        return c.json({ ok: true, value: await prepared[0].run() });
      default:
        return c.json({ ok: true, value: await prepared[0].all() });
    }
  } catch (e) {
    const err = e as Error;
    return c.json({ ok: false, message: err.message, cause: String((err as { cause?: unknown }).cause ?? "") });
  }
});

/**
 * A loop of known cost for checking the CPU profiler method (bench/lib/inspector.mjs): `n`
 * iterations of integer arithmetic, calibrated in Node by the bench. No allocation, no I/O.
 */
function burn(n: number): number {
  let x = 1;
  for (let i = 0; i < n; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  return x;
}

/**
 * Calibration route: burns `n` iterations, or with `d1=1` burns `n`, waits on one D1 query, and
 * burns `n` again; `cache=1` the same around one Cache API delete (what every write does to the
 * catalog's pointer, src/products/version.ts). The profiler method must read the second and third as
 * twice the first, not as that plus the wait (the trap of summing every sample's delta).
 */
bench.get("/burn", async (c) => {
  const n = Number(c.req.query("n") ?? 0);
  let x = burn(n);
  if (c.req.query("d1") === "1") {
    await c.env.DB.prepare("SELECT count(*) AS n FROM products").first();
    x ^= burn(n);
  }
  if (c.req.query("cache") === "1") {
    await caches.default.delete("https://catalog.internal/bench-calibration");
    x ^= burn(n);
  }
  return c.json({ x });
});

/** Whether the request schemas got zod's compiled parsers in this workerd (see precompile). */
bench.get("/compiled", (c) =>
  c.json({
    productCreate: isCompiled(productCreate),
    productUpdate: isCompiled(productUpdate),
    orderCreate: isCompiled(orderCreate),
  }),
);

type Fetch = (request: Request, env: Bindings, ctx: ExecutionContext) => Response | Promise<Response>;

async function counted(
  request: Request,
  env: Bindings,
  ctx: ExecutionContext,
  db: D1Database,
  app: Fetch = store.fetch,
) {
  resetCounts();
  const res = await app(request, { ...env, DB: db }, ctx);
  const headers = Object.entries(countHeaders());
  // The store's own Response, headers added in place: a new Response around its body would make
  // the isolate read a string body into a stream, CPU the store's answer itself does not cost.
  try {
    for (const [k, v] of headers) res.headers.set(k, v);
    return res;
  } catch {
    const out = new Response(res.body, res);
    for (const [k, v] of headers) out.headers.set(k, v);
    return out;
  }
}

export default {
  async fetch(request, env, ctx) {
    countRows(env.DB);
    const url = new URL(request.url);
    // /__bench/cold/<store path>: the store with a D1 binding object it has never seen, as the
    // first request of a fresh isolate meets it (per-isolate caches keyed on the binding are
    // empty; module code is already loaded, and its cost is the startup figure).
    if (url.pathname.startsWith("/__bench/cold/")) {
      url.pathname = url.pathname.slice("/__bench/cold".length);
      return counted(new Request(url, request), env, ctx, countingDb(env.DB));
    }
    if (url.pathname.startsWith("/__bench/consume/")) return consume.fetch(request, env, ctx);
    // The last request's counts once its body has been read: a streamed answer's headers leave
    // before its later round trips are made.
    if (url.pathname === "/__bench/counts") return new Response(null, { headers: countHeaders() });
    // The baselines are counted as the store's requests are, so their rows and statements stand beside its.
    if (
      BASELINES.some(
        (p) =>
          url.pathname === `/__bench${p}` || (p.endsWith("*") && url.pathname.startsWith(`/__bench${p.slice(0, -1)}`)),
      )
    )
      return counted(request, env, ctx, countedDb(env.DB), bench.fetch);
    if (url.pathname.startsWith("/__bench/")) return bench.fetch(request, env, ctx);
    return counted(request, env, ctx, countedDb(env.DB));
  },
} satisfies ExportedHandler<Bindings>;
