import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { requestId } from "hono/request-id";
import { customersRoute } from "./customers/route";
import type { AppEnv } from "./env";
import { auth, noStore, preflight, requestLog } from "./keys/auth";
import { keysRoute } from "./keys/route";
import { metadataRoute } from "./metadata/route";
import { DOCS_CSP, DOCS_HTML } from "./openapi/docs";
import { openApiDocument } from "./openapi/document";
import { ordersRoute } from "./orders/route";
import { d1Session } from "./platform/d1";
import { ApiError, envelope } from "./platform/errors";
import { health, isSchemaMissing, SCHEMA_NOT_APPLIED } from "./platform/health";
import { IdempotencyConflict } from "./platform/idempotency";
import { SERVICE } from "./platform/service";
import { productsRoute } from "./products/route";
import { writesMoveCatalog } from "./products/version";
import { sessionsRoute } from "./sessions/route";
import { shippingRoute } from "./shipping/route";
import { webhooksRoute } from "./webhooks/route";

// strict: false: every route answers with or without a trailing slash, as real clients build URLs
// (docs/api.md, "Conventions").
export const app = new Hono<AppEnv>({ strict: false });

// Echoes a well-formed incoming X-Request-Id (hono checks length and characters), else a new one.
app.use(requestId());
app.use(requestLog);

app.get("/", (c) => c.json(SERVICE));
app.get("/health", health);
app.get("/openapi.json", (c) => c.json(openApiDocument()));
app.get("/docs", (c) => c.html(DOCS_HTML, 200, { "Content-Security-Policy": DOCS_CSP }));

app.use("/v1/*", preflight, noStore, auth, d1Session, writesMoveCatalog);
app.route("/v1/products", productsRoute);
app.route("/v1/orders", ordersRoute);
app.route("/v1/customers", customersRoute);
app.route("/v1/shipping-methods", shippingRoute);
app.route("/v1/webhooks", webhooksRoute);
app.route("/v1/metadata", metadataRoute);
app.route("/v1/keys", keysRoute);
app.route("/v1/sessions", sessionsRoute);

app.notFound((c) => c.json(envelope(404, `no route ${c.req.method} ${c.req.path}`), 404));

app.onError((err, c) => {
  // Answered by the idempotency middleware with the winner's stored answer.
  if (err instanceof IdempotencyConflict) return c.json(envelope(409, "idempotency key in use"), 409);
  if (err instanceof ApiError) {
    return c.json(envelope(err.status, err.message, err.errors), err.status, err.headers);
  }
  // An HTTPException's own response keeps its headers and gains the request's id.
  if (err instanceof HTTPException) {
    if (!err.res) return c.json(envelope(err.status, err.message || "request refused"), err.status);
    const res = new Response(err.res.body, err.res);
    res.headers.set("X-Request-Id", c.var.requestId);
    return res;
  }
  // Never internals in an answer. The log names the request and the root cause only: Drizzle's
  // wrapper message holds the query's parameters, which are body content.
  const cause = rootCause(err);
  const db = err.message.startsWith("Failed query") || /D1_|SQLITE|Network connection lost/i.test(cause.message);
  console.error(
    JSON.stringify({
      level: "error",
      requestId: c.var.requestId,
      error: cause.message,
      stack: db ? undefined : cause.stack,
    }),
  );
  // A missing table is a deployment without its migrations: retrying cannot help, so no 503.
  if (isSchemaMissing(cause.message)) return c.json(envelope(500, SCHEMA_NOT_APPLIED), 500);
  if (db) {
    return c.json(envelope(503, "the database is unavailable, retry shortly"), 503, { "Retry-After": "1" });
  }
  return c.json(envelope(500, "internal error"), 500);
});

function rootCause(err: Error): Error {
  let e = err;
  for (let i = 0; i < 5 && e.cause instanceof Error; i++) e = e.cause;
  return e;
}
