// The metadata reads in the OpenAPI document (src/openapi/document.ts spreads them into its paths).

import { answer, error, pathId } from "../openapi/build";

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
    parameters: [pathId()],
    responses: {
      "200": answer(`The ${what}'s metadata as a flat object of strings; {} when it has none.`, flat, {
        channel: "web",
        "gift-wrap": "true",
      }),
      "400": error("The id is not an id."),
      "404": error(`No such ${what}.`),
    },
  },
});

export const metadataPaths = {
  "/v1/metadata/product/{id}": read("product"),
  "/v1/metadata/order/{id}": read("order"),
};
