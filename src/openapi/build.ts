import { z } from "zod";
import { orderCreate } from "../orders/schema";
import { flag, id, metadata, money } from "../platform/fields";
import { categoryName, categoryPaths } from "../products/categories";
import { image } from "../products/schema";

// The pieces every path module of the document shares. completeDocument (./complete.ts) adds the
// 401, 429, 500 and 503 answers of every /v1 operation, so a module states only its own.

export type Json = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: the document is walked as untyped JSON; test/openapi.test.ts checks its shape
export type AnyJson = Record<string, any>;

/** The lenient scalars of docs/api.md, "Conventions" say in the document what they accept. */
function describeLenient(ctx: { zodSchema: unknown; jsonSchema: Json }) {
  const s = ctx.zodSchema as z.ZodType;
  const j = ctx.jsonSchema;
  // format: date-time says what zod's long date-time regex spells out.
  if (j.format === "date-time") delete j.pattern;
  if (s === money) {
    j.description = 'Money: a number or numeric string with at most 2 decimals, 0 to 1000000000 (199.5, "199.50").';
  } else if (s === id) {
    j.description = "An id: a positive whole number, or a numeric string of one.";
  } else if (s === flag) {
    j.description = 'A flag: 1/0, "1"/"0" or true/false.';
  } else if (s === metadata) {
    j.type = "object";
    j.description = "A free-form JSON object, at most 16 KiB serialised, stored as given.";
  } else if (s === categoryName) {
    // Preprocessed: the JSON Schema of its output would show only the string form.
    for (const k of Object.keys(j)) delete j[k];
    j.anyOf = [
      { type: "string", maxLength: 255 },
      { type: "object", properties: { category: { type: "string", maxLength: 255 } }, required: ["category"] },
    ];
    j.description = 'A category name (without ">"), or the modelled API\'s {"category": name}.';
  } else if (s === orderCreate.shape.order_id) {
    // Validated by a refinement, which JSON Schema cannot express: say what it accepts.
    j.const = "create";
    j.description = 'Always "create" on POST.';
  } else if (s === categoryPaths) {
    j.description =
      'Category paths, head category first: [["Clothes", "Shirts"], ["Sale"]]; at most 20 paths of 1 to 5 levels (docs/products.md, "Categories, URLs and images").';
  } else if (s === image) {
    const object = { ...j };
    for (const k of Object.keys(j)) delete j[k];
    j.anyOf = [{ type: "string", format: "uri", description: "An https URL." }, object];
    j.description = "An https URL, {url, alttext}, or the modelled API's {image, alttext}.";
  }
}

const OPTIONS = { unrepresentable: "any", override: describeLenient } as const;

/** A zod schema as JSON Schema: the one description of a body or an answer, never restated. */
export const schema = (s: z.ZodType, io: "input" | "output" = "output"): Json => {
  const { $schema: _s, ...rest } = z.toJSONSchema(s, { ...OPTIONS, io }) as Json;
  return rest;
};

/** Named zod schemas as JSON Schemas, with $refs between them under #/components/schemas. */
export function namedSchemas(named: [string, z.ZodType][]): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [name, s] of named) registry.add(s, { id: name });
  const { schemas } = z.toJSONSchema(registry, { ...OPTIONS, io: "input", uri: (name) => ref(name).$ref });
  const out: Record<string, Json> = {};
  for (const [name, s] of Object.entries(schemas)) {
    const { $schema: _s, $id: _i, ...rest } = s as Json;
    out[name] = rest;
  }
  return out;
}
/** A time as every answer writes it. */
export const utcTime = z.string().meta({ description: "ISO 8601 time in UTC." });
/** A component of the document by name: #/components/schemas/{name}. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (s: Json | z.ZodType, example?: unknown) => {
  const body = s instanceof z.ZodType ? schema(s) : s;
  return { "application/json": example === undefined ? { schema: body } : { schema: body, example } };
};
/** A response: its description and, when it has one, its body. */
export const answer = (description: string, body?: Json | z.ZodType, example?: unknown) =>
  body === undefined ? { description } : { description, content: json(body, example) };
export const error = (description: string, example?: unknown) => answer(description, ref("Error"), example);
export const pathId = (name = "id", s: Json = { type: "integer", minimum: 1 }) => ({
  name,
  in: "path",
  required: true,
  schema: s,
});
export const query = (name: string, s: Json, description?: string) =>
  description === undefined
    ? { name, in: "query", schema: s }
    : { name, in: "query", required: false, schema: s, description };
