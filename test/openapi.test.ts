import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { EXAMPLES } from "../src/openapi/document";
import {
  modelledOrderList,
  modelledProductList,
  modelledProductLookup,
  modelledProductSearch,
  productCount,
} from "../src/openapi/modelled";
import { errorEnvelope, orderOut, orderResults, productOut, productWriteResult } from "../src/openapi/responses";
import { orderCreate } from "../src/orders/schema";
import { productCreate, productUpdate } from "../src/products/schema";
import { get, post, uid } from "./helpers";

type Json = Record<string, any>;

const OPERATIONS = [
  "get /",
  "get /health",
  "post /v1/products",
  "get /v1/products",
  "put /v1/products",
  "delete /v1/products",
  "get /v1/products/{product_id}",
  "get /v1/products/count",
  "post /v1/orders",
  "put /v1/orders",
  "get /v1/orders",
  "get /v1/orders/{order_id}",
  "post /v1/webhooks",
  "get /v1/webhooks",
  "delete /v1/webhooks/{id}",
  "get /v1/webhooks/{id}/deliveries",
];
const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** Every {"$ref": ...} in the document, with where it is. */
function refs(node: unknown, at = "#", out: [string, string][] = []): [string, string][] {
  if (Array.isArray(node)) {
    for (const [i, n] of node.entries()) refs(n, `${at}/${i}`, out);
  } else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string") out.push([at, v]);
      else refs(v, `${at}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`, out);
    }
  }
  return out;
}

function resolve(doc: Json, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  let node: any = doc;
  for (const seg of ref.slice(2).split("/")) {
    const key = decodeURIComponent(seg).replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/** Parses with the documented schema and fails on fields the schema does not document. */
function conforms(schema: z.ZodType, value: unknown) {
  const r = schema.safeParse(value);
  expect(r.success ? [] : r.error.issues).toEqual([]);
  // zod objects drop unknown keys: a difference means the app answers with an undocumented field.
  expect(r.data).toEqual(value);
}

describe("GET /openapi.json", () => {
  it("is served without credentials, as OpenAPI 3.1 with the required fields", async () => {
    const r = await get("/openapi.json", { headers: { authorization: "" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    const doc = r.json;
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof doc.info.title).toBe("string");
    expect(typeof doc.info.version).toBe("string");
    expect(doc.components.securitySchemes.basicAuth).toMatchObject({ type: "http", scheme: "basic" });
    expect(doc.security).toEqual([{ basicAuth: [] }]);
  });

  it("lists every route, each operation with responses and a unique operationId", async () => {
    const doc = (await get("/openapi.json")).json;
    const ops: string[] = [];
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      expect(path.startsWith("/")).toBe(true);
      for (const [method, op] of Object.entries(item)) {
        expect(HTTP_METHODS).toContain(method);
        ops.push(`${method} ${path}`);
        expect(Object.keys(op.responses).length).toBeGreaterThan(0);
        expect(Object.keys(op.responses).some((s) => s.startsWith("2"))).toBe(true);
        for (const [status, res] of Object.entries(op.responses as Record<string, Json>)) {
          expect(status).toMatch(/^[1-5]\d\d$/);
          expect(typeof res.description).toBe("string");
        }
        expect(ids.has(op.operationId)).toBe(false);
        ids.add(op.operationId);
        // Path templates and path parameters agree.
        const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
        const declared = (op.parameters ?? []).filter((p: Json) => p.in === "path").map((p: Json) => p.name);
        expect(declared.sort()).toEqual(templated);
      }
    }
    expect(ops.sort()).toEqual([...OPERATIONS].sort());
    // Unauthenticated routes say so; the others inherit the Basic requirement.
    expect(doc.paths["/health"].get.security).toEqual([]);
    expect(doc.paths["/v1/products"].post.security).toBeUndefined();
  });

  it("has every $ref resolving inside the document", async () => {
    const doc = (await get("/openapi.json")).json;
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(10);
    for (const [at, ref] of all) expect(resolve(doc, ref), `${at} -> ${ref}`).toBeDefined();
    // No JSON Schema dialect leftovers that would confuse OpenAPI tools.
    expect(JSON.stringify(doc)).not.toMatch(/"\$(schema|id|defs)"/);
  });

  it("documents the request bodies with the schemas that validate them", async () => {
    const doc = (await get("/openapi.json")).json;
    const s = doc.components.schemas;
    expect(s.ProductCreate.required).toEqual(["title", "price"]);
    expect(s.ProductCreate.properties.price.type).toEqual(["number", "string"]);
    expect(s.ProductUpdate.properties.variants.properties.update.items.required).toContain("variant_id");
    expect(doc.paths["/v1/orders"].post.requestBody.content["application/json"].schema.items).toEqual({
      $ref: "#/components/schemas/OrderCreate",
    });
  });

  it("gives example request bodies that the request schemas accept", () => {
    expect(productCreate.safeParse(EXAMPLES.productCreate).success).toBe(true);
    expect(productUpdate.safeParse(EXAMPLES.productUpdate).success).toBe(true);
    for (const order of EXAMPLES.orderCreate) expect(orderCreate.safeParse(order).success).toBe(true);
    conforms(orderResults, EXAMPLES.orderResults);
    conforms(errorEnvelope, EXAMPLES.error);
    conforms(errorEnvelope, EXAMPLES.unauthorized);
  });
});

describe("real answers match their documented response schemas", () => {
  it("product create, get, list, lookup by SKU", async () => {
    const sku = uid("DOC");
    const created = await post("/v1/products", {
      ...EXAMPLES.productCreate,
      sku,
      metadata: { a: 1 },
      images: [{ url: "https://example.com/a.jpg", alttext: "A" }],
      variants: { add: [{ ...EXAMPLES.productCreate.variants.add[0], sku: `${sku}-V` }] },
    });
    expect(created.status).toBe(200);
    conforms(productWriteResult, created.json);
    const id = created.json.products[0].product_id;
    conforms(productOut, (await get(`/v1/products/${id}`)).json);
    for (const details of ["true", "false"]) {
      conforms(modelledProductList, (await get(`/v1/products?limit=2&include_details=${details}`)).json);
      conforms(modelledProductLookup, (await get(`/v1/products?sku=${sku}-V&include_details=${details}`)).json);
      conforms(modelledProductLookup, (await get(`/v1/products?product_id=${id}&include_details=${details}`)).json);
      const found = (await get(`/v1/products?search=${sku}&include_details=${details}`)).json;
      expect(found).toHaveLength(1);
      conforms(modelledProductSearch, found);
    }
    conforms(productCount, (await get("/v1/products/count")).json);
    const failed = await post("/v1/products", [{ title: "x" }]);
    expect(failed.status).toBe(400);
    conforms(productWriteResult, failed.json);
  });

  it("the error envelope: validation, not found, 401", async () => {
    const bad = await get("/v1/products?limit=0");
    expect(bad.status).toBe(400);
    conforms(errorEnvelope, bad.json);
    const missing = await get("/v1/products/999999999");
    expect(missing.status).toBe(404);
    conforms(errorEnvelope, missing.json);
    const unauthorized = await get("/v1/products", { headers: { authorization: "" } });
    expect(unauthorized.status).toBe(401);
    conforms(errorEnvelope, unauthorized.json);
  });

  it("orders: create, get, list", async () => {
    const sku = uid("DOCO");
    await post("/v1/products", { title: "Mug", price: 129, sku, stock: 10 });
    const created = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 2 }] }]);
    expect(created.status).toBe(200);
    conforms(orderResults, created.json);
    const orderId = created.json.results.create_1.order_id;
    conforms(orderOut, (await get(`/v1/orders/${orderId}`)).json);
    conforms(modelledOrderList, (await get("/v1/orders?limit=2")).json);
    conforms(modelledOrderList, (await get("/v1/orders?limit=2&include_details=true")).json);
    const one = (await get(`/v1/orders?order_id=${orderId}`)).json;
    expect(one).toHaveLength(1);
    conforms(modelledOrderList, one);
    const missing = await get("/v1/orders?order_id=999999999");
    expect(missing.status).toBe(404);
    conforms(errorEnvelope, missing.json);
    const unknown = await get("/v1/orders?orderid=1");
    expect(unknown.status).toBe(400);
    conforms(errorEnvelope, unknown.json);
  });
});

describe("GET /docs", () => {
  it("is a self-contained HTML page listing every operation", async () => {
    const r = await get("/docs", { headers: { authorization: "" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect(r.headers.get("content-security-policy")).toContain("default-src 'none'");
    for (const op of OPERATIONS) {
      const [method, path] = op.split(" ");
      expect(r.text).toContain(
        `<span class="method ${method}">${method.toUpperCase()}</span> <code class="path">${path}</code>`,
      );
    }
    // Nothing fetched from anywhere: no scripts, stylesheets, images, fonts or imports.
    expect(r.text).not.toMatch(/<script|<link|<img|<iframe|\ssrc=|@import|url\(/i);
  });
});
