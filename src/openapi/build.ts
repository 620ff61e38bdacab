import { z } from "zod";

// The pieces every path module of the document shares. completeDocument (./complete.ts) adds the
// 401, 429, 500 and 503 answers of every /v1 operation, so a module states only its own.

export type Json = Record<string, unknown>;

/** A zod schema as JSON Schema: the one description of a body or an answer, never restated. */
export const schema = (s: z.ZodType, io: "input" | "output" = "output"): Json => {
  const { $schema: _s, ...rest } = z.toJSONSchema(s, {
    io,
    unrepresentable: "any",
    // format: date-time says what zod's long date-time regex spells out.
    override: ({ jsonSchema: j }) => {
      if (j.format === "date-time") delete j.pattern;
    },
  }) as Json;
  return rest;
};
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
