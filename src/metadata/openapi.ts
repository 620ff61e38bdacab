// The metadata reads in the OpenAPI document (src/openapi/document.ts spreads them into its paths).

const error = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});
const AUTH = { "401": error("Missing or wrong credentials."), "500": error("No API key is configured.") };
const idParam = { name: "id", in: "path", required: true, schema: { type: "integer", minimum: 1 } };
const flat = {
  type: "object",
  additionalProperties: { type: "string" },
  description: "The stored metadata, each value a string: strings as they are, other values as their JSON text.",
};

const read = (what: "product" | "order") => ({
  get: {
    operationId: `get${what === "product" ? "Product" : "Order"}Metadata`,
    tags: [`${what}s`],
    summary: `The metadata of one ${what} (modelled dialect)`,
    parameters: [idParam],
    responses: {
      "200": {
        description: `The ${what}'s metadata as a flat object of strings; {} when it has none.`,
        content: { "application/json": { schema: flat, example: { channel: "web", "gift-wrap": "true" } } },
      },
      "400": error("The id is not an id."),
      "404": error(`No such ${what}.`),
      ...AUTH,
    },
  },
});

export const metadataPaths = {
  "/v1/metadata/product/{id}": read("product"),
  "/v1/metadata/order/{id}": read("order"),
};
