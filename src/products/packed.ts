import type { variants } from "../db/schema";
import { VARIANT_FIELDS, type VariantFieldName } from "./fields";
import { OPTION_SLOTS as SLOTS, type VariantEntry } from "./schema";
import { VARIANT_VALUES, type VariantValue } from "./variants";

export { SLOTS };

// A variant list as the create binds it (./create.ts).
// An entry travels as an array: its position and its product's place in the batch, then what the
// statements read, in FIELDS' order, up to the last field it gives (SQLite reads a place past the
// end as NULL). Arrays of values serialise at about a third of the CPU of the entry objects and
// half their bytes, which the binding copies again when it sends the batch; ending each at its
// last field spares a quarter of a large create's bytes, the nulls of the fields feeds leave out.
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
/** Where a created variant's position and its product's place in the batch stand. */
export const POSITION = 0;
export const OWNER = 1;
const FIRST = 2;
/** SQL: field `f` of the entry array `data` (images as their JSON text). */
export const at = (data: string, f: Field) => `${data}->>'$[${FIRST + FIELDS.indexOf(f)}]'`;
export const value = (n: number) => `variant_option${n}_value` as Field;

// Every row is a copy of this row of nulls, filled in place and cut after its last field: an
// array of its exact length whose elements are never a hole, which JSON.stringify writes on its
// fast path. Rows made with `new Array(n)` and grown by push took twice the memory and 40 % more
// CPU, packing and serialising included (a create of 2,048 entries, measured in Node).
const NULLS: null[] = [];
for (let i = 0; i < FIRST + FIELDS.length; i++) NULLS.push(null);

/** The entries as packed rows, each with its position and its product's place (`owner`) in the batch. */
export function packedRows(entries: VariantEntry[], owner: number): unknown[][] {
  const out: unknown[][] = [];
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    const row: unknown[] = NULLS.slice();
    let end = FIRST;
    for (let f = 0; f < FIELDS.length; f++) {
      const v = e[FIELDS[f]];
      if (v !== undefined) {
        row[FIRST + f] = v;
        end = FIRST + f + 1;
      }
    }
    row.length = end;
    row[POSITION] = i;
    row[OWNER] = owner;
    out.push(row);
  }
  return out;
}
