import type { DB } from "../../db/client";
import { skus, variantSync, variants } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { stmt } from "../../platform/d1";
import { slotOf, VARIANT_ID } from "../packed";
import type { RoundItem } from "./variants-sql";

// A selected variant's leading entry (./variants-route.ts, `lead`) giving it a SKU another variant
// of its product has. The JavaScript plan (./plan.ts) applies the lists after the leading entry to
// the variants as it leaves them, two of them with that SKU (a sync naming it matches the later of
// the two in the product's order, as its map of SKUs keeps the last), and checks SKUs only on what
// the last list leaves: a sync deleting one of the two, or an update renaming one, frees it. The
// unique registry cannot hold that state, so the earlier of the two (the one a sync's SKU would
// not match) holds a placeholder of its own until the last list, and then takes the SKU, unless a
// list deleted it or gave it another SKU; where both still have it, the registry refuses the batch
// then, as the JavaScript plan refuses the SKU used twice. The placeholder has a control
// character, which no SKU a body gives may have (src/platform/fields.ts).

const V = sqlNames(variants);
const S = sqlNames(variantSync);
const K = sqlNames(skus);

/** SQL: the placeholder SKU of variant `id` (a column or expression). */
const held = (id: string) => `char(1) || 'lead ' || ${id}`;

// ?1: [[product id, selected variant id, SKU]] of the round's leading entries that give a SKU.
const r = { product: "r.value->>0", variant: "r.value->>1", sku: "r.value->>2" };
/** The selected variant's place in the product's order (its position, then its id). */
const selected = `(SELECT s.${V.position}, s.${V.id} FROM ${V.$} AS s WHERE s.${V.id} = ${r.variant} AND s.${V.productId} = ${r.product})`;

// The other variant comes later: the selected one's leading entry (in the scratch table) takes the
// placeholder instead of the SKU.
const SELECTED_HOLDS = `
  UPDATE ${S.$} SET ${S.data} = json_replace(${S.data}, '$[${slotOf("sku")}]', ${held(`${S.$}.${S.variantId}`)})
  FROM json_each(?1) AS r
  WHERE ${S.$}.${S.productId} = ${r.product} AND ${S.$}.${S.variantId} = ${r.variant} AND EXISTS (
    SELECT 1 FROM ${K.$} AS k JOIN ${V.$} AS h ON h.${V.id} = k.${K.variantId}
    WHERE k.${K.sku} = ${r.sku} AND k.${K.productId} = ${r.product} AND h.${V.id} <> ${r.variant}
      AND (h.${V.position}, h.${V.id}) > ${selected})`;
// The other variant comes earlier: it takes the placeholder before the leading entry is written.
const OTHER_HOLDS = `
  UPDATE ${V.$} SET ${V.sku} = ${held(`${V.$}.${V.id}`)}
  FROM json_each(?1) AS r JOIN ${K.$} AS k ON k.${K.sku} = ${r.sku} AND k.${K.productId} = ${r.product}
  WHERE ${V.$}.${V.id} = k.${K.variantId} AND ${V.$}.${V.id} <> ${r.variant}
    AND (${V.$}.${V.position}, ${V.$}.${V.id}) < ${selected}`;
// After the last list: a placeholder still held becomes the SKU.
const RESTORED = `
  UPDATE ${V.$} SET ${V.sku} = ${r.sku} FROM json_each(?1) AS r
  WHERE ${V.$}.${V.productId} = ${r.product} AND ${V.$}.${V.sku} = ${held(`${V.$}.${V.id}`)}`;

/** [product id, selected variant id, SKU] of each item whose leading entry gives a SKU. */
function leadSkus(round: RoundItem[]): string | undefined {
  const rows = round.flatMap(({ list, resolved }) => {
    if (!list.lead) return [];
    const [[part]] = list.lists[0].entries;
    const [entry] = JSON.parse(part) as unknown[][];
    const sku = entry[slotOf("sku")];
    return typeof sku === "string" ? [[resolved.productId, entry[VARIANT_ID], sku]] : [];
  });
  return rows.length ? JSON.stringify(rows) : undefined;
}

/** Before the leading entries are written (their plan in the scratch table): the placeholders. */
export function leadSkuHeld(db: DB, round: RoundItem[]): D1PreparedStatement[] {
  const rows = leadSkus(round);
  return rows ? [stmt(db, SELECTED_HOLDS, rows), stmt(db, OTHER_HOLDS, rows)] : [];
}

/** After the last list: the placeholders still held take the SKU. */
export function leadSkuRestored(db: DB, round: RoundItem[]): D1PreparedStatement[] {
  const rows = leadSkus(round);
  return rows ? [stmt(db, RESTORED, rows)] : [];
}
