import { products, productVersions } from "../db/schema";
import type { PublicView } from "../keys/public";
import { sqlNames } from "../platform/columns";
import { etagOf } from "../platform/hash";
import type { IfMatch } from "./create";

// A product's own version and ETag (docs/stock.md): triggers move
// product_versions with every change of the product or its variants (drizzle/0010_stock_version.sql),
// so the ETag of GET /v1/products/{id} changes when that product changes or sells, and only then.

const PV = sqlNames(productVersions);
const P = sqlNames(products);

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
