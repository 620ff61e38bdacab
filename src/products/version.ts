import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { catalogVersion as catalogVersionTable, products, productVersions } from "../db/schema";
import type { AppEnv } from "../env";
import { type PublicView, publicView } from "../keys/public";
import { sqlNames } from "../platform/columns";
import { type DB, stmt } from "../platform/d1";
import { etagOf } from "../platform/hash";
import { waiterOf } from "../webhooks/outbox";
import type { IfMatch } from "./route";

// A product's own version and ETag (docs/stock.md), and the catalogue's (docs/keys.md): every
// batch that changes a product or its variants ends with versionBumps (a trigger only gives a new
// product its row, drizzle/0010_stock_version.sql), so the ETag of GET /v1/products/{id} changes
// when that product changes or sells, and only then.

const PV = sqlNames(productVersions);
const P = sqlNames(products);
const CV = sqlNames(catalogVersionTable);

/** SQL: the statement that moves the catalogue's version. */
const CATALOGUE_BUMP = `UPDATE ${CV.$} SET ${CV.version} = ${CV.version} + 1 WHERE ${CV.id} = 1`;
// Joined from the list, not `IN (SELECT ...)`, whose list SQLite first copies into a scratch index
// that D1 bills as rows read.
const BUMP = `UPDATE ${PV.$} SET ${PV.version} = ${PV.version} + 1 FROM json_each(?1) AS j WHERE ${PV.$}.${PV.productId} = j.value`;
// An upsert that always meets its conflict reads 2 rows a product (the list's and its own) where
// BUMP reads 4 (the join's scratch table, read back). A product deleted meanwhile would be
// inserted, which its foreign key refuses: the batch fails as after a lost race.
const HELD_BUMP = `INSERT INTO ${PV.$} (${PV.productId}) SELECT value FROM json_each(?1) WHERE true
  ON CONFLICT (${PV.productId}) DO UPDATE SET ${PV.version} = ${PV.$}.${PV.version} + 1`;

const bumps = (db: DB, sql: string, productIds: readonly number[]) => [
  ...(productIds.length ? [stmt(db, sql, JSON.stringify(productIds))] : []),
  stmt(db, CATALOGUE_BUMP),
];

/**
 * The statements that move the versions a write changed: each named product's (its ETag) and the
 * catalogue's (the storefront cache's key). A row per product and one for the catalogue, whatever
 * the number of variant rows the batch writes, where a trigger per row wrote two rows for each.
 * A batch that writes a product or its variants ends with these; a batch that changes nothing
 * carries none.
 */
export const versionBumps = (db: DB, productIds: readonly number[]) => bumps(db, BUMP, productIds);

/**
 * versionBumps of products that must exist when the batch runs (an order's stock moves, planned
 * again when the batch fails): a product gone since the read fails the batch, not skipped.
 */
export const heldVersionBumps = (db: DB, productIds: readonly number[]) => bumps(db, HELD_BUMP, productIds);

/** SQL: the version of product `p` (the alias the statement gives it). */
export const VERSION_SQL = `(SELECT ${PV.version} FROM ${PV.$} WHERE ${PV.productId} = p.${P.id})`;

/** SQL: the version of product ?1, as `version`. */
export const VERSION_OF = `SELECT ${VERSION_SQL} AS version FROM ${P.$} AS p WHERE p.${P.id} = ?1`;

/** The ETag of one product's answer: of its id and version, and what the caller may see. */
export function productETag(id: number, version: unknown, view?: PublicView): string {
  const text = `${id}.${version}.${view ? `${view.stock ? 1 : 0}${view.datafields ? 1 : 0}` : "all"}`;
  return etagOf(text);
}

/**
 * The ETags of an If-Match header (RFC 9110 13.1.1): `*`, or a list of strong tags; a weak tag
 * never matches. Undefined when the header is absent.
 */
export function ifMatchTags(header: string | undefined): IfMatch | undefined {
  if (header === undefined) return undefined;
  const list = header.split(",").map((t) => t.trim());
  return { any: list.includes("*"), tags: list.filter((t) => t.startsWith('"')) };
}

/** The catalog's version, which versionBumps moves with every product or variant change. */
export const CATALOG_VERSION = `SELECT ${CV.version} FROM ${CV.$} WHERE ${CV.id} = 1`;

/**
 * The ETag of a catalog answer: the catalog version (which every product, variant and stock change
 * moves in its own batch), the URL and what the caller may see. Hashing the answer itself would
 * cost CPU per byte of a page of megabytes (docs/keys.md, "Edge cache and ETag").
 */
export function catalogETag(version: unknown, url: string, view: PublicView | undefined): string {
  const u = new URL(url);
  const text = `${version}|${u.pathname}${u.search}|${view ? `${view.stock}${view.datafields}` : "all"}`;
  return etagOf(text);
}

// ---------------------------------------------------------------------------------------------
// The storefront catalog at the edge (docs/keys.md, "Edge cache"): a publishable key's product
// reads are kept in the colo's Cache API under the catalog version, which every product or variant
// change moves in its own batch (versionBumps, above). A stored answer is never
// stale for its version, so nothing is purged: a change simply makes a new key.

/**
 * The current catalog version, as the colo's isolates share it: a tiny Cache API entry. A write
 * removes it after its batch commits, so every isolate of the writer's colo reads the new version
 * on its next catalog read; elsewhere (the Cache API is per colo) the entry expires after this many
 * seconds. Within that, an unchanged catalog's read costs no D1 query.
 */
export const CATALOG_VERSION_TTL_S = 2;
const POINTER = "https://catalog.internal/version";
const STORED_FOR = "public, max-age=86400";

const cacheOf = () => (typeof caches === "undefined" ? undefined : caches.default);

/** A cache write after the answer where the runtime can wait for it, else before. */
async function stored(c: Context<AppEnv>, put: Promise<void>) {
  const waiter = waiterOf(c);
  if (waiter) waiter.waitUntil(put);
  else await put;
}

async function catalogVersion(c: Context<AppEnv>, cache: Cache): Promise<number> {
  const known = await cache.match(POINTER);
  if (known) return Number(await known.text());
  const row = await c.var.db.$client.prepare(CATALOG_VERSION).first<{ version: number }>();
  const version = row?.version ?? 0;
  const pointer = new Response(String(version), { headers: { "Cache-Control": `max-age=${CATALOG_VERSION_TTL_S}` } });
  await stored(c, cache.put(POINTER, pointer));
  return version;
}

/** For tests: what the pointer's expiry does in a colo that saw no write. */
export async function forgetCatalogVersion() {
  await cacheOf()?.delete(POINTER);
}

// Writes that can move the catalog: products, and orders (they move stock).
const MOVES_CATALOG = /^\/v1\/(products|orders)(\/|$)/;

/**
 * After a write that may have moved the catalog, the colo's pointer goes, before the answer: the
 * writer's next read, and every isolate of its colo, then reads the new version. A write refused
 * (4xx: nothing of it committed) or one that changed nothing (a stock tool's unchanged push)
 * leaves it, and spends no Cache API operation on it.
 */
export const writesMoveCatalog = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.req.method === "GET" || c.req.method === "HEAD" || !MOVES_CATALOG.test(c.req.path)) return;
  if (c.var.catalogKept || (c.res.status >= 400 && c.res.status < 500)) return;
  await cacheOf()?.delete(POINTER);
});

/** Serves a publishable key's catalog read from the colo's cache, or stores the fresh answer there. */
export const catalogEdge = createMiddleware<AppEnv>(async (c, next) => {
  const view = publicView(c.var.credential);
  const cache = cacheOf();
  if (!view || !cache) return next();
  const url = new URL(c.req.url);
  const version = await catalogVersion(c, cache);
  // The answer depends on the path, the query and what the key may see; never on the key itself.
  const key = new Request(
    `https://catalog.internal/v${version}/${view.stock ? 1 : 0}${view.datafields ? 1 : 0}${url.pathname}${url.search}`,
  );
  const hit = await cache.match(key);
  if (hit) c.res = new Response(hit.body, hit);
  else {
    await next();
    if (c.res.status !== 200) return;
    // A streamed page is not kept: copied to the cache while the client reads it, the isolate would
    // hold whatever the client has not yet taken.
    if (!c.var.streamed) {
      const copy = new Response(c.res.clone().body, c.res);
      copy.headers.set("Cache-Control", STORED_FOR);
      copy.headers.delete("x-d1-bookmark");
      copy.headers.delete("x-request-id");
      await stored(c, cache.put(key, copy));
    }
  }
  c.res.headers.set("X-Catalog-Cache", hit ? "hit" : "miss");
  // The browser revalidates with the ETag: its copy must not outlive a change.
  c.res.headers.set("Cache-Control", "no-cache");
});

/**
 * 304 for an If-None-Match that names the answer's ETag (RFC 9110), whether the answer was made now
 * or served from the cache (it keeps its ETag): the catalog list sets a version-based ETag itself.
 */
export const notModified = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const tag = c.res.headers.get("ETag");
  const sent = c.req.header("If-None-Match");
  if (!tag || !sent || c.res.status !== 200) return;
  const weak = (t: string) => t.trim().replace(/^W\//, "");
  if (sent.trim() !== "*" && !sent.split(",").some((t) => weak(t) === weak(tag))) return;
  const headers = new Headers(c.res.headers);
  headers.delete("Content-Type");
  headers.delete("Content-Length");
  c.res = new Response(null, { status: 304, headers });
});
