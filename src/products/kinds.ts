import { z } from "zod";
import { flag, identifier, int, metadata, money, nonNegative, opt, sku, str } from "../platform/fields";

// What a kind of product or variant field is, in every place a field appears: its request
// validator, how the own dialect answers it (SQL for the answers SQLite builds, JavaScript for the
// presenter, the response schema of the OpenAPI document), and the modelled dialect's encodings.
// src/products/fields.ts gives each field a kind; every list of fields is derived from there.

/** Images per product and per variant (docs/products.md, "Updating products"). */
export const MAX_IMAGES = 50;

/** Whether `s` is an absolute https URL with a host (images are shown to shoppers' browsers). */
function isHttpsUrl(s: string) {
  try {
    const u = new URL(s);
    return u.protocol === "https:" && u.hostname !== "";
  } catch {
    return false;
  }
}
const imageUrl = str(2048).refine(isHttpsUrl, { error: "must be an https URL" });

// An image: {url, alttext}, the modelled API's {image, alttext} (as its reads show it), or a URL.
export const image = z.preprocess(
  (v) => (typeof v === "string" ? { url: v } : v),
  z
    .object(
      { url: opt(imageUrl), image: opt(imageUrl), alttext: opt(str(255)) },
      { error: "must be an object with url" },
    )
    .refine((o) => o.url !== undefined || o.image !== undefined, { path: ["url"], error: "is required" })
    .transform((o): Image => {
      const url = (o.url ?? o.image) as string;
      return o.alttext === undefined ? { url } : { url, alttext: o.alttext };
    }),
);
export type Image = { url: string; alttext?: string };

/**
 * images: an ordered array of {url, alttext} or of URLs, or an object keyed by position
 * ({"1": {"image": ...}}), stored as the ordered list (docs/products.md, "Categories, URLs and images").
 */
export const images = z
  .union([z.array(image), z.record(z.string().regex(/^\d+$/), image)], {
    error: "must be an array of {url, alttext} or of URLs, or an object keyed by position",
  })
  .transform((v): Image[] =>
    Array.isArray(v)
      ? v
      : Object.entries(v)
          .sort(([a], [b]) => Number(a) - Number(b))
          .map(([, img]) => img),
  )
  .refine((list) => list.length <= MAX_IMAGES, { error: `must have at most ${MAX_IMAGES} images` });

const STOCK_RANGE = 1_000_000_000;
export const stock = int(-STOCK_RANGE, STOCK_RANGE, `must be a whole number from -${STOCK_RANGE} to ${STOCK_RANGE}`);

// Response schemas of the own dialect (docs/api.md, "Conventions": money is a JSON number of major
// units, identifiers are integers).
export const moneyOut = z.number().meta({ description: "Money in major units, at most 2 decimals (199.5)." });
export const imageOut = z.object({ url: z.string(), alttext: z.string().optional() });
const flagOut = z.union([z.literal(0), z.literal(1)]);

/** Minor units as the JSON number the presenter gives (12900 -> 129, 19950 -> 199.5), in SQL. */
export const moneySql = (col: string) => `iif(${col} % 100 = 0, ${col} / 100, ${col} / 100.0)`;
/** Stored JSON text to its value; most variants have no images, and "[]" needs no parser. */
export const parseList = (json: string): unknown[] => (json === "[]" ? [] : JSON.parse(json));

/**
 * How the own dialect answers a field of a kind: its SQL over the column `c`, its JavaScript over
 * the stored value (never null: a nullable column's null is answered as null by the caller), and
 * its response schema (made nullable for a nullable column).
 */
export type Own = {
  sql: (c: string) => string;
  js?: (v: never) => unknown;
  schema: z.ZodType;
  /** The schema's description, after its null (the field's `about` replaces it). */
  about?: string;
};

/**
 * A kind of field. `Z` is its request validator; `Out` the type the own dialect answers for a
 * stored value. `text`: counted by the answers' size estimates as text; `json`: stored as JSON text
 * ("object": kept only when the value is an object).
 */
export type Kind<Z extends z.ZodType = z.ZodType, Out = unknown> = {
  zod: Z;
  own: Own;
  text?: true;
  json?: "value" | "object";
  /** The own dialect's value type (types only). */
  out?: Out;
};

/** A kind whose own dialect answers `Out` (types only); `K` keeps the validator's type. */
const kind =
  <Out>() =>
  <const K extends Kind>(k: K) =>
    k as K & { out?: Out };
const plain = (schema: z.ZodType): Own => ({ sql: (c) => c, schema });

export const text = (max: number) => kind<string>()({ zod: str(max), own: plain(z.string()), text: true });
/** A GTIN, supplier SKU or other identifier (a whole number is read as its digits). */
export const IDENTIFIER = kind<string>()({ zod: identifier(255), own: plain(z.string()), text: true });
export const SKU = kind<string>()({ zod: sku, own: plain(z.string()), text: true });
export const MONEY = kind<number>()({
  zod: money,
  own: { sql: moneySql, js: (v: number) => v / 100, schema: moneyOut },
});
export const PERCENT = kind<number>()({ zod: int(0, 100), own: plain(z.number().int().min(0).max(100)) });
/** A stock count (a product's stock, a variant's qty). */
export const COUNT = kind<number>()({ zod: stock, own: plain(z.number().int()) });
export const FLAG = kind<number>()({ zod: flag, own: plain(flagOut) });
/** A flag the own dialect answers as a string, as the interface sends it. */
export const FLAG_TEXT = kind<"0" | "1">()({
  zod: flag,
  own: {
    sql: (c) => `CAST(${c} AS TEXT)`,
    js: (v: number) => String(v),
    schema: z.enum(["0", "1"]).meta({ description: 'A string, as the interface sends it: "1" is on.' }),
  },
});
export const GRAMS = kind<number>()({ zod: nonNegative, own: { ...plain(z.number()), about: "Grams." } });
export const IMAGES = kind<unknown[]>()({
  zod: images,
  own: { sql: (c) => `json(${c})`, js: parseList, schema: z.array(imageOut) },
  text: true,
  json: "value",
});
export const OBJECT = kind<Record<string, unknown>>()({
  zod: metadata,
  own: { sql: (c) => `json(${c})`, js: (v: string) => JSON.parse(v), schema: z.record(z.string(), z.unknown()) },
  text: true,
  json: "object",
});

// The modelled dialect (docs/modelled-reads.md, "Modelled reads"): ids, prices, quantities and
// flags are strings, and missing text is "" rather than null.

/** Text, "" where a nullable column is NULL. */
const orEmpty = (c: string, nullable: boolean) => (nullable ? `coalesce(${c}, '')` : c);
/** Minor units as two-decimal text (14895 -> "148.95", -50 -> "-0.50"), as moneyText. */
export const money2Sql = (col: string) =>
  `(iif(${col} < 0, '-', '') || (abs(${col}) / 100) || '.' || substr('0' || (abs(${col}) % 100), -2))`;
/**
 * Stored images ([{url, alttext}]) as the modelled object keyed by position from "1". Most
 * variants have none: they skip the subquery, one per variant of a page otherwise.
 */
const imagesSql = (col: string) =>
  `iif(${col} = '[]', json('{}'), json(coalesce((SELECT json_group_object(CAST(i.key + 1 AS TEXT), json_object('image', i.value ->> 'url',
    'alttext', coalesce(i.value ->> 'alttext', ''))) FROM json_each(${col}) AS i), '{}')))`;

export const digits = z.string().regex(/^\d+$/).meta({ description: "A whole number as a string." });
export const signedDigits = z
  .string()
  .regex(/^-?\d+$/)
  .meta({ description: "A whole number as a string." });
export const flagText = z.enum(["0", "1"]).meta({ description: 'A flag as a string: "1" on, "0" off.' });
export const textOut = z.string().meta({ description: 'Text; "" when there is none.' });
export const amount2 = z
  .string()
  .regex(/^-?\d+\.\d\d$/)
  .meta({ description: 'Money as text with two decimals: "148.95".' });
export const imagesOut = z
  .record(z.string().regex(/^\d+$/), z.object({ image: z.string(), alttext: z.string() }))
  .meta({ description: 'Images keyed by position from "1": {"1": {"image": url, "alttext": text}}.' });

const amount = z
  .string()
  .regex(/^(\d+(\.\d\d)?)?$/)
  .meta({ description: 'Money as text: "899" when whole, "199.50" otherwise; "" when there is none.' });
const optionalAmount2 = z.string().regex(/^(\d+\.\d\d)?$/);
const gramsText = z.string().meta({ description: 'Grams as text; "0" when not given.' });

/** A modelled encoding: SQL over the column `c` (`nullable` when it may be NULL), and its schema. */
type Modelled = { sql: (c: string, nullable: boolean) => string; schema: (nullable: boolean) => z.ZodType };

export const MODELLED = {
  /** Text; "" for none. */
  text: { sql: orEmpty, schema: (n) => (n ? textOut : z.string()) },
  /** "1" or "0". */
  flag: { sql: (c) => `iif(${c} = 1, '1', '0')`, schema: () => flagText },
  /** A whole number of at least 0 as text. */
  digits: { sql: (c, n) => orEmpty(`CAST(${c} AS TEXT)`, n), schema: () => digits },
  /** A whole number as text. */
  signedDigits: { sql: (c, n) => orEmpty(`CAST(${c} AS TEXT)`, n), schema: () => signedDigits },
  /** A product's price: "899" when whole, else two decimals; "" when none (priceText). */
  price: {
    sql: (c) => `iif(${c} IS NULL, '', iif(${c} % 100 = 0, CAST(${c} / 100 AS TEXT), ${money2Sql(c)}))`,
    schema: () => amount,
  },
  /** A variant's money: two decimals; "" when none. */
  money2: {
    sql: (c, n) => (n ? `iif(${c} IS NULL, '', ${money2Sql(c)})` : money2Sql(c)),
    schema: (n) => (n ? optionalAmount2 : amount2),
  },
  /** A REAL as JavaScript's String() writes it for the values stored here ("2", "1.5"); null is "0". */
  weight: {
    sql: (c) =>
      `iif(${c} IS NULL, '0', iif(${c} = CAST(${c} AS INTEGER), CAST(CAST(${c} AS INTEGER) AS TEXT), CAST(${c} AS TEXT)))`,
    schema: () => gramsText,
  },
  /** {"1": {"image", "alttext"}, ...}. */
  images: { sql: imagesSql, schema: () => imagesOut },
} satisfies Record<string, Modelled>;
export type ModelledEncoding = keyof typeof MODELLED;
