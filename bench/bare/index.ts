import { Hono } from "hono";
import { requestId } from "hono/request-id";
import type { MiddlewareHandler } from "hono/types";
import type { AppEnv, Bindings } from "../../src/env";
import store from "../../src/index";
import { auth, noStore, preflight, requestLog } from "../../src/keys/auth";
import { d1Session } from "../../src/platform/d1";
import { writesMoveCatalog } from "../../src/products/version";
import { type Order, orderBatch, stockBatch } from "../worker/batches";

// The bare Worker (bench/README.md, "Throughput"): for POST /v1/orders and PUT /v1/products, the
// store itself, or the same D1 batch hand-written (bench/worker/batches.ts) with none, some or all
// of the per-request parts the store's /v1 routes run (src/app.ts), in the store's order. The
// x-bare header picks: absent, the store; "none", a plain fetch handler; else a list of parts.

// As in the bench worker (bench/worker/index.ts): a line is built and kept, not handed to local
// dev's console, which holds the isolate about 1 ms a line and which no deployed Worker pays.
const kept: string[] = [];
console.log = (...args: unknown[]) => {
  kept.push(args.map(String).join(" "));
  if (kept.length > 64) kept.splice(0, 32);
};

/** The store's per-request parts, in the order src/app.ts runs them. */
const PARTS: [string, MiddlewareHandler<AppEnv>][] = [
  ["id", requestId()],
  ["log", requestLog],
  ["cors", preflight],
  ["nostore", noStore],
  ["auth", auth],
  ["session", d1Session],
  ["catalog", writesMoveCatalog],
];

/** The client a handler's batch runs on: the request's D1 session where the part opened one. */
type Ctx = { var: { db?: { $client: D1Database | D1DatabaseSession } }; env: Bindings };
const client = (c: Ctx) => c.var.db?.$client ?? c.env.DB;

const apps = new Map<string, Hono<AppEnv>>();
/** One Hono app per list of parts, built on first use. @param {string} list */
function app(list: string) {
  let a = apps.get(list);
  if (a) return a;
  const names = list.split(",").filter((p) => p !== "hono");
  const unknown = names.filter((n) => !PARTS.some(([k]) => k === n));
  if (unknown.length) throw new Error(`x-bare: no part ${unknown.join(", ")}`);
  a = new Hono<AppEnv>();
  for (const [name, part] of PARTS) if (names.includes(name)) a.use(part);
  a.post("/v1/orders", async (c) => c.json(await orderBatch(client(c), (await c.req.json()) as Order[])));
  a.put("/v1/products", async (c) => c.json(await stockBatch(client(c), await c.req.json())));
  apps.set(list, a);
  return a;
}

export default {
  async fetch(request, env, ctx) {
    const parts = request.headers.get("x-bare");
    if (parts === null) return store.fetch(request, env, ctx);
    if (parts !== "none") return app(parts).fetch(request, env, ctx);
    // No Hono, no middleware: the body, the batch, the answer.
    const path = new URL(request.url).pathname;
    const json = (x: unknown) => new Response(JSON.stringify(x), { headers: { "content-type": "application/json" } });
    if (request.method === "POST" && path === "/v1/orders")
      return json(await orderBatch(env.DB, (await request.json()) as Order[]));
    if (request.method === "PUT" && path === "/v1/products")
      return json(await stockBatch(env.DB, await request.json()));
    return new Response("not found", { status: 404 });
  },
} satisfies ExportedHandler<Bindings>;
