import { PUBLISHABLE_SCOPES, SCOPES, type Scope } from "./scope-names";

/**
 * Everything a key can hold. A secret key may hold the publishable permissions too: they let it
 * mint publishable keys that have them (a key grants only what it holds; the bootstrap API_KEY
 * holds all).
 */
export const ALL_SCOPES: readonly string[] = [...SCOPES, ...PUBLISHABLE_SCOPES];

/**
 * What a publishable key may do on a route, when anything: read the public catalog, create unpaid
 * orders, or read one order it holds the token of.
 */
export type PublicUse = "catalog" | "order-create" | "order-token";

/** A resource an answer may carry whose own read scope it then needs too. */
export type Carried = "order" | "product";

/**
 * A route a scope opens; or one of the admin's session routes (docs/admin.md, "Sessions"):
 * "sign-in" is authenticated by the key in its body; "own" (a session's own read and sign-outs) by
 * any secret credential, whatever its scopes. `carries`: the scope an answer carrying an order
 * or a product needs besides the route's (its handler asks, `authorizeCarried`, once it knows
 * what it answers), so a route cannot hand out what the resource's own routes guard.
 */
export type RouteRule =
  | { scope: Scope; publishable?: PublicUse; session?: undefined; carries?: Record<Carried, Scope> }
  | { scope?: undefined; publishable?: undefined; session: "sign-in" | "own"; carries?: undefined };

/** What reading an order or a product needs wherever an answer carries one. */
const READS: Record<Carried, Scope> = { order: "orders:read", product: "products:read" };

/**
 * THE route -> scope table, keyed by method and route pattern as Hono registers them (the auth
 * middleware reads it for every request; test/keys.scopes.test.ts fails when a route of the app
 * is missing here, so no route ships without a scope).
 */
export const ROUTE_SCOPES: Record<string, RouteRule> = {
  "GET /v1/products": { scope: "products:read", publishable: "catalog" },
  "GET /v1/products/count": { scope: "products:read" },
  "GET /v1/products/:product_id": { scope: "products:read", publishable: "catalog" },
  "POST /v1/products": { scope: "products:write" },
  "PUT /v1/products": { scope: "products:write" },
  "DELETE /v1/products": { scope: "products:write" },
  "GET /v1/orders": { scope: "orders:read" },
  "GET /v1/metadata/product/:id": { scope: "products:read" },
  "GET /v1/metadata/order/:id": { scope: "orders:read" },
  "GET /v1/orders/:order_id": { scope: "orders:read", publishable: "order-token" },
  "POST /v1/orders": { scope: "orders:write", publishable: "order-create" },
  "PUT /v1/orders": { scope: "orders:write" },
  "GET /v1/customers": { scope: "orders:read" },
  "GET /v1/customers/:customer_id": { scope: "orders:read" },
  "GET /v1/shipping-methods": { scope: "orders:read", publishable: "catalog" },
  "POST /v1/shipping-methods": { scope: "orders:write" },
  "PATCH /v1/shipping-methods/:id": { scope: "orders:write" },
  "DELETE /v1/shipping-methods/:id": { scope: "orders:write" },
  "GET /v1/webhooks": { scope: "webhooks" },
  "POST /v1/webhooks": { scope: "webhooks" },
  "DELETE /v1/webhooks/:id": { scope: "webhooks" },
  "GET /v1/webhooks/:id/deliveries": { scope: "webhooks" },
  "POST /v1/webhooks/:id/test": { scope: "webhooks" },
  // The event view answers the event's order or product (docs/webhooks.md, "Reading a delivery").
  "GET /v1/webhooks/:id/events/:event_id": { scope: "webhooks", carries: READS },
  "POST /v1/webhooks/:id/events/:event_id/resend": { scope: "webhooks" },
  "GET /v1/keys": { scope: "keys" },
  "POST /v1/keys": { scope: "keys" },
  "DELETE /v1/keys/:id": { scope: "keys" },
  "POST /v1/sessions": { session: "sign-in" },
  "GET /v1/sessions/current": { session: "own" },
  "DELETE /v1/sessions/current": { session: "own" },
  "DELETE /v1/sessions": { session: "own" },
  "GET /v1/sessions": { scope: "keys" },
  "DELETE /v1/sessions/:id": { scope: "keys" },
};
