import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { completeDocument } from "../src/openapi/complete";
import { EXAMPLES } from "../src/openapi/examples";
import { modelledOrderList, modelledProductList, modelledProductLookup, productCount } from "../src/openapi/modelled";
import { errorEnvelope, orderOut, orderResults, productOut, productWriteResult } from "../src/openapi/responses";
import { orderCreate } from "../src/orders/schema";
import { productCreate, productUpdate } from "../src/products/schema";
import { get, post, uid } from "./helpers";

type Json = Record<string, any>;

const OPERATIONS = [
  "get /v1/customers",
  "get /v1/customers/{customer_id}",
  "post /v1/keys",
  "get /v1/keys",
  "delete /v1/keys/{id}",
  "post /v1/sessions",
  "get /v1/sessions",
  "delete /v1/sessions",
  "get /v1/sessions/current",
  "delete /v1/sessions/current",
  "delete /v1/sessions/{id}",
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
  "get /v1/shipping-methods",
  "post /v1/shipping-methods",
  "patch /v1/shipping-methods/{id}",
  "delete /v1/shipping-methods/{id}",
  "post /v1/webhooks",
  "get /v1/webhooks",
  "delete /v1/webhooks/{id}",
  "get /v1/webhooks/{id}/deliveries",
  "post /v1/webhooks/{id}/test",
  "get /v1/webhooks/{id}/events/{event_id}",
  "post /v1/webhooks/{id}/events/{event_id}/resend",
  "get /v1/metadata/product/{id}",
  "get /v1/metadata/order/{id}",
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
          expect(typeof deref(doc, res).description).toBe("string");
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
    // Unauthenticated routes say so; each /v1 operation names its scope (docs/keys.md).
    expect(doc.paths["/health"].get.security).toEqual([]);
    expect(doc.paths["/health"].get.responses["503"]).toBeDefined();
    expect(doc.paths["/v1/products"].post.security).toEqual([
      { basicAuth: ["products:write"] },
      { bearerAuth: ["products:write"] },
      { sessionCookie: ["products:write"] },
    ]);
  });

  it("links every operation to its topic page of the manual, served from the static assets", async () => {
    const doc = (await get("/openapi.json")).json;
    const pages = new Map<string, string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item)) {
        const url: string | undefined = op.externalDocs?.url;
        expect(url, `${method} ${path} has no topic page`).toMatch(/^\/guide\/[\w-]+\.html(#[\w-]+)?$/);
        const [page, anchor] = (url as string).split("#");
        if (!pages.has(page)) {
          const res = await env.ASSETS.fetch(new Request(`http://assets${page}`));
          expect(res.status, page).toBe(200);
          pages.set(page, await res.text());
        }
        if (anchor) expect(pages.get(page), `${url}`).toContain(`id="${anchor}"`);
      }
    }
    // The manual's pages link the reference back.
    expect(pages.get("/guide/orders.html")).toContain('href="/docs"');
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

/** Every operation of the document as [method, path, op]. */
const operations = (doc: Json) =>
  Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => [method, path, op] as [string, string, Json]),
  );
const deref = (doc: Json, node: Json) => (node.$ref ? (resolve(doc, node.$ref) as Json) : node);
const paramNames = (doc: Json, op: Json) => (op.parameters ?? []).map((p: Json) => deref(doc, p).name);

/** Every schema object under `node` that says nothing about its type, with where it is. */
function untyped(node: unknown, at: string, out: string[] = [], isSchema = false): string[] {
  if (Array.isArray(node)) {
    for (const [i, n] of node.entries()) untyped(n, `${at}/${i}`, out, isSchema);
    return out;
  }
  if (!node || typeof node !== "object") return out;
  const j = node as Json;
  if (isSchema && !["type", "$ref", "anyOf", "oneOf", "allOf", "const", "enum", "not"].some((k) => k in j))
    out.push(at);
  for (const [k, v] of Object.entries(j)) {
    if (k === "example" || k === "examples") continue;
    if (k === "properties")
      for (const [name, p] of Object.entries(v as Json)) untyped(p, `${at}/properties/${name}`, out, true);
    else
      untyped(v, `${at}/${k}`, out, ["schema", "items", "additionalProperties", "anyOf", "oneOf", "allOf"].includes(k));
  }
  return out;
}

describe("the document is complete and typed", () => {
  it("has no zod safe-integer placeholder bounds anywhere", async () => {
    const text = (await get("/openapi.json")).text;
    expect(text).not.toContain("9007199254740991");
  });

  it("has no untyped schema", async () => {
    const doc = (await get("/openapi.json")).json;
    expect(untyped(doc.paths, "#/paths")).toEqual([]);
    expect(untyped(doc.components.schemas, "#/components/schemas", [], false)).toEqual([]);
    for (const [name, s] of Object.entries(doc.components.schemas as Record<string, Json>)) {
      expect(untyped(s, name, [], true), name).toEqual([]);
    }
    expect(doc.components.schemas.OrderCreate.properties.order_id).toMatchObject({ const: "create" });
  });

  it("has only short, valid patterns", async () => {
    const doc = (await get("/openapi.json")).text;
    const patterns = [...doc.matchAll(/"pattern":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]) as string);
    expect(patterns.length).toBeGreaterThan(3);
    for (const p of patterns) {
      expect(() => new RegExp(p, "u")).not.toThrow();
      expect(p.length, p).toBeLessThanOrEqual(60);
    }
  });

  it("gives every /v1 operation its 401, 429, 500 and 503, with Retry-After on 429 and 503", async () => {
    const doc = (await get("/openapi.json")).json;
    const v1 = operations(doc).filter(([, path]) => path.startsWith("/v1/"));
    expect(v1.length).toBeGreaterThanOrEqual(6);
    for (const [method, path, op] of v1) {
      for (const status of ["401", "429", "500", "503"]) {
        const res = op.responses[status];
        expect(res, `${method} ${path} ${status}`).toBeDefined();
        const headers = deref(doc, res).headers ?? {};
        if (status === "429" || status === "503")
          expect(Object.keys(headers), `${method} ${path} ${status}`).toContain("Retry-After");
        if (status === "401") expect(Object.keys(headers)).toContain("WWW-Authenticate");
      }
    }
  });

  it("gives every answer X-Request-Id, every /v1 answer x-d1-bookmark, and lists Link", async () => {
    const doc = (await get("/openapi.json")).json;
    for (const [method, path, op] of operations(doc)) {
      expect(paramNames(doc, op), `${method} ${path}`).toContain("X-Request-Id");
      for (const [status, res] of Object.entries(op.responses as Record<string, Json>)) {
        const headers = Object.keys(deref(doc, res).headers ?? {});
        expect(headers, `${method} ${path} ${status}`).toContain("X-Request-Id");
        if (path.startsWith("/v1/") && status.startsWith("2")) expect(headers).toContain("x-d1-bookmark");
      }
      if (path.startsWith("/v1/")) expect(paramNames(doc, op)).toContain("x-d1-bookmark");
    }
    for (const path of ["/v1/products", "/v1/orders"]) {
      expect(Object.keys(doc.paths[path].get.responses["200"].headers)).toContain("Link");
    }
  });

  it("documents Idempotency-Key on every /v1 write, product routes included", async () => {
    const doc = (await get("/openapi.json")).json;
    const writes = operations(doc).filter(
      ([m, path, op]) =>
        path.startsWith("/v1/") && ["post", "put", "patch", "delete"].includes(m) && op["x-idempotency"] !== false,
    );
    for (const [method, path, op] of writes) {
      expect(
        paramNames(doc, op).filter((n: string) => n === "Idempotency-Key"),
        `${method} ${path}`,
      ).toHaveLength(1);
    }
    expect(paramNames(doc, doc.paths["/v1/products"].post)).toContain("Idempotency-Key");
    expect(paramNames(doc, doc.paths["/v1/products"].put)).toContain("Idempotency-Key");
    // A key's answer holds the key itself, which must never be stored for a replay (docs/keys.md).
    expect(paramNames(doc, doc.paths["/v1/keys"].post)).not.toContain("Idempotency-Key");
  });

  it("completes routes added by any module: a path spread in later gets the same", () => {
    const doc = completeDocument({
      paths: {
        "/v1/widgets": {
          post: { responses: { "200": { description: "ok", content: { "application/json": { schema: {} } } } } },
          get: {
            parameters: [{ name: "cursor", in: "query", schema: { type: "integer", maximum: 9007199254740991 } }],
            responses: { "200": { description: "a page" } },
          },
        },
      },
      components: { schemas: {} },
    }) as Json;
    const post = doc.paths["/v1/widgets"].post;
    expect(Object.keys(post.responses).sort()).toEqual(["200", "401", "429", "500", "503"]);
    expect(post.parameters.map((p: Json) => p.$ref)).toEqual([
      "#/components/parameters/RequestId",
      "#/components/parameters/Bookmark",
      "#/components/parameters/IdempotencyKey",
    ]);
    expect(Object.keys(post.responses["200"].headers)).toEqual(["X-Request-Id", "x-d1-bookmark"]);
    expect(post.responses["200"].content["application/json"].schema.type).toContain("object");
    const list = doc.paths["/v1/widgets"].get;
    expect(Object.keys(list.responses["200"].headers)).toContain("Link");
    expect(JSON.stringify(doc)).not.toContain("9007199254740991");
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
      conforms(modelledProductList, found);
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
  it("is Scalar's API reference from this origin's static assets, pointed at /openapi.json", async () => {
    const r = await get("/docs", { headers: { authorization: "" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect(r.headers.get("x-request-id")).toBeTruthy();
    const csp = r.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("connect-src 'self'");
    expect(r.text).toContain('<script src="/scalar/standalone.js"></script>');
    expect(r.text).toContain('data-url="/openapi.json"');
    // No script of its own inline, nothing from another origin.
    expect(r.text).not.toMatch(/https?:\/\//);
    expect(r.text.match(/<script[^>]*>([^<]*)<\/script>/g)?.every((t) => /<script[^>]*><\/script>/.test(t))).toBe(true);
    const config = JSON.parse(
      (/data-configuration="([^"]*)"/.exec(r.text)?.[1] ?? "").replace(/&quot;/g, '"').replace(/&amp;/g, "&"),
    );
    expect(config).toMatchObject({ withDefaultFonts: false, authentication: { preferredSecurityScheme: "basicAuth" } });
  });
});

describe("the document says how to change stock safely (docs/stock.md)", () => {
  it("documents adjust, expected_qty, If-Match, its 412 and the product's ETag", async () => {
    const doc = (await get("/openapi.json")).json;
    const update = doc.components.schemas.ProductUpdate;
    for (const field of ["adjust", "expected_qty", "expected_stock"]) {
      expect(update.properties[field]?.description, field).toMatch(/\w/);
    }
    const entry = update.properties.variants.properties.update.items;
    expect(Object.keys(deref(doc, entry).properties)).toEqual(expect.arrayContaining(["adjust", "expected_qty"]));
    const put = doc.paths["/v1/products"].put;
    expect(put.parameters.map((p: Json) => p.name)).toContain("If-Match");
    expect(put.responses["412"].headers.ETag).toBeDefined();
    expect(deref(doc, put.responses["412"]).content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/ProductWriteResult",
    });
    expect(doc.paths["/v1/products/{product_id}"].get.responses["200"].headers.ETag).toBeDefined();
  });
});
