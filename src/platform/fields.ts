import { z } from "zod";

// The fields of request bodies and how an item is validated (docs/api.md, "Conventions").
//
// Lenient scalars: real clients send numbers as numeric strings and flags in several shapes. Each
// accepts exactly the listed forms and names the problem otherwise; nothing of the wrong type is
// coerced silently.

const NUMERIC = /^-?\d+(\.\d+)?$/;
/** Text that has neither a control character (tab and newline allowed) nor a surrogate. */
const PLAIN = /^[\t\n\x20-\x7e\u00a0-\ud7ff\ue000-\uffff]*$/;
// Control characters other than tab and newline are errors (docs/products.md, "Products"): Unicode category Cc,
// which includes C1 (U+0080-U+009F; U+0085 is a line break to some readers).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
export const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
// A "\ud800" escape parses to half a surrogate pair, which D1 cannot store as UTF-8: it would
// come back as replacement characters, so the text is refused rather than silently changed.
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const MAX_MONEY = 100_000_000_000; // 1,000,000,000.00 in minor units
export const MAX_ORDER_TOTAL = 1_000_000_000_000; // 10,000,000,000.00 in minor units

const required = (what: string) => (iss: { input: unknown }) => (iss.input === undefined ? "is required" : what);

/** A number or numeric string, returned as its canonical decimal text. */
function decimalText(v: unknown): string | undefined {
  if (typeof v === "number") {
    if (!Number.isFinite(v)) return undefined;
    const s = String(v);
    return NUMERIC.test(s) ? s : undefined; // 1e21 and 1e-7 are not plain decimals
  }
  if (typeof v === "string") {
    const s = v.trim();
    return NUMERIC.test(s) ? s : undefined;
  }
  return undefined;
}

const numberInput = (what: string) => z.union([z.number(), z.string()], { error: required(what) });

/** Money: at most 2 decimals, 0 to 1,000,000,000, returned as integer minor units. */
// "199,50": a decimal comma, as many European shop systems write prices. Refused, not guessed,
// because "1,500" means 1.5 in one locale and 1500 in another; the message says what to send.
const DECIMAL_COMMA = /^\s*-?\d+,\d+\s*$/;

export const money = numberInput("must be an amount of money").transform((v, ctx) => {
  const s = decimalText(v);
  if (s === undefined) {
    const message =
      typeof v === "string" && DECIMAL_COMMA.test(v)
        ? `must use a point as the decimal separator: "${v.trim().replace(",", ".")}", not "${v.trim()}"`
        : "must be an amount of money";
    ctx.addIssue({ code: "custom", message, input: v });
    return z.NEVER;
  }
  const [int, frac = ""] = s.replace("-", "").split(".");
  if (frac.length > 2) {
    ctx.addIssue({ code: "custom", message: "must have at most 2 decimals", input: v });
    return z.NEVER;
  }
  if (s.startsWith("-") && /[1-9]/.test(s)) {
    ctx.addIssue({ code: "custom", message: "must not be negative", input: v });
    return z.NEVER;
  }
  // Integer arithmetic on the digits: 0.1 + 0.2 style float error never reaches the books.
  const cents = Number(int) * 100 + Number(frac.padEnd(2, "0"));
  if (cents > MAX_MONEY) {
    ctx.addIssue({ code: "custom", message: "must be at most 1000000000", input: v });
    return z.NEVER;
  }
  return cents;
});

/** A whole number in [min, max]; numeric strings accepted. */
export function int(min: number, max: number, what = `must be a whole number from ${min} to ${max}`) {
  return numberInput(what).transform((v, ctx) => {
    const s = decimalText(v);
    const n = s === undefined ? Number.NaN : Number(s);
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: "custom", message: what, input: v });
      return z.NEVER;
    }
    return n;
  });
}

/** A finite number >= 0 (weights); numeric strings accepted. */
export const nonNegative = numberInput("must be a number of at least 0").transform((v, ctx) => {
  const s = decimalText(v);
  const n = s === undefined ? Number.NaN : Number(s);
  if (!Number.isFinite(n) || n < 0 || n > 1e9) {
    ctx.addIssue({ code: "custom", message: "must be a number from 0 to 1000000000", input: v });
    return z.NEVER;
  }
  return n;
});

/** Identifiers: positive integers, or numeric strings of them (docs/api.md, "Conventions"). */
export const id = int(1, Number.MAX_SAFE_INTEGER, "must be a positive whole number (an id)");

/** Flags: 1/0, "1"/"0", true/false, returned as 1 or 0. */
export const flag = z
  .union([z.boolean(), z.number(), z.string()], { error: required("must be 1, 0, true or false") })
  .transform((v, ctx) => {
    const s = typeof v === "string" ? v.trim() : v;
    if (s === true || s === 1 || s === "1") return 1 as const;
    if (s === false || s === 0 || s === "0") return 0 as const;
    ctx.addIssue({ code: "custom", message: "must be 1, 0, true or false", input: v });
    return z.NEVER;
  });

/** A string of at most `max` characters without control characters other than tab and newline. */
export function str(max = 255) {
  return checked(z.string({ error: required("must be a string") }), max);
}

/** `s` limited to `max` characters without control characters or unpaired surrogates. */
export function checked(s: z.ZodString, max: number) {
  return s.max(max, { error: `must be at most ${max} characters` }).superRefine((s, ctx) => {
    // Nearly every value is plain printable text: one test passes it, the two below word a refusal.
    if (PLAIN.test(s)) return;
    if (CONTROL.test(s)) ctx.addIssue({ code: "custom", message: "must not contain control characters", input: s });
    if (LONE_SURROGATE.test(s)) {
      ctx.addIssue({ code: "custom", message: "must be valid Unicode text (no unpaired surrogates)", input: s });
    }
  });
}

/**
 * A SKU: an identifier, so surrounding spaces are removed (a SKU pasted from a spreadsheet with a
 * trailing space still finds its product) while case matters. Used where SKUs are written and
 * where they are looked up, so both sides see the same text.
 */
export const sku = z.preprocess(
  (v) => digitsOf(v),
  checked(z.string({ error: required("must be a string") }).trim(), 255),
);

/**
 * Identifiers that spreadsheet tools send as numbers (an EAN as 7350012345678): a whole number
 * of at least 0 is read as its digits; text is kept as sent, leading zeros included
 * (docs/api.md, "Conventions").
 */
function digitsOf(v: unknown): unknown {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? String(v) : v;
}

/** A GTIN, supplier SKU or other identifier: text, or a whole number read as its digits. */
export function identifier(max = 255) {
  return z.preprocess((v) => digitsOf(v), str(max));
}

export const country = z
  .string({ error: required("must be a two-letter country code") })
  .trim()
  .regex(/^[A-Za-z]{2}$/, { error: "must be a two-letter country code" })
  .transform((s) => s.toUpperCase());

export const currency = z
  .string({ error: required("must be a three-letter currency code") })
  .trim()
  .regex(/^[A-Za-z]{3}$/, { error: "must be a three-letter currency code" })
  .transform((s) => s.toUpperCase());

/** A JSON object (not an array) of at most 16 KiB serialised, stored as given (docs/products.md, "Products"). */
// z.custom, not z.record: a record is rebuilt key by key, and assigning a "__proto__" key would
// set the prototype instead of keeping the data. The parsed JSON object is stored as given.
export const metadata = z
  .custom<Record<string, unknown>>((v) => v !== null && typeof v === "object" && !Array.isArray(v), {
    error: "must be a JSON object",
  })
  // Bytes, not UTF-16 units: 16 KiB of "é" would otherwise pass at twice the size.
  .refine((o) => new TextEncoder().encode(JSON.stringify(o)).byteLength <= 16_384, {
    error: "must be at most 16 KiB serialised",
  });

/** Blank strings count as absent (docs/api.md, "Conventions"); absent stays absent. */
const blankToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

export function opt<T extends z.ZodType>(schema: T) {
  return z.preprocess(blankToUndefined, schema.optional());
}

/** Optional, and `null` clears the stored value (docs/products.md, "Updating products"). */
export function clearable<T extends z.ZodType>(schema: T) {
  return z.preprocess(blankToUndefined, schema.nullable().optional());
}

export function req<T extends z.ZodType>(schema: T) {
  return z.preprocess(blankToUndefined, schema);
}

/** `["products", 0, "qty"]` -> `products[0].qty` (docs/api.md, "Conventions": errors name their JSON path). */
export function formatPath(path: readonly PropertyKey[], prefix = ""): string {
  let out = prefix;
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out;
}

export function issuesToErrors(issues: readonly z.core.$ZodIssue[], prefix = ""): string[] {
  return issues.map((i) => {
    const path = formatPath(i.path, prefix);
    return path ? `${path}: ${i.message}` : i.message;
  });
}

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
};
const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;

const STRUCTURAL = new Set(["object", "array", "record", "union"]);

// Schemas are module constants and never change: their structural core is found once each
// (a sync of 2,048 variants asks for it about 40,000 times).
const structuralCache = new WeakMap<z.ZodType, z.ZodType | null>();

/** The object, array, record or union schema under optional/nullable/preprocess wrappers, if any. */
function structural(schema: z.ZodType): z.ZodType | undefined {
  let found = structuralCache.get(schema);
  if (found === undefined) {
    found = findStructural(schema) ?? null;
    structuralCache.set(schema, found);
  }
  return found ?? undefined;
}

function findStructural(schema: z.ZodType): z.ZodType | undefined {
  let s: z.ZodType | undefined = schema;
  for (let i = 0; s && i < 10; i++) {
    const d = defOf(s);
    if (STRUCTURAL.has(d.type)) return s;
    if (d.type === "pipe") s = defOf(d.in as z.ZodType).type === "transform" ? d.out : d.in;
    else s = d.innerType;
  }
  return undefined;
}

/**
 * What the unknown-field walk needs of a schema, found once per schema (they are module constants):
 * an object's fields, each with its own walk or null when it has no fields of its own, so a sync
 * of 2,048 entries (about 10,000 scalar fields) costs one map lookup a field.
 */
type Walk =
  | { type: "object"; fields: Map<string, Walk> }
  | { type: "record" | "array"; inner: Walk }
  | { type: "union"; array: Walk | null; object: Walk | null };
const walks = new WeakMap<z.ZodType, Walk | null>();

function walkOf(schema: z.ZodType): Walk | null {
  let w = walks.get(schema);
  if (w === undefined) {
    // Set before the children are found, so a schema that contains itself ends the recursion.
    walks.set(schema, null);
    w = findWalk(schema);
    walks.set(schema, w);
  }
  return w;
}

function findWalk(schema: z.ZodType): Walk | null {
  const s = structural(schema);
  if (!s) return null;
  const d = defOf(s);
  if (d.type === "union") {
    // The first option of the value's kind (images: an array or an object keyed by position).
    const kinds = (d.options ?? []).map((o) => [o, structural(o) && defOf(structural(o) as z.ZodType).type] as const);
    const first = (ok: (t: string | undefined) => boolean) => {
      const o = kinds.find(([, t]) => ok(t));
      return o ? walkOf(o[0]) : null;
    };
    return {
      type: "union",
      array: first((t) => t === "array"),
      object: first((t) => t === "object" || t === "record"),
    };
  }
  if (d.type === "record" && d.valueType) return { type: "record", inner: walkOf(d.valueType) ?? NONE };
  // Elements of scalar schemas have no fields to find: no walk, no path per element.
  if (d.type === "array" && d.element)
    return structural(d.element) ? { type: "array", inner: walkOf(d.element) ?? NONE } : null;
  if (d.type === "object" && d.shape) {
    const fields = new Map<string, Walk>();
    const shape = d.shape;
    return {
      type: "object",
      get fields() {
        // Filled on first use: a field's walk may be its own schema's (found above as null meanwhile).
        if (fields.size === 0) for (const k of Object.keys(shape)) fields.set(k, walkOf(shape[k]) ?? NONE);
        return fields;
      },
    };
  }
  return null;
}
/** A known field, or the elements of a record or array, with no fields of their own (never walked). */
const NONE: Walk = { type: "object", fields: new Map() };

/**
 * Fields the schema does not know, as docs/api.md, "Conventions"'s notices ("ignored unknown field x.y").
 * Free-form objects (records such as metadata) are not walked: all their keys are data.
 */
export function unknownFields(schema: z.ZodType, value: unknown, prefix = "", out: string[] = []): string[] {
  const w = walkOf(schema);
  if (w) walk(w, value, prefix, out);
  return out;
}

function walk(w: Walk, value: unknown, prefix: string, out: string[]) {
  if (value === null || typeof value !== "object" || w === NONE) return;
  const array = Array.isArray(value);
  if (w.type === "union") {
    const match = array ? w.array : w.object;
    if (match) walk(match, value, prefix, out);
  } else if (w.type === "record") {
    if (!array) for (const [key, v] of Object.entries(value)) walk(w.inner, v, `${prefix}.${key}`, out);
  } else if (w.type === "array") {
    if (array) for (let i = 0; i < value.length; i++) walk(w.inner, value[i], `${prefix}[${i}]`, out);
  } else if (w.type === "object" && !array) {
    // Paths are built only where they are used: a notice, or a field with fields of its own.
    const fields = w.fields;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const field = fields.get(key);
      if (field === undefined) out.push(`ignored unknown field ${prefix ? `${prefix}.${key}` : key}`);
      else if (field !== NONE) {
        const v = (value as Record<string, unknown>)[key];
        if (v !== null && typeof v === "object") walk(field, v, prefix ? `${prefix}.${key}` : key, out);
      }
    }
  }
}

// zod 4's compiled validators: z.compile() generates a parser for a schema with `new Function`.
// Workers allow code generation only while the module is evaluated (startup), never during a
// request, and zod turns its own JIT off whenever the user agent says Cloudflare, so without this
// every request validates on zod's interpreter (about 3 times slower for a sync of 2,048
// variants). The compiled parser answers valid input only; on invalid input it hands over to the
// runtime parser, so errors are the runtime's, word for word.
const compiled = new WeakMap<z.ZodType, z.ZodType>();

/**
 * Compiles `schema` for parseItem and zv, and returns it unchanged. Call at module scope only:
 * during a request code generation is refused and the schema simply stays on the runtime parser.
 */
export function precompile<S extends z.ZodType>(schema: S): S {
  if (!compiled.has(schema)) {
    const fast = z.compile(schema);
    // compile() hands the schema itself back when it cannot generate code for it (or may not).
    if (fast !== schema) compiled.set(schema, fast);
  }
  return schema;
}

/** Whether precompile succeeded for `schema` (tests and the bench check it did in workerd). */
export const isCompiled = (schema: z.ZodType) => compiled.has(schema);

/** Synchronous safeParse on the compiled parser when there is one. */
export function safeParse<S extends z.ZodType>(schema: S, value: unknown) {
  return ((compiled.get(schema) as S | undefined) ?? schema).safeParse(value) as z.ZodSafeParseResult<z.output<S>>;
}

export type Parsed<T> = { ok: true; data: T; notices: string[] } | { ok: false; errors: string[]; notices: string[] };

/**
 * Validates one item of a request. Notices are final text, so their paths carry `noticePrefix`;
 * errors carry paths relative to the item, for the caller to place like its services' errors.
 */
export function parseItem<S extends z.ZodType>(schema: S, value: unknown, noticePrefix = ""): Parsed<z.output<S>> {
  const notices = unknownFields(schema, value, noticePrefix);
  const r = safeParse(schema, value);
  if (r.success) return { ok: true, data: r.data, notices };
  return { ok: false, errors: issuesToErrors(r.error.issues), notices };
}
