import type { DB } from "../../db/client";
import { products, skus, staleReads, variantSync, variants } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { stmt } from "../../platform/d1";
import { slotOf, VARIANT_ID } from "../packed";
import type { RoundItem } from "./variants-route";

// A selected variant's leading entry (./variants-route.ts, `lead`) giving it a SKU something else
// has. The lists after the leading entry apply to the variants as it leaves them (a sync naming
// the SKU matches the variant that has it; of two variants of the product, the later in its
// order) and SKUs are checked only on what the last list leaves: a sync deleting the variant, or an update giving it another SKU, frees
// the SKU again, and so does one deleting or renaming another variant that has it. The registry
// cannot hold two owners of a SKU, so until the last list one of the two holds a placeholder of its
// own: the selected variant, unless an earlier variant of its product has the SKU (that one holds
// it then, and a sync naming the SKU matches the selected variant). After the last list a
// placeholder still held takes the SKU, where the registry refuses the batch if its owner still
// has it, as a SKU used twice is refused; the SKU of another product as the batch began refuses it
// whatever the round did since. A placeholder has a
// control character, which no SKU a body gives may have (src/platform/fields.ts).

const V = sqlNames(variants);
const S = sqlNames(variantSync);
const K = sqlNames(skus);
const STALE = sqlNames(staleReads);
const P = sqlNames(products);

/** SQL: the placeholder SKU of variant `id`: `kind` 'lead ' takes the SKU at the end, 'taken ' refuses. */
const held = (id: string, kind = "'lead '") => `char(1) || ${kind} || ${id}`;

// ?1: [[product id, selected variant id, SKU, 1 when another item gives it]] (`leadSkus`).
const r = { product: "r.value->>0", variant: "r.value->>1", sku: "r.value->>2" };
/** The selected variant's place in the product's order (its position, then its id). */
const selected = `(SELECT s.${V.position}, s.${V.id} FROM ${V.$} AS s WHERE s.${V.id} = ${r.variant} AND s.${V.productId} = ${r.product})`;

// Another owner of the SKU but an earlier variant of the product, or another item of the round
// giving the SKU (?1's fourth: 1; its claim would meet the selected variant's, which a list after
// may delete): the leading entry (in the scratch table) gives the selected variant the placeholder
// instead of the SKU.
const SELECTED_HOLDS = `
  UPDATE ${S.$} SET ${S.data} = json_replace(${S.data}, '$[${slotOf("sku")}]',
    ${held(`${S.$}.${S.variantId}`, `iif(k.${K.productId} <> ${r.product}, 'taken ', 'lead ')`)})
  FROM json_each(?1) AS r LEFT JOIN ${K.$} AS k ON k.${K.sku} = ${r.sku}
    LEFT JOIN ${V.$} AS h ON h.${V.id} = k.${K.variantId}
  WHERE ${S.$}.${S.productId} = ${r.product} AND ${S.$}.${S.variantId} = ${r.variant}
    AND iif(k.${K.sku} IS NULL, r.value->>3,
      k.${K.variantId} IS NOT ${r.variant}
      AND NOT coalesce(k.${K.productId} = ${r.product} AND (h.${V.position}, h.${V.id}) < ${selected}, 0))`;
// An earlier variant of the product has it: that one holds the placeholder before the leading
// entry is written.
const OTHER_HOLDS = `
  UPDATE ${V.$} SET ${V.sku} = ${held(`${V.$}.${V.id}`)}
  FROM json_each(?1) AS r JOIN ${K.$} AS k ON k.${K.sku} = ${r.sku} AND k.${K.productId} = ${r.product}
  WHERE ${V.$}.${V.id} = k.${K.variantId} AND ${V.$}.${V.id} <> ${r.variant}
    AND (${V.$}.${V.position}, ${V.$}.${V.id}) < ${selected}`;
// After the last list: a placeholder still held becomes the SKU; one of a SKU another product had
// as the batch began fails the batch (stale_reads' always-false CHECK).
const RESTORED = `
  UPDATE ${V.$} SET ${V.sku} = ${r.sku} FROM json_each(?1) AS r
  WHERE ${V.$}.${V.productId} = ${r.product} AND ${V.$}.${V.sku} = ${held(`${V.$}.${V.id}`)}`;
const TAKEN = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ${r.product} FROM json_each(?1) AS r
  WHERE EXISTS (SELECT 1 FROM ${V.$} AS v WHERE v.${V.id} = ${r.variant} AND v.${V.sku} = ${held(`v.${V.id}`, "'taken '")})`;

/**
 * [product id, selected variant id, SKU, 1 when another item of the round gives the SKU] of each
 * item whose leading entry gives a SKU.
 */
function leadSkus(round: RoundItem[]): string | undefined {
  const rows = round.flatMap(({ list, resolved }) => {
    if (!list.lead) return [];
    const [[part]] = list.lists[0].entries;
    const [entry] = JSON.parse(part) as unknown[][];
    const sku = entry[slotOf("sku")];
    return typeof sku === "string" ? [[resolved.productId, entry[VARIANT_ID], sku, 0]] : [];
  });
  if (!rows.length) return undefined;
  if (round.length > 1) {
    for (const row of rows) if (givenElsewhere(round, row[0] as number, row[2] as string)) row[3] = 1;
  }
  return JSON.stringify(rows);
}

/** Whether an item of the round on another product gives the SKU (its own or an entry's). */
function givenElsewhere(round: RoundItem[], productId: number, sku: string): boolean {
  return round.some(({ list, resolved }) => {
    if (resolved.productId === productId) return false;
    const { sku: own, variants } = list.item.data;
    if (own === sku) return true;
    return [variants?.sync, variants?.add, variants?.update].some((l) => l?.some((e) => e.sku === sku));
  });
}

/** Before the leading entries are written (their plan in the scratch table): the placeholders. */
export function leadSkuHeld(db: DB, round: RoundItem[]): D1PreparedStatement[] {
  const rows = leadSkus(round);
  return rows ? [stmt(db, SELECTED_HOLDS, rows), stmt(db, OTHER_HOLDS, rows)] : [];
}

/** After the last list: the placeholders still held take the SKU, or refuse one another product had. */
export function leadSkuRestored(db: DB, round: RoundItem[]): D1PreparedStatement[] {
  const rows = leadSkus(round);
  return rows ? [stmt(db, RESTORED, rows), stmt(db, TAKEN, rows)] : [];
}

// The SKU the fields beside the lists give the product, where a list follows the first (the fields
// are written with the first: ./variants-sql.ts, productFields) is checked on what the last list
// leaves, as every SKU of a request is (./states.ts, finalChecks): an update or sync after may free
// it from a variant of the product. Until the last list the product holds a placeholder of its own,
// so its old SKU is freed with the first list as before; after the last list the placeholder takes
// the SKU, where the registry refuses one a variant still has or another product has, which the
// refusal read words from what the lists leave (./diagnose.ts). One statement more, only in a batch
// with such an item.
export const ownHeld = (id: number) => `\u0001own ${id}`;
export const ownSkuLater = ({ list }: RoundItem) => list.lists.length > 1 && typeof list.product?.sku === "string";
const OWN_SKU_RESTORED = `
  UPDATE ${P.$} SET ${P.sku} = r.value->>1 FROM json_each(?1) AS r
  WHERE ${P.$}.${P.id} = r.value->>0 AND ${P.$}.${P.sku} = char(1) || 'own ' || ${P.$}.${P.id}`;

/** After the last list: the product's own SKU the fields give, held until then (`ownSkuLater`). */
export function ownSkuRestored(db: DB, round: RoundItem[]): D1PreparedStatement[] {
  const rows = round.filter(ownSkuLater).map((r) => [r.resolved.productId, r.list.product?.sku]);
  return rows.length ? [stmt(db, OWN_SKU_RESTORED, JSON.stringify(rows))] : [];
}
