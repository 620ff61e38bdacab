import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { publicView } from "../keys/public";
import { waiterOf } from "../webhooks/outbox";

// The storefront catalog at the edge (src/docs/keys.md, "Edge cache"): a publishable key's product
// reads are kept in the colo's Cache API under the catalog version, which triggers move in the
// batch of every product or variant change (drizzle/0005_keys.sql). A stored answer is never
// stale for its version, so nothing is purged: a change simply makes a new key.

/**
 * How long an isolate trusts the catalog version it read: a catalog read within this time costs
 * no D1 query at all. A change is seen at once by the isolate that made it (it forgets the
 * version) and by every other isolate within this bound.
 */
export const CATALOG_VERSION_TTL_MS = 2_000;
const STORED_FOR = "public, max-age=86400";

let memo: { version: number; until: number } | undefined;

/** For tests and after a write in this isolate. */
export function forgetCatalogVersion() {
  memo = undefined;
}

async function catalogVersion(c: Context<AppEnv>, now: number): Promise<number> {
  if (!memo || memo.until <= now) {
    const row = await c.var.db.$client
      .prepare("SELECT version FROM catalog_version WHERE id = 1")
      .first<{ version: number }>();
    memo = { version: row?.version ?? 0, until: now + CATALOG_VERSION_TTL_MS };
  }
  return memo.version;
}

/** After any write of this isolate: the next catalog read asks for the version again. */
export const writesMoveCatalog = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.req.method !== "GET" && c.req.method !== "HEAD") memo = undefined;
});

/** Serves a publishable key's catalog read from the colo's cache, or stores the fresh answer there. */
export const catalogEdge = createMiddleware<AppEnv>(async (c, next) => {
  const cred = c.var.credential;
  if (cred?.type !== "publishable" || typeof caches === "undefined") return next();
  const view = publicView(cred);
  const url = new URL(c.req.url);
  const version = await catalogVersion(c, Date.now());
  // The answer depends on the path, the query and what the key may see; never on the key itself.
  const key = new Request(
    `https://catalog.internal/v${version}/${view.stock ? 1 : 0}${view.datafields ? 1 : 0}${url.pathname}${url.search}`,
  );
  const cache = caches.default;
  const hit = await cache.match(key);
  if (hit) {
    c.res = new Response(hit.body, hit);
    c.res.headers.set("X-Catalog-Cache", "hit");
    c.res.headers.set("Cache-Control", "no-cache");
    return;
  }
  await next();
  if (c.res.status !== 200) return;
  const stored = new Response(c.res.clone().body, c.res);
  stored.headers.set("Cache-Control", STORED_FOR);
  stored.headers.delete("x-d1-bookmark");
  stored.headers.delete("x-request-id");
  const put = cache.put(key, stored);
  const waiter = waiterOf(c);
  if (waiter) waiter.waitUntil(put);
  else await put;
  c.res.headers.set("X-Catalog-Cache", "miss");
  // The browser revalidates with the ETag: its copy must not outlive a change.
  c.res.headers.set("Cache-Control", "no-cache");
});
