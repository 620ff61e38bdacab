import type { z } from "zod";
import { customersPaths } from "../customers/openapi";
import { KEY_SECURITY_SCHEMES, keysPaths } from "../keys/openapi";
import { metadataPaths } from "../metadata/openapi";
import { orderUpdateOperation } from "../orders/openapi";
import { orderCreate } from "../orders/schema";
import { STORE_URL_UNSET } from "../platform/health";
import { SERVICE } from "../platform/service";
import {
  ifMatchParameter,
  preferParameter,
  productDeleteItem,
  productETagHeader,
  productsDeletePath,
} from "../products/openapi";
import { productCreate, productUpdate } from "../products/schema";
import { sessionsPaths } from "../sessions/openapi";
import { shippingPaths } from "../shipping/openapi";
import { webhooksPaths } from "../webhooks/openapi";
import { answer, error, json, namedSchemas, pathId, ref } from "./build";
import { completeDocument } from "./complete";
import { EXAMPLES } from "./examples";
import { modelledComponents, modelledPaths } from "./modelled";
import {
  errorEnvelope,
  health,
  orderOut,
  orderResults,
  productOut,
  productWriteResult,
  serviceInfo,
  variantOut,
} from "./responses";

// The OpenAPI 3.1 document of the service, generated from the zod schemas that validate requests
// (src/products/schema.ts, src/orders/schema.ts) and from the response schemas that test/openapi.test.ts checks
// real answers against (src/openapi/responses.ts). Served at GET /openapi.json and rendered by
// GET /docs. Built once per isolate.

const COMPONENTS: [string, z.ZodType][] = [
  ["ProductCreate", productCreate],
  ["ProductUpdate", productUpdate],
  ["ProductDelete", productDeleteItem],
  ["OrderCreate", orderCreate],
  ["Product", productOut],
  ["Variant", variantOut],
  ["ProductWriteResult", productWriteResult],
  ["OrderResults", orderResults],
  ["Order", orderOut],
  ["Error", errorEnvelope],
  ["ServiceInfo", serviceInfo],
  ["Health", health],
  ...modelledComponents,
];

const BODY_ERRORS = {
  "400": error("Malformed JSON, wrong top-level shape, or nested deeper than 32 levels.", EXAMPLES.error),
  "413": error("Body larger than 1 MiB, or more than 100 items."),
  "415": error("Content-Type is not application/json."),
};

/** A list body of 1 to 100 items; oneOrMany also takes one item alone. */
const listOf = (item: string) => ({ type: "array", items: ref(item), minItems: 1, maxItems: 100 });
const oneOrMany = (item: string) => ({ oneOf: [ref(item), listOf(item)] });
export function buildOpenApi() {
  const productWrite = (status: string) => ({
    "200": answer("At least one product took effect.", ref("ProductWriteResult"), EXAMPLES.productWriteResult),
    [status]: answer(
      "No product took effect: the status of the first failed item, same body.",
      ref("ProductWriteResult"),
    ),
  });
  return {
    openapi: "3.1.0",
    info: {
      title: "edge-store",
      version: SERVICE.version,
      summary: "Order and product API of an online store (modelled on Quickbutik v1).",
      description:
        "Bodies are JSON. Lenient scalars: numbers may be sent as numeric strings, flags as 1/0, " +
        '"1"/"0" or true/false; a string of only spaces counts as absent. Unknown fields are ignored ' +
        "and reported as notices. Money is given with at most 2 decimals. Every response carries X-Request-Id.",
    },
    tags: [
      { name: "service", description: "Unauthenticated service endpoints." },
      { name: "products", description: "Products and their variants." },
      { name: "orders", description: "Orders." },
      { name: "customers", description: "The customers orders made, with their totals (docs/customers.md)." },
      {
        name: "shipping",
        description: "The store's shipping methods, which storefront orders name (docs/orders.md).",
      },
      { name: "webhooks", description: "Webhook endpoints and their deliveries." },
      { name: "keys", description: "Secret and publishable API keys (docs/keys.md)." },
      { name: "sessions", description: "Sign-in and sign-out of the admin at /admin (docs/admin.md)." },
    ],
    security: [{ basicAuth: [] }],
    paths: {
      "/": {
        get: {
          operationId: "getService",
          tags: ["service"],
          summary: "Service name and version",
          security: [],
          responses: { "200": answer("Name and version.", ref("ServiceInfo"), SERVICE) },
        },
      },
      "/health": {
        get: {
          operationId: "getHealth",
          tags: ["service"],
          summary: "Health: the database answers and has the latest migration",
          security: [],
          responses: {
            "200": answer(
              "The database answers and its schema is at this version's latest migration; `warnings` name configuration that leaves something out.",
              ref("Health"),
              {
                status: "ok",
                warnings: [STORE_URL_UNSET],
              },
            ),
            "503": error("The database does not answer, or its migrations are not applied (named).", {
              code: 503,
              error: "database schema is not applied: run the migrations",
            }),
          },
        },
      },
      "/v1/products": {
        post: {
          operationId: "createProducts",
          tags: ["products"],
          summary: "Create products",
          description:
            "One product object or an array of up to 100. Variants are given in variants.add. Each item " +
            "is created on its own; success counts the created ones.",
          parameters: [preferParameter],
          requestBody: { required: true, content: json(oneOrMany("ProductCreate"), EXAMPLES.productCreate) },
          responses: { ...productWrite("400"), "409": error("Duplicate SKU."), ...BODY_ERRORS },
        },
        put: {
          operationId: "updateProducts",
          tags: ["products"],
          summary: "Update a product and its variants",
          description:
            "Selects the product by variant_id, else product_id, else sku; only the fields present change " +
            "and null clears an optional one. Variant changes: variants.sync (the full list), variants.add " +
            "(new ones), variants.update (by variant_id), applied in that order in one atomic step.",
          parameters: [preferParameter, ifMatchParameter],
          requestBody: { required: true, content: json(oneOrMany("ProductUpdate"), EXAMPLES.productUpdate) },
          responses: {
            ...productWrite("400"),
            "404": answer("The product or variant was not found.", ref("ProductWriteResult")),
            "409": answer(
              "Conflict: duplicate SKU or option combination, a stored count other than expected_qty (the error says it), or an adjust that would take stock below 0 under disable_minusqty.",
              ref("ProductWriteResult"),
            ),
            "412": {
              ...answer(
                "If-Match named another version of the product: nothing was written; products holds the product as it is now.",
                ref("ProductWriteResult"),
              ),
              headers: { ETag: productETagHeader },
            },
            ...BODY_ERRORS,
          },
        },
        ...modelledPaths["/v1/products"],
        ...productsDeletePath,
      },
      "/v1/products/count": modelledPaths["/v1/products/count"],
      "/v1/products/{product_id}": {
        get: {
          operationId: "getProduct",
          tags: ["products"],
          summary: "Get a product with its variants",
          parameters: [pathId("product_id")],
          responses: {
            "200": { ...answer("The product.", ref("Product")), headers: { ETag: productETagHeader } },
            "304": { description: "If-None-Match named the product's current ETag: no body." },
            "400": error("The id is not an id."),
            "404": error("No such product."),
          },
        },
      },
      "/v1/orders": {
        put: orderUpdateOperation(),
        post: {
          operationId: "createOrders",
          tags: ["orders"],
          summary: "Create orders",
          description:
            'An array of 1 to 100 orders, each with order_id "create". Each is created atomically on its ' +
            "own, reserving stock; a new order is always unpaid. An optional Idempotency-Key header makes a retry safe. " +
            "With a publishable key the store prices the order: a line's price, discount_add or shipping.price is 400; " +
            "it is in the store's currency and records no payment (a payment.currency other than DEFAULT_CURRENCY, " +
            "or any payment.method, transaction_id or log, is 400); one order per request (400), at most " +
            "STOREFRONT_MAX_LINE_QTY (50) units of an item, and the unpaid storefront orders of one client address " +
            "hold at most STOREFRONT_MAX_HELD_UNITS (200) units (429 with Retry-After); " +
            "shipping names one of GET /v1/shipping-methods by id; hidden products and variants do not exist; no " +
            "customer is linked; each result carries the order's token, and the order is cancelled after " +
            "STOREFRONT_HOLD_MINUTES (60) unless paid.",
          requestBody: { required: true, content: json(listOf("OrderCreate"), EXAMPLES.orderCreate) },
          responses: {
            "200": answer("At least one order was created.", ref("OrderResults"), EXAMPLES.orderResults),
            "400": answer("No order was created (or the body was malformed).", ref("OrderResults")),
            "413": error("Body larger than 1 MiB, or more than 100 orders."),
            "415": error("Content-Type is not application/json."),
            "422": error("The Idempotency-Key was used with a different body."),
          },
        },
        ...modelledPaths["/v1/orders"],
      },
      "/v1/orders/{order_id}": {
        get: {
          operationId: "getOrder",
          tags: ["orders"],
          summary: "Get an order",
          description:
            "A publishable key reads only an order it created, with ?token= from its creation's answer, for " +
            "ORDER_TOKEN_DAYS (30); its customer then has no customer_id.",
          parameters: [
            pathId("order_id"),
            {
              name: "token",
              in: "query",
              required: false,
              description: "A publishable key's only: the token its POST /v1/orders answered for this order.",
              schema: { type: "string" },
            },
          ],
          responses: {
            "200": answer("The order.", ref("Order")),
            "400": error("The id is not an id."),
            "404": error("No such order."),
          },
        },
      },
      ...customersPaths,
      ...shippingPaths,
      ...webhooksPaths,
      ...keysPaths,
      ...sessionsPaths,
      ...metadataPaths,
    },
    components: {
      schemas: namedSchemas(COMPONENTS),
      securitySchemes: KEY_SECURITY_SCHEMES,
    },
  };
}

export type OpenApiDocument = ReturnType<typeof buildOpenApi>;

let cached: OpenApiDocument | undefined;
/**
 * The document, built on first use and kept for the life of the isolate. completeDocument adds
 * what every operation shares (security, headers, 401/429/500/503, Idempotency-Key), to spread-in paths too.
 */
export const openApiDocument = () => {
  cached ??= completeDocument(buildOpenApi());
  return cached;
};
