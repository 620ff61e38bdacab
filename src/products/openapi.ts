// The OpenAPI operations of this folder's routes that src/openapi/document.ts does not describe
// itself, spread into its "/v1/products" path item (docs/products.md, "Deleting products").

import { z } from "zod";
import { answer, error, type Json, ref, schema } from "../openapi/build";
import { productDelete } from "./schema";

/** An item of the body: a component of the document (src/openapi/document.ts), from its validator. */
export const productDeleteItem = productDelete.meta({
  description: "A product, named by its id or by its own SKU (trimmed; a variant's SKU is refused).",
});
const item = ref("ProductDelete");

const messages = z.array(z.string());
const result = schema(
  z.object({
    success: z.int().min(0).meta({ description: "How many products were deleted." }),
    errors: messages.meta({ description: "Why items failed; each names its JSON path, `[i].` first for arrays." }),
    notices: messages.meta({ description: "Ignored unknown fields." }),
  }),
  "input",
);

const deleted = (description: string, example?: Json) => answer(description, result, example);

/** `delete` of "/v1/products". */
export const productsDeletePath: Json = {
  delete: {
    operationId: "deleteProducts",
    tags: ["products"],
    summary: "Delete products",
    description:
      "One object or an array of up to 100, each naming a product by product_id or its own sku. The " +
      "products go with their variants, atomically; their SKUs become free; past orders keep their " +
      "lines. Each item fails on its own; one product.delete event per deleted product. An optional " +
      "Idempotency-Key header makes a retry safe.",
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: { oneOf: [item, { type: "array", items: item, minItems: 1, maxItems: 100 }] },
          example: [{ product_id: 12 }, { sku: "MUG" }],
        },
      },
    },
    responses: {
      "200": deleted("At least one product was deleted.", { success: 2, errors: [], notices: [] }),
      "400": deleted("No product was deleted; the first failed item was invalid (no selector, a variant's SKU)."),
      "404": deleted("No product was deleted; the first failed item named no product."),
      "413": error("Body larger than 1 MiB, or more than 100 items."),
      "415": error("Content-Type is not application/json."),
    },
  },
};

/** If-Match on PUT /v1/products (docs/stock.md). */
export const ifMatchParameter: Json = {
  name: "If-Match",
  in: "header",
  required: false,
  description:
    "The ETag of GET /v1/products/{product_id} (the product's own version, which moves with every " +
    "change of the product or its variants, sales included). The PUT, of one product only, applies " +
    "only if the product still has it; else 412 with the product as it is now. `*` matches any " +
    "existing product; weak tags never match. With several items: 400.",
  schema: { type: "string" },
  example: '"5d0f3ac2e91b7460"',
};

/** The ETag header of one product's answers. */
export const productETagHeader: Json = {
  description: "The product's own ETag: send it as If-Match with a change, or If-None-Match with a read.",
  schema: { type: "string" },
};

/** The Prefer header of PUT and POST /v1/products (docs/products.md, "Updating products"). */
export const preferParameter: Json = {
  name: "Prefer",
  in: "header",
  required: false,
  description:
    "RFC 7240. `return=minimal`: each product in the answer is only {product_id, sku, updated_at, " +
    "variants: [{variant_id, sku}]}, answered with `Preference-Applied: return=minimal`. Both forms " +
    "carry `Vary: Prefer`.",
  schema: { type: "string" },
  example: "return=minimal",
};
