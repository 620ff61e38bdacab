import type { DB } from "../../db/client";
import { products, productVersions } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { runBatch, stmt } from "../../platform/d1";
import type { IfMatch } from "../create";
import { presentReads, productReads } from "../read";
import { productETag } from "../version";
import type { Failed } from "./select";

// The answer to an If-Match naming a version the product no longer has (docs/stock.md), for the
// rounds of ./index.ts.

const P = sqlNames(products);
const PV = sqlNames(productVersions);
export const VERSIONS = `SELECT ${PV.productId} AS product_id, ${PV.version} AS version FROM ${PV.$}
  WHERE ${PV.productId} IN (SELECT value FROM json_each(?1))`;

/** The 412 of an If-Match that names another version: the product as it is now, and its ETag. */
export async function changedSince(db: DB, id: number, ifMatch: IfMatch): Promise<Failed> {
  const [ps, vs, v] = await runBatch(db, [...productReads(db, `p.${P.id} = ?1`, id), stmt(db, VERSIONS, `[${id}]`)]);
  const current = presentReads(ps, vs).products[0];
  ifMatch.etag = productETag(id, v.results[0]?.version);
  return {
    ok: false,
    status: 412,
    errors: [
      `If-Match: product ${id} changed since that ETag; products holds it as it is now, with its ETag in the ETag header`,
    ],
    ...(current ? { current } : {}),
  };
}
