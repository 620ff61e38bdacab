import { z } from "zod";

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
  if (d.type === "record" && d.valueType) return { type: "record", inner: walkOf(d.valueType) ?? LEAF };
  // Elements of scalar schemas have no fields to find: no walk, no path per element.
  if (d.type === "array" && d.element)
    return structural(d.element) ? { type: "array", inner: walkOf(d.element) ?? LEAF } : null;
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
/** A record's or array's elements when they have no fields (never walked). */
const LEAF: Walk = { type: "object", fields: new Map() };
/** A known field with no fields of its own. */
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
  if (value === null || typeof value !== "object" || w === NONE || w === LEAF) return;
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
