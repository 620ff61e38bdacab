import type { variants } from "../db/schema";
import { VARIANT_FIELDS, type VariantFieldName } from "./fields";
import { OPTION_SLOTS as SLOTS, type VariantEntry, type VariantUpdateEntry } from "./schema";
import { VARIANT_VALUES, type VariantValue } from "./variants";

export { SLOTS };

// A variant list as the SQL-planned writes bind it (./update/variants-sql.ts, ./create.ts).
// An entry travels as an array of what the statements read, in this order, then a bit mask of the
// fields it gives (an update's null clears a field; absent keeps it), then the variant id of an
// update. Arrays of values serialise at about a third of the CPU of the entry objects and half
// their bytes, which the binding copies again when it sends the batch.
export type Field = "sku" | `variant_option${1 | 2 | 3 | 4 | 5}_value` | VariantValue | "images";
/** The variant's fields (./fields.ts) with its option values after its SKU, images last. */
export const FIELDS: readonly Field[] = [
  "sku",
  ...SLOTS.map((n) => `variant_option${n}_value` as const),
  ...VARIANT_VALUES,
  "images",
];
/** The variants column (its schema property, src/db/schema/) each field is stored in. */
export const COLUMN_OF = Object.fromEntries([
  ...Object.entries(VARIANT_FIELDS).map(([name, f]) => [name, f.column]),
  ...SLOTS.map((n) => [`variant_option${n}_value`, `option${n}`]),
]) as Record<Field, keyof typeof variants._.columns>;
/** What a new variant is written from, its SKU aside, each with the SQL it takes when absent. */
export const WRITTEN = (Object.entries(VARIANT_FIELDS) as [VariantFieldName, { absent?: string }][])
  .filter(([name]) => name !== "sku")
  .map(([name, f]): [Field, string?] => [name, f.absent]);
const GIVEN = FIELDS.length;
export const VARIANT_ID = GIVEN + 1;
/** SQL: field `f` of the entry array `data` (images as their JSON text). */
export const at = (data: string, f: Field) => `${data}->>'$[${FIELDS.indexOf(f)}]'`;
/** SQL: whether the entry gives field `f`. */
export const given = (data: string, f: Field) => `(${data}->>'$[${GIVEN}]' & ${1 << FIELDS.indexOf(f)}) <> 0`;
export const value = (n: number) => `variant_option${n}_value` as Field;

/** Where an update entry's `adjust` and `expected_qty` stand (given only when one is). */
export const ADJUST = VARIANT_ID + 1;
export const EXPECTED = VARIANT_ID + 2;
/** Where a created variant's position and its product's place in the batch stand (packedRows with an owner). */
export const POSITION = VARIANT_ID + 1;
export const OWNER = VARIANT_ID + 2;

/** The list as packed JSON text. */
export const packed = (entries: (VariantEntry | VariantUpdateEntry)[]) => JSON.stringify(packedRows(entries));

/**
 * The entries as packed rows; with `owner` (a create), each also with its position and its
 * product's place in the batch; an update entry with `adjust` or `expected_qty`, with those.
 */
export function packedRows(entries: (VariantEntry | VariantUpdateEntry)[], owner?: number): unknown[][] {
  const out = new Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as VariantUpdateEntry;
    // FIELDS' order, then the mask and the variant id.
    const row: unknown[] = new Array(GIVEN + 2);
    let mask = 0;
    for (let f = 0; f < GIVEN; f++) {
      const v = e[FIELDS[f] as keyof VariantUpdateEntry];
      row[f] = v;
      if (v !== undefined) mask |= 1 << f;
    }
    row[GIVEN + 1] = e.variant_id;
    row[GIVEN] = mask;
    if (owner !== undefined) row.push(i, owner);
    else if (e.adjust !== undefined || e.expected_qty !== undefined) row.push(e.adjust, e.expected_qty);
    out[i] = row;
  }
  return out;
}
