import { catalogVersion, products, productVersions } from "../db/schema";
import type { PublicView } from "../keys/public";
import { sqlNames } from "../platform/columns";
import { type DB, stmt } from "../platform/d1";
import { etagOf } from "../platform/hash";
import type { IfMatch } from "./write";

// A product's own version and ETag (docs/stock.md), and the catalogue's (docs/keys.md): every
// batch that changes a product or its variants ends with versionBumps (a trigger only gives a new
// product its row, drizzle/0010_stock_version.sql), so the ETag of GET /v1/products/{id} changes
// when that product changes or sells, and only then.

const PV = sqlNames(productVersions);
const P = sqlNames(products);
const CV = sqlNames(catalogVersion);

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
