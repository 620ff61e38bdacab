import { z } from "zod";
import { answer, error, json, pathId, query, schema } from "../openapi/build";
import { MAX_COUNTRIES, MAX_METHODS, methodCreate, methodUpdate } from "./schema";

// The shipping-method routes of the OpenAPI document; the answer schema is zod, so
// test/shipping.test.ts parses real answers with it and the document cannot drift from the code.

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

const idParam = pathId();
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
      parameters: [{ ...query("country", { type: "string", pattern: "^[A-Za-z]{2}$" }), required: false }],
      responses: {
        "200": answer("The methods, oldest first.", methodList),
        "400": error("country is not a two-letter code."),
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
        "201": answer("Created.", methodWritten),
        ...BODY_ERRORS,
        "409": error(`Already ${MAX_METHODS} methods.`),
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
        "200": answer("The method as it is now.", methodWritten),
        ...BODY_ERRORS,
        "404": error("No such method."),
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
      },
    },
  },
};
