import { z } from "zod";
import { MAX_COUNTRIES, MAX_METHODS, methodCreate, methodUpdate } from "./schema";

// The shipping-method routes of the OpenAPI document (src/openapi/document.ts spreads
// `shippingPaths` into its paths). The answer schema is zod, so test/shipping.test.ts parses real
// answers with it and the document cannot drift from the code.

type Json = Record<string, unknown>;

export const methodOut = z.object({
  id: z.number().int().positive(),
  name: z.string(),
  price: z.number().meta({ description: "What an order naming the method pays for shipping." }),
  free_over: z
    .number()
    .nullable()
    .meta({ description: "Orders whose lines come to at least this ship free; null: never free." }),
  countries: z.array(z.string()).meta({ description: "Two-letter codes of the countries it ships to; []: anywhere." }),
  visible: z.boolean().meta({ description: "false: storefronts neither see nor pick it." }),
  created_at: z.string(),
  updated_at: z.string(),
});
export const methodList = z.object({ shipping_methods: z.array(methodOut) });
const methodWritten = methodOut.extend({ notices: z.array(z.string()) });

const schema = (s: z.ZodType, io: "input" | "output" = "output"): Json => {
  const { $schema: _s, ...rest } = z.toJSONSchema(s, { io, unrepresentable: "any" }) as Json;
  return rest;
};
const json = (s: Json, example?: unknown) => ({
  "application/json": example === undefined ? { schema: s } : { schema: s, example },
});
const error = (description: string) => ({ description, content: json({ $ref: "#/components/schemas/Error" }) });
const AUTH = { "401": error("Missing or wrong credentials."), "500": error("No API key is configured.") };
const idParam = { name: "id", in: "path", required: true, schema: { type: "integer", minimum: 1 } };
const BODY_ERRORS = {
  "400": error("Invalid body; errors name the field (name, price, free_over, countries, visible)."),
  "413": error("Body larger than 1 MiB."),
  "415": error("Content-Type is not application/json."),
};

export const shippingPaths = {
  "/v1/shipping-methods": {
    get: {
      operationId: "listShippingMethods",
      tags: ["shipping"],
      summary: "List the store's shipping methods",
      description:
        "Secret keys see every method; a publishable key only the visible ones, which are what its orders " +
        "may name (shipping.id). ?country=SE keeps the methods that ship there.",
      parameters: [
        { name: "country", in: "query", required: false, schema: { type: "string", pattern: "^[A-Za-z]{2}$" } },
      ],
      responses: {
        "200": { description: "The methods, oldest first.", content: json(schema(methodList)) },
        "400": error("country is not a two-letter code."),
        ...AUTH,
      },
    },
    post: {
      operationId: "createShippingMethod",
      tags: ["shipping"],
      summary: "Create a shipping method",
      description: `At most ${MAX_METHODS} methods, each shipping to at most ${MAX_COUNTRIES} countries.`,
      requestBody: {
        required: true,
        content: json(schema(methodCreate, "input"), {
          name: "Postnord",
          price: 49,
          free_over: 500,
          countries: ["SE"],
        }),
      },
      responses: {
        "201": { description: "Created.", content: json(schema(methodWritten)) },
        ...BODY_ERRORS,
        "409": error(`Already ${MAX_METHODS} methods.`),
        ...AUTH,
      },
    },
  },
  "/v1/shipping-methods/{id}": {
    patch: {
      operationId: "updateShippingMethod",
      tags: ["shipping"],
      summary: "Change a shipping method",
      description:
        "The fields given change, the others stay; free_over null removes free shipping. Past orders keep what they were charged.",
      parameters: [idParam],
      requestBody: { required: true, content: json(schema(methodUpdate, "input"), { price: 59 }) },
      responses: {
        "200": { description: "The method as it is now.", content: json(schema(methodWritten)) },
        ...BODY_ERRORS,
        "404": error("No such method."),
        ...AUTH,
      },
    },
    delete: {
      operationId: "deleteShippingMethod",
      tags: ["shipping"],
      summary: "Delete a shipping method",
      description: "Past orders keep its id, name and price.",
      parameters: [idParam],
      responses: {
        "204": { description: "Deleted." },
        "400": error("The id is not an id."),
        "404": error("No such method."),
        ...AUTH,
      },
    },
  },
};
