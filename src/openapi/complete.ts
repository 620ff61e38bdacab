// What holds for every operation, added to the document after its paths are assembled, so that
// routes spread in from any module get it too (test/openapi.test.ts checks every operation):
// - every answer: X-Request-Id; every request may send one;
// - every /v1 operation: `security` and `x-scope` from the route table (src/keys/scopes.ts: the
//   scope a secret key needs, and the publishable key where a storefront may call it);
//   x-d1-bookmark on request and answer (docs/operations.md, "Read replicas"); the 401, 429, 500
//   and 503 answers, Retry-After on 429 and 503;
// - every /v1 write: Idempotency-Key (unless it declares `x-idempotency: false`);
// - every list that pages (a cursor or offset parameter): Link on its 200;
// - schemas: no zod safe-integer placeholder bounds, no untyped values, numeric strings plain decimals.

import { ROUTE_SCOPES } from "../keys/scopes";
import { type AnyJson as Json, json, ref } from "./build";
import { EXAMPLES } from "./examples";

const HTTP_METHODS = ["get", "put", "post", "delete", "patch", "options", "head", "trace"];
const WRITES = new Set(["post", "put", "patch", "delete"]);
const JSON_TYPES = ["string", "number", "boolean", "object", "array", "null"];

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const paramRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });
const errorBody = (example: unknown) => json(ref("Error"), example);

const NUMERIC_STRING = "^\\s*-?\\d+(\\.\\d+)?\\s*$";
const BOOKMARK_PATTERN = "^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$";

export const COMMON_COMPONENTS = {
  headers: {
    RequestId: {
      description:
        "The request's id: a well-formed X-Request-Id sent by the client, else a new one. Logged with the request.",
      schema: { type: "string", minLength: 1, maxLength: 255 },
    },
    Bookmark: {
      description:
        "The D1 session bookmark after this request. Send it back as x-d1-bookmark to read data at least this fresh.",
      schema: { type: "string", pattern: BOOKMARK_PATTERN },
    },
    RetryAfter: {
      description: "Seconds to wait before trying again.",
      schema: { type: "integer", minimum: 1, maximum: 3600 },
    },
    Link: {
      description: 'The next page\'s URL, when there is one: <https://...>; rel="next" (RFC 8288).',
      schema: { type: "string" },
    },
    WWWAuthenticate: {
      description:
        'Basic realm="store". Not sent when the request has X-Requested-With, the admin\'s session cookie, or is a sign-in: browsers would show a login dialog.',
      schema: { type: "string", const: 'Basic realm="store"' },
    },
  },
  parameters: {
    RequestId: {
      name: "X-Request-Id",
      in: "header",
      description: "Optional id of this request, echoed in the answer and the log when well-formed.",
      schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\w\\-=]+$" },
    },
    Bookmark: {
      name: "x-d1-bookmark",
      in: "header",
      description:
        "A bookmark from an earlier answer: this request reads data at least that fresh (read-after-write). " +
        "Anything not in D1's bookmark form is 400.",
      schema: { type: "string", pattern: BOOKMARK_PATTERN },
    },
    IdempotencyKey: {
      name: "Idempotency-Key",
      in: "header",
      description:
        "1 to 255 printable characters. A retry with the same key and body gets the first answer, without " +
        "applying the change twice; the same key with another body is 422. Keys are kept for 24 hours.",
      schema: { type: "string", minLength: 1, maxLength: 255 },
    },
  },
  responses: {
    Unauthorized: {
      description: "Missing or wrong credentials.",
      headers: { "WWW-Authenticate": headerRef("WWWAuthenticate"), "X-Request-Id": headerRef("RequestId") },
      content: errorBody(EXAMPLES.unauthorized),
    },
    TooManyRequests: {
      description:
        "Rate limited: too many failed authentications from this IP, or (when enabled) too many requests for this key.",
      headers: { "Retry-After": headerRef("RetryAfter"), "X-Request-Id": headerRef("RequestId") },
      content: errorBody({ code: 429, error: "too many failed authentications, retry later" }),
    },
    InternalError: {
      description:
        "No API key is configured (the service fails closed), the database schema is not applied " +
        "(run the migrations), or an unexpected failure (logged with the request id).",
      headers: { "X-Request-Id": headerRef("RequestId") },
      content: errorBody({ code: 500, error: "database schema is not applied: run the migrations" }),
    },
    Unavailable: {
      description: "The database is unavailable, or the data kept changing meanwhile; nothing was written. Retry.",
      headers: { "Retry-After": headerRef("RetryAfter"), "X-Request-Id": headerRef("RequestId") },
      content: errorBody({ code: 503, error: "the database is unavailable, retry shortly" }),
    },
  },
};

const V1_ERRORS: Record<string, Json> = {
  "401": responseRef("Unauthorized"),
  "429": responseRef("TooManyRequests"),
  "500": responseRef("InternalError"),
  "503": responseRef("Unavailable"),
};

const hasParam = (op: Json, name: string, ref: string) =>
  (op.parameters ?? []).some(
    (p: Json) => p.$ref === paramRef(ref).$ref || String(p.name).toLowerCase() === name.toLowerCase(),
  );

function addHeader(res: Json, name: string, header: Json) {
  if (res.$ref) return; // a shared response declares its own headers
  res.headers ??= {};
  res.headers[name] ??= header;
}

/**
 * Each operation's topic page of the manual (docs/*.md), served by the Worker's static assets as
 * HTML under /guide/ (src/scripts/guide.mjs): `METHOD path` first, then the path's first two
 * segments (every route of a resource). An operation that has none fails openapi.test.ts, so a
 * new resource ships with its page.
 */
const TOPICS: Record<string, string> = {
  "GET /v1/products": "modelled-reads.html#get-v1products",
  "GET /v1/products/count": "modelled-reads.html#get-v1products",
  "GET /v1/orders": "modelled-reads.html#get-v1orders",
  "POST /v1/products": "products.html",
  "PUT /v1/products": "products.html#updating-products-put-v1products",
  "DELETE /v1/products": "products.html#deleting-products-delete-v1products",
  "GET /v1/products/{product_id}": "products.html",
  "POST /v1/orders": "orders.html#creating-orders-post-v1orders",
  "PUT /v1/orders": "orders.html#changing-orders-put-v1orders",
  "GET /v1/orders/{order_id}": "orders.html#reading-orders",
  "/v1/metadata": "modelled-reads.html#metadata",
  "/v1/customers": "orders.html#customers",
  "/v1/shipping-methods": "storefront.html#shipping-methods",
  "/v1/keys": "keys.html",
  "/v1/sessions": "admin.html#sessions",
  "/v1/webhooks": "webhooks.html",
  "/": "api.html",
  "/health": "operations.html#health",
  "/openapi.json": "development.html#openapi-and-docs",
  "/docs": "development.html#openapi-and-docs",
};
const GUIDE_PATH = "/guide/";

function completeOperation(path: string, method: string, op: Json) {
  const v1 = path.startsWith("/v1/") || path === "/v1";
  const rule = v1 ? ROUTE_SCOPES[`${method.toUpperCase()} ${path.replace(/\{([a-z_]+)\}/g, ":$1")}`] : undefined;
  if (rule?.scope) {
    op["x-scope"] = rule.scope;
    op.security = [
      { basicAuth: [rule.scope] },
      { bearerAuth: [rule.scope] },
      { sessionCookie: [rule.scope] },
      ...(rule.publishable ? [{ publishableKey: [] }] : []),
    ];
  }
  const topic = TOPICS[`${method.toUpperCase()} ${path}`] ?? TOPICS[path.split("/").slice(0, 3).join("/")];
  if (topic && !op.externalDocs) {
    op.externalDocs = { description: "The topic page of the manual", url: `${GUIDE_PATH}${topic}` };
  }
  op.parameters ??= [];
  if (!hasParam(op, "X-Request-Id", "RequestId")) op.parameters.push(paramRef("RequestId"));
  if (v1) {
    if (!hasParam(op, "x-d1-bookmark", "Bookmark")) op.parameters.push(paramRef("Bookmark"));
    if (WRITES.has(method) && op["x-idempotency"] !== false && !hasParam(op, "Idempotency-Key", "IdempotencyKey")) {
      op.parameters.push(paramRef("IdempotencyKey"));
    }
    for (const [status, res] of Object.entries(V1_ERRORS)) {
      // An operation's own 500/503 text is kept, but it gains the shared answer's headers.
      if (!op.responses[status]) op.responses[status] = res;
    }
  }
  const paged = method === "get" && (hasParam(op, "cursor", "") || hasParam(op, "offset", ""));
  for (const [status, res] of Object.entries(op.responses as Record<string, Json>)) {
    addHeader(res, "X-Request-Id", headerRef("RequestId"));
    if (v1 && status !== "401" && status !== "429") addHeader(res, "x-d1-bookmark", headerRef("Bookmark"));
    if (status === "429" || status === "503") addHeader(res, "Retry-After", headerRef("RetryAfter"));
    if (status === "401") addHeader(res, "WWW-Authenticate", headerRef("WWWAuthenticate"));
    if (paged && status === "200") addHeader(res, "Link", headerRef("Link"));
  }
}

const isSchemaKey = (key: string) =>
  ["schema", "items", "additionalProperties", "not", "propertyNames", "contains"].includes(key);

/**
 * zod writes ±9007199254740991 (its safe-integer range) as the bounds of every .int() without its
 * own: noise that reads like a real limit. Untyped schemas ({} for "any JSON") get their types.
 */
function cleanSchemas(node: unknown, parentKey = ""): void {
  if (Array.isArray(node)) {
    for (const n of node) cleanSchemas(n, parentKey);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const j = node as Json;
  if (j.minimum === Number.MIN_SAFE_INTEGER) delete j.minimum;
  if (j.maximum === Number.MAX_SAFE_INTEGER) delete j.maximum;
  // Numbers that may come as numeric strings: the string form must be a plain decimal ("12",
  // " 12 ", "299.50"; not "1e3", "+5").
  if (Array.isArray(j.type) && j.type.join() === "number,string") {
    j.pattern = NUMERIC_STRING;
    j.description ??= "A number, or a numeric string of one.";
  }
  const typed = ["type", "$ref", "anyOf", "oneOf", "allOf", "const", "enum", "not"].some((k) => k in j);
  if (!typed && (isSchemaKey(parentKey) || parentKey === "property")) {
    j.type = JSON_TYPES;
    j.description ??= "Any JSON value.";
  }
  for (const [k, v] of Object.entries(j)) {
    if (k === "properties" && v && typeof v === "object") {
      for (const p of Object.values(v as Json)) cleanSchemas(p, "property");
    } else if (k === "example" || k === "examples") {
      // literal values, not schemas
    } else cleanSchemas(v, k === "anyOf" || k === "oneOf" || k === "allOf" ? "items" : k);
  }
}

/** Completes an assembled document in place (see the top of this file) and returns it. */
export function completeDocument<D extends { paths: object; components: object }>(doc: D): D {
  const components = doc.components as Json;
  for (const [kind, entries] of Object.entries(COMMON_COMPONENTS)) {
    components[kind] = { ...entries, ...components[kind] };
  }
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const method of HTTP_METHODS) if (item[method]) completeOperation(path, method, item[method]);
  }
  cleanSchemas(doc.paths);
  for (const s of Object.values(components.schemas ?? {})) cleanSchemas(s, "schema");
  return doc;
}
