import type { RawList } from "../platform/body";
import { fitsOneValue } from "../platform/d1";
import { MAX_MONEY } from "../platform/fields";
import { boundSql, carriedBound } from "../platform/quotes";
import { CLEARABLE, IDENTIFIER, MAX_WEIGHT, MONEY, type Mode, plainEntries, STOCK } from "./entries";
import { FIELDS } from "./packed";
import { MAX_VARIANTS } from "./schema";
import { NAME_KEYS, namesOf, VALUE_KEYS } from "./variants";

// A variant list checked and packed by SQLite from the request's own text (docs/products.md,
// "Limits"). For a list of 2,048 entries, parsing it in the Worker, checking every entry
// (./entries.ts) and serialising the packed rows again (./packed.ts) was most of a sync's or a
// create's CPU; here the list's text is bound as it came and each entry becomes the packed array
// the SQL-planned writes read, in the statement that reads it. Only the plain forms
// ./entries.ts takes without zod are taken, and more narrowly still (text of the Basic
// Multilingual Plane without control characters, whole numbers written as such, no repeated
// key): any other entry packs to NULL, which fails the batch, and the request is then parsed and
// checked in the Worker as before, whose errors are the answer's. test/products.raw-list.test.ts
// holds what SQLite packs equal to packed(plainEntries(...)) on random list texts.

/** JavaScript's String.prototype.trim set, as far as it lies inside the text PLAIN accepts. */
const WS = [
  9, 10, 32, 160, 5760, 8192, 8193, 8194, 8195, 8196, 8197, 8198, 8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288,
  65279,
];
// The statements' text stays ASCII: one character past Latin-1 anywhere in a batch makes the
// binding serialise the whole batch, the 700 KB list included, as two-byte text, slower to write
// and to encode for the fetch to D1. A scalar subquery of constants is evaluated once per statement.
const WS_SQL = `(SELECT char(${WS.join(", ")}))`;
const trimmed = (s: string) => `trim(${s}, ${WS_SQL})`;

// Tab, newline, printable ASCII and the Basic Multilingual Plane without C1 controls and
// surrogates: ./entries.ts's PLAIN. A GLOB's ranges compare code points.
const NOT_PLAIN = `(SELECT '*[^' || char(9, 10) || ' -~' || char(0xa0) || '-' || char(0xd7ff, 0xe000) || '-' || char(0xffff) || ']*')`;
/** SQL: text a str(255) field takes as it is (NUL is checked apart: a GLOB stops at it). */
const plainText = (s: string) =>
  `(length(${s}) <= 255 AND NOT ${s} GLOB ${NOT_PLAIN} AND instr(CAST(${s} AS BLOB), x'00') = 0)`;

// Each key of an entry is classed once (a CASE on the key): the rules below then compare small
// numbers. Kinds 1 to 4 are text as it is, 5 the SKU (trimmed), 6 and 7 money (./entries.ts,
// MONEY), 8 the stock, 9 the weight, 10 the flag; 0 is a key no entry has.
const KINDS: Record<string, number> = {
  ...Object.fromEntries(NAME_KEYS.map((k) => [k, 1])),
  ...Object.fromEntries(VALUE_KEYS.map((k) => [k, 2])),
  qty_location: 3,
  ...Object.fromEntries([...IDENTIFIER].map((k) => [k, 4])),
  sku: 5,
  price: 6,
  before_price: 7,
  purchase_price: 7,
  qty: 8,
  weight: 9,
  visible: 10,
  variant_id: 11,
};
const kind = (mode: Mode) =>
  `CASE f.key ${Object.entries(KINDS)
    .filter(([k]) => mode === "update" || k !== "variant_id")
    .map(([k, n]) => `WHEN '${k}' THEN ${n}`)
    .join(" ")} ELSE 0 END`;
/** The kinds of the keys ./entries.ts's `set` names. */
const kindsOf = (set: ReadonlySet<string>) => [
  ...new Set(
    Object.entries(KINDS)
      .filter(([k]) => set.has(k))
      .map(([, n]) => n),
  ),
];
const CLEARS = kindsOf(CLEARABLE).join(", ");
const BIT = `CASE f.key ${FIELDS.map((k, i) => `WHEN '${k}' THEN ${1 << i}`).join(" ")} ELSE 0 END`;

/** SQL, per key of `y` (its kind, JSON type, value and trimmed text): whether it is a plain form of its field. */
const PLAIN_FIELD = `kind > 0 AND CASE t
    WHEN 'text' THEN tr = '' OR (kind <= 4 AND ${plainText("a")}) OR (kind = 5 AND ${plainText("tr")})
    WHEN 'null' THEN update_mode AND kind IN (${CLEARS})
    WHEN 'integer' THEN CASE kind
      WHEN 6 THEN a BETWEEN 0 AND ${MAX_MONEY / 100}
      WHEN 7 THEN a BETWEEN 0 AND ${MAX_MONEY / 100}
      WHEN 8 THEN a BETWEEN ${-STOCK} AND ${STOCK}
      WHEN 9 THEN a BETWEEN 0 AND ${MAX_WEIGHT}
      WHEN 10 THEN a IN (0, 1)
      WHEN 11 THEN a BETWEEN 1 AND ${Number.MAX_SAFE_INTEGER}
      ELSE 0 END
    WHEN 'true' THEN kind = 10
    WHEN 'false' THEN kind = 10
    ELSE 0 END`;

/**
 * SQL: a table (key, value) of the list `param` (the request's text of the list), each entry as
 * the packed array ./packed.ts writes, to stand where the packed list's json_each stands; or as
 * NULL when it is not an object of plain fields, repeats a key, names options other than `names`
 * (a JSON array bound by the caller; an entry may name none), or, in an update, lacks its variant
 * id. One pass over every key of every entry (`y`, then `x`), grouped by entry: its given fields
 * gathered into one small object `o`, read back in the packed order. (A subquery per entry cost
 * several times as much in SQLite.) The packed entries are materialised (`z`): the statements
 * reading them name `value` a dozen times or more, and SQLite, flattening a plain subquery into
 * its reader, would build each entry's array again at every mention (a sync of 2,048 entries took
 * 1.5 s of SQLite so, 0.3 s now; bench/README.md, "D1 SQL ms").
 */
export function rawSource(param: string, names: string, mode: Mode) {
  const named = NAME_KEYS.map((k, i) => `o->>'${k}' IS (${names} ->> ${i})`).join(" AND ");
  const ok = [
    "type = 'object'",
    "bad = 0",
    "n = nk",
    `(named = 0 OR (${named}))`,
    ...(mode === "update" ? ["o->>'variant_id' IS NOT NULL"] : []),
  ].join(" AND ");
  const values = FIELDS.map((k) => (k === "images" ? "NULL" : `o->>'${k}'`));
  return `(WITH y AS MATERIALIZED (SELECT r.key AS entry, r.type AS type, f.key AS k, f.type AS t, f.atom AS a,
        ${kind(mode)} AS kind, ${BIT} AS bit, ${mode === "update" ? 1 : 0} AS update_mode,
        iif(f.type = 'text', ${trimmed("f.atom")}, NULL) AS tr
      FROM json_each(${listText(param)}) AS r LEFT JOIN json_each(iif(r.type = 'object', r.value, NULL)) AS f),
    x AS MATERIALIZED (SELECT entry, type, k, kind, bit, tr IS NOT '' AS g, ${PLAIN_FIELD} AS ok,
        CASE WHEN t = 'text' THEN iif(kind = 5, tr, a) WHEN kind IN (${kindsOf(MONEY).join(", ")}) THEN a * 100 ELSE a END AS v FROM y),
    z AS MATERIALIZED (SELECT key, iif(${ok}, json_array(${values.join(", ")}, mask, ${mode === "update" ? "o->>'variant_id'" : "NULL"}), NULL) AS value
      FROM (SELECT entry AS key, type, json_group_object(k, v) FILTER (WHERE g) AS o, total(NOT ok) AS bad,
          count(k) AS n, count(DISTINCT k) AS nk, coalesce(sum(bit * g), 0) AS mask, coalesce(sum(kind = 1 AND g), 0) AS named
        FROM x GROUP BY entry) AS e)
    SELECT key, value FROM z)`;
}

/**
 * The list's text as rawSource's `param` takes it (carried: src/platform/quotes.ts, carriedBound);
 * undefined when it is too long for one bound value.
 */
export function rawBound(raw: RawList): string | undefined {
  const bound = carriedBound(raw.text);
  return fitsOneValue(bound.text, bound.bytes) ? bound.text : undefined;
}

/**
 * SQL: whether the list `t` is not one this path reads: not a JSON array of 1 to MAX_VARIANTS
 * entries in strict JSON, or holding an escaped surrogate, which SQLite decodes into text the
 * Worker's checks would refuse (a lone one) or into a character outside PLAIN (a pair) anyway.
 */
export const rawListRefused = (t: string) => `CASE WHEN json_valid(${t})
    THEN json_type(${t}) <> 'array' OR json_array_length(${t}) NOT BETWEEN 1 AND ${MAX_VARIANTS}
      OR ${t} GLOB '*\\[uU][dD][89abcdefABCDEF]*'
    ELSE 1 END`;

/**
 * SQL: the list's text `param` (bound carried: src/platform/quotes.ts, carriedBound; turned back
 * once, materialised), or an empty list when rawListRefused: no json_each meets text that
 * is not JSON, and no entry comes of a list this path does not read, which the statements reading
 * it refuse (a sync's plan has no rows; a create inserts no variant). One statement binds the text
 * once: D1's binding serialises every bound value again, about 6 ms of CPU for 700 KB (measured).
 */
const listText = (param: string) =>
  `(WITH s AS MATERIALIZED (SELECT ${boundSql(param)} AS t) SELECT iif(${rawListRefused("t")}, '[]', t) FROM s)`;

/**
 * The option names the list's first entry gives, read from its text: string[]; null when it
 * names none; false when the list should not be taken as text: its first entry is not one in the
 * plain forms (./entries.ts), or names options out of order or twice. A client writes every entry
 * the same way, so the first one tells whether SQLite will take the list; one that would not
 * (decimal prices, say) is parsed in the Worker at once, without a refused batch first. SQLite
 * then holds every entry to these names (rawSource).
 */
export function firstNames(list: string, mode: Mode): string[] | null | false {
  const close = list.indexOf("}");
  if (close < 0) return false;
  let first: unknown;
  try {
    first = JSON.parse(list.slice(1, close + 1));
  } catch {
    return false;
  }
  const [entry] = plainEntries([first], mode) ?? [];
  if (!entry) return false;
  const r = namesOf(entry);
  return r.error ? false : (r.names ?? null);
}
