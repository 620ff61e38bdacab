import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { z } from "zod";
import {
  arrange,
  type Encoding,
  type Kind,
  MODELLED_LINE_LAYOUT,
  MODELLED_ORDER_LAYOUT,
  type ModelledSlot,
  modelledSlots,
} from "../orders/fields";
import { ORDER_LIMIT_DEFAULT, ORDER_LIMIT_MAX } from "../orders/list";
import {
  type Field,
  MODELLED_BASE,
  MODELLED_DETAILS,
  MODELLED_VARIANT,
  type ModelledProductSpecial,
  type ModelledVariantSpecial,
  productColumn,
  productField,
  variantColumn,
  variantField,
} from "../products/fields";
import { amount2, digits, flagText as flag, MODELLED, signedDigits, textOut as text } from "../products/kinds";
import { PRODUCT_LIMIT_DEFAULT, PRODUCT_LIMIT_MAX } from "../products/list";
import { answer, error, type Json, json, ref } from "./build";
import { LINE_PLAIN, ORDER_PLAIN, orderedShape, treeObject } from "./responses";

// The modelled-dialect reads in the OpenAPI document (docs/modelled-reads.md, "Modelled reads"): response schemas
// (test/openapi.test.ts parses real answers with them) and the path objects of GET /v1/products,
// GET /v1/products/count and GET /v1/orders, which src/openapi/document.ts spreads in.

const date = z
  .string()
  .regex(/^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)?$/)
  .meta({ description: '"YYYY-MM-DD HH:MM:SS" in UTC; "" when there is none.' });

/** A described field's schema in the modelled dialect (src/products/kinds.ts MODELLED). */
function modelledSchema(f: Field | undefined, c: (f: Field) => SQLiteColumn) {
  return f?.modelled ? MODELLED[f.modelled].schema(!c(f).notNull) : undefined;
}
const productSchema = (k: string) => modelledSchema(productField(k), productColumn);

export const modelledVariant = z.object(
  orderedShape<ModelledVariantSpecial>(MODELLED_VARIANT, (k) => modelledSchema(variantField(k), variantColumn), {
    id: digits,
    product_id: digits,
    image_id: text,
    hidden: flag.meta({ description: '"1" when the variant is not visible.' }),
    preorder: flag,
    preselected: flag,
    min_purchase_quantity: text,
    max_purchase_quantity: text,
    disable_minusqty: z.boolean().meta({ description: "A JSON boolean here, unlike the product's flag." }),
    values: z.array(z.object({ name: z.string(), val: z.string() })),
  }),
);

const productBase = orderedShape<ModelledProductSpecial>(MODELLED_BASE, productSchema, {
  id: digits,
  hasVariants: flag,
  qty: signedDigits.meta({ description: "Stock (for a product with variants, the sum of theirs)." }),
  stock: z.number().int().meta({ description: "The same stock as a JSON number." }),
  date_modified: date,
  url: text.meta({ description: 'The product page: STORE_URL + "/" + slug; "" without STORE_URL.' }),
  headcategory_name: text.meta({ description: 'The head category of the first path; "" when none.' }),
  categories: z
    .array(z.array(z.object({ category: z.string() })))
    .meta({ description: 'Category paths, head category first: [[{"category": "Clothes"}, {"category": "Shirts"}]].' }),
});

export const modelledProduct = z
  .object(productBase)
  .meta({ description: "A product in a modelled-dialect list (without include_details)." });

export const modelledProductDetails = z
  .object({
    ...productBase,
    ...orderedShape<never>(MODELLED_DETAILS, productSchema, {}),
    variants: z.array(modelledVariant),
    product_package_products: z.array(z.never()).meta({ description: "Bundles do not exist here: always []." }),
  })
  .meta({ description: "A product with include_details=true." });

const anyProduct = z.union([modelledProductDetails, modelledProduct]);
// Bare, as the modelled API's clients in the wild read them (its C# SDK, a product spider), not
// wrapped in {"product": ...} as its documentation's examples show.
export const modelledProductList = z
  .array(anyProduct)
  .meta({ description: "A page of products, id ascending, or a search result: a bare array." });
export const modelledProductLookup = anyProduct.meta({
  description: "The product of product_id or sku: a bare object.",
});
export const productCount = z.object({ count: digits }).meta({ description: "The number of products, as a string." });

const address = z.object({
  company_name: text,
  full_name: text,
  address: text,
  address2: text,
  city: text,
  zipcode: text,
  country: text,
});

/** The modelled schema of each encoding of a field (src/orders/fields.ts), "number" by its kind. */
const ENCODING: Record<Exclude<Encoding, "number">, z.ZodType> = {
  digits,
  text,
  amount: amount2,
  date,
};

/** The schema of a modelled order or line from its description's slots, the special entries given. */
function modelled(
  fields: { column: { notNull: boolean }; kind: Kind; modelled?: readonly ModelledSlot[] }[],
  layout: readonly string[],
  details: boolean,
  special: Record<string, z.ZodType>,
) {
  const entries = new Map<string, z.ZodType>();
  for (const { field, slot } of modelledSlots(fields, details)) {
    const { notNull } = field.column;
    // A missing number is "" as text: no longer digits only.
    const enc = slot.enc === "digits" && !notNull ? "text" : slot.enc;
    const schema = enc === "number" ? (notNull ? z.number().int() : z.number().int().nullable()) : ENCODING[enc];
    entries.set(slot.at, slot.doc ? schema.meta({ description: slot.doc }) : schema);
  }
  for (const [at, schema] of Object.entries(special)) if (details || !DETAILS_ONLY.has(at)) entries.set(at, schema);
  return treeObject(arrange(layout, entries));
}

export const modelledOrderLine = modelled(LINE_PLAIN, MODELLED_LINE_LAYOUT, true, {
  id: z.number().int(),
  variant: text.meta({ description: 'The variant\'s option values, " / " between them.' }),
});

const statusCodes = z
  .enum(["-1", "1", "2", "3"])
  .meta({ description: '"-1" unpaid, "1" paid, "2" done, "3" cancelled.' });
// The special entries of a modelled order (src/orders/modelled-json.ts); only the first three
// are in a list without details.
const ORDER_SPECIAL = {
  status: statusCodes,
  status_name: z.enum(["unpaid", "paid", "done", "cancelled"]),
  products: z.array(modelledOrderLine),
  status_date: date,
  tax_amount: amount2,
  is_taxfree: z.boolean(),
  is_taxontop: z.boolean(),
  ...Object.fromEntries(Object.entries(address.shape).map(([k, v]) => [`customer.${k}`, v])),
  "customer.shipping_details": address,
  "customer.billing_details": address,
};
const DETAILS_ONLY = new Set(Object.keys(ORDER_SPECIAL).slice(3));

export const modelledOrder = modelled(ORDER_PLAIN, MODELLED_ORDER_LAYOUT, false, ORDER_SPECIAL).meta({
  description: "An order in a modelled-dialect list (without include_details).",
});

export const modelledOrderDetails = modelled(ORDER_PLAIN, MODELLED_ORDER_LAYOUT, true, ORDER_SPECIAL).meta({
  description: "An order with include_details=true, and every answer to order_id.",
});

export const modelledOrderList = z
  .array(z.union([modelledOrderDetails, modelledOrder]))
  .meta({ description: "Orders: a bare array, also for order_id (one element)." });

/** Components for src/openapi/document.ts. */
export const modelledComponents: [string, z.ZodType][] = [
  ["ModelledProduct", modelledProduct],
  ["ModelledProductDetails", modelledProductDetails],
  ["ModelledVariant", modelledVariant],
  ["ModelledProductList", modelledProductList],
  ["ModelledProductLookup", modelledProductLookup],
  ["ProductCount", productCount],
  ["ModelledOrder", modelledOrder],
  ["ModelledOrderDetails", modelledOrderDetails],
  ["ModelledOrderLine", modelledOrderLine],
  ["ModelledOrderList", modelledOrderList],
];

const q = (name: string, description: string, schema: Json) => ({ name, in: "query", description, schema });
const bool = { type: "string", enum: ["true", "false"] };
const isoTime = { type: "string", maxLength: 40, examples: ["2026-11-26", "2026-11-26T00:00:00+01:00"] };
const unixSeconds = { type: "string", pattern: "^\\d+$" };

const paging = (max: number, def: number) => [
  q(
    "limit",
    `Page size, 1 to ${max}. A page holds exactly limit items unless it is the last, whatever its size: ` +
      "past about 2 MiB of products or 1 MiB of orders it is streamed (Transfer-Encoding: chunked, no Content-Length).",
    { type: "integer", minimum: 1, maximum: max, default: def },
  ),
  q("offset", "Rows to skip. The next page's Link continues by offset.", { type: "integer", minimum: 0, default: 0 }),
  q("cursor", "Our extension: the cursor of a Link header. Not with offset.", { type: "string" }),
  q("apps_load", "Accepted and ignored.", { type: "string" }),
];

const REFUSED =
  "A query parameter the operation does not define (unknown query parameter: x), given twice, or with a bad value; errors name it.";

export const modelledPaths = {
  "/v1/products": {
    get: {
      operationId: "listProducts",
      tags: ["products"],
      summary: "List, search or look up products (modelled dialect)",
      description:
        "Ids, prices, quantities and flags are strings. A list or a search: a bare array [...], id ascending; " +
        "with product_id or sku: a bare object {...} (404 when none).",
      parameters: [
        q("product_id", "One product by id.", { type: "string", pattern: "^\\d+$" }),
        q("sku", "One product by its own or a variant's SKU (trimmed; not empty).", { type: "string" }),
        q("search", "Text in the title, SKU, GTIN or a variant's SKU; the answer is a bare array.", {
          type: "string",
        }),
        q(
          "category",
          'Products in a category: a name matches at any level of a path; names joined with ">" ("Clothes>Shirts") match that path and its sub-categories.',
          { type: "string" },
        ),
        q("include_details", "Adds variants, images and texts.", bool),
        ...paging(PRODUCT_LIMIT_MAX, PRODUCT_LIMIT_DEFAULT),
      ],
      responses: {
        "200": answer("The page, the product, or the search result.", {
          oneOf: [ref("ModelledProductList"), ref("ModelledProductLookup")],
        }),
        "400": error(REFUSED),
        "404": error("product_id or sku matched no product."),
      },
    },
  },
  "/v1/products/count": {
    get: {
      operationId: "countProducts",
      tags: ["products"],
      summary: "Count products (modelled dialect)",
      responses: {
        "200": answer("The count, as a string.", ref("ProductCount")),
        "400": error("Any query parameter."),
      },
    },
  },
  "/v1/orders": {
    get: {
      operationId: "listOrders",
      tags: ["orders"],
      summary: "List, filter or look up orders (modelled dialect)",
      description:
        'A bare array. Ids, money and status are strings ("-1" unpaid, "1" paid, "2" done, "3" cancelled); ' +
        "lines' id and qty are numbers. order_id answers the detail fields always; 404 when there is no such order.",
      parameters: [
        q("order_id", "One order by id.", { type: "string", pattern: "^\\d+$" }),
        q("search", "Customer name, e-mail, order id, or the SKU of a line (any part, any case).", { type: "string" }),
        q("status", "unpaid, paid, done, cancelled, or -1, 1, 2, 3.", { type: "string" }),
        q("from_date_paid", "Paid at or after (UNIX seconds).", unixSeconds),
        q("to_date_paid", "Paid at or before (UNIX seconds).", unixSeconds),
        q("from_status_date", "Status changed at or after (UNIX seconds).", unixSeconds),
        q("order_by", "Sort key.", { type: "string", enum: ["order_id", "date", "price"], default: "order_id" }),
        q("sort_order", "Sort direction.", { type: "string", enum: ["asc", "desc"], default: "desc" }),
        q("include_details", "Adds amounts, customer, payment and shipping.", bool),
        // Ours (docs/orders.md, "Finding orders").
        q("created_from", "Ours: created at or after: an ISO 8601 date (UTC day) or a time with its offset.", isoTime),
        q("created_to", "Ours: created at or before (a date includes its whole UTC day).", isoTime),
        q("paid", "Ours: true: orders paid at some time (date_paid set); false: never paid.", bool),
        q("count", "Ours: true: the X-Total-Count header counts every order the filters match.", bool),
        ...paging(ORDER_LIMIT_MAX, ORDER_LIMIT_DEFAULT),
      ],
      responses: {
        "200": {
          description: "The orders.",
          headers: {
            "X-Total-Count": {
              description: "With count=true: how many orders the filters match, on every page.",
              schema: { type: "integer", minimum: 0 },
            },
          },
          content: json(ref("ModelledOrderList")),
        },
        "400": error(REFUSED),
        "404": error("order_id matched no order."),
      },
    },
  },
};
