import type { variants } from "../db/schema";
import { VARIANT_FIELDS, type VariantFieldName } from "./fields";
import { OPTION_SLOTS as SLOTS, type VariantEntry, type VariantUpdateEntry } from "./schema";
import { VARIANT_VALUES, type VariantValue } from "./variants";

export { SLOTS };

// A variant list as the create binds it (./create.ts).
// An entry travels as an array: a bit mask of the fields it gives (an update's null clears a
// field; absent keeps it), the variant id of an update, two values of its kind (a created
// variant's position and its product's place in the batch; an update's `adjust` and
// `expected_qty`), then what the statements read, in FIELDS' order, up to the last field it
// gives (SQLite reads a place past the end as NULL). Arrays of values serialise at about a third
// of the CPU of the entry objects and half their bytes, which the binding copies again when it
// sends the batch; ending each at its last field spares a quarter of a large create's bytes, the
// nulls of the fields feeds leave out.
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
const MASK = 0;
export const VARIANT_ID = 1;
/** Where an update entry's `adjust` and `expected_qty` stand. */
export const ADJUST = 2;
export const EXPECTED = 3;
/** Where a created variant's position and its product's place in the batch stand (packedRows with an owner). */
export const POSITION = 2;
export const OWNER = 3;
const FIRST = 4;
/** Where field `f` stands in an entry array. */
export const slotOf = (f: Field) => FIRST + FIELDS.indexOf(f);
/** SQL: field `f` of the entry array `data` (images as their JSON text). */
export const at = (data: string, f: Field) => `${data}->>'$[${FIRST + FIELDS.indexOf(f)}]'`;
/** SQL: whether the entry gives field `f`. */
export const given = (data: string, f: Field) => `(${data}->>'$[${MASK}]' & ${1 << FIELDS.indexOf(f)}) <> 0`;
export const value = (n: number) => `variant_option${n}_value` as Field;

/** The list as packed JSON text. */
export const packed = (entries: (VariantEntry | VariantUpdateEntry)[]) => JSON.stringify(packedRows(entries));

// Every row is a copy of this row of nulls, filled in place and cut after its last field: an
// array of its exact length whose elements are never a hole, which JSON.stringify writes on its
// fast path. Rows made with `new Array(n)` and grown by push took twice the memory and 40 % more
// CPU, packing and serialising included (a create of 2,048 entries, measured in Node).
const NULLS: null[] = [];
for (let i = 0; i < FIRST + FIELDS.length; i++) NULLS.push(null);

/**
 * The entries as packed rows; with `owner` (a create), each also with its position and its
 * product's place in the batch; an update entry with its `adjust` and `expected_qty`.
 */
export function packedRows(entries: (VariantEntry | VariantUpdateEntry)[], owner?: number): unknown[][] {
  const out: unknown[][] = [];
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as VariantUpdateEntry;
    const row: unknown[] = NULLS.slice();
    let mask = 0;
    let end = FIRST;
    for (let f = 0; f < FIELDS.length; f++) {
      const v = e[FIELDS[f] as keyof VariantUpdateEntry];
      if (v !== undefined) {
        row[FIRST + f] = v;
        mask |= 1 << f;
        end = FIRST + f + 1;
      }
    }
    row.length = end;
    row[MASK] = mask;
    if (e.variant_id !== undefined) row[VARIANT_ID] = e.variant_id;
    if (owner !== undefined) {
      row[POSITION] = i;
      row[OWNER] = owner;
    } else {
      if (e.adjust !== undefined) row[ADJUST] = e.adjust;
      if (e.expected_qty !== undefined) row[EXPECTED] = e.expected_qty;
    }
    out.push(row);
  }
  return out;
}
