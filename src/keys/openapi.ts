import { ROUTE_SCOPES } from "./scopes";

// The OpenAPI security of every /v1 operation, from the one route -> scope table (docs/keys.md):
// the scope a secret key needs (Basic or Bearer), and the publishable key where a storefront may
// call the operation.

export const KEY_SECURITY_SCHEMES = {
  basicAuth: {
    type: "http",
    scheme: "basic",
    description:
      "A secret key (sk_...) or the bootstrap API_KEY as both user name and password: Authorization: Basic base64(key:key). The scopes listed on an operation are the one a secret key needs.",
  },
  bearerAuth: {
    type: "http",
    scheme: "bearer",
    description: "A secret key: Authorization: Bearer sk_.... The scope listed on an operation is the one it needs.",
  },
  publishableKey: {
    type: "apiKey",
    in: "header",
    name: "X-Publishable-Key",
    description:
      "A publishable key (pk_...), for storefronts and browsers: only the operations that list it, public fields only.",
  },
};

// biome-ignore lint/suspicious/noExplicitAny: the document is walked as untyped JSON
type Json = Record<string, any>;

/** Sets each /v1 operation's `security` and `x-scope` from ROUTE_SCOPES. */
export function withKeySecurity<T extends Json>(doc: T): T {
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    if (!path.startsWith("/v1/")) continue;
    const pattern = path.replace(/\{([a-z_]+)\}/g, ":$1");
    for (const [method, op] of Object.entries(item as Json)) {
      const rule = ROUTE_SCOPES[`${method.toUpperCase()} ${pattern}`];
      if (!rule || typeof op !== "object") continue;
      op["x-scope"] = rule.scope;
      op.security = [
        { basicAuth: [rule.scope] },
        { bearerAuth: [rule.scope] },
        ...(rule.publishable ? [{ publishableKey: [] }] : []),
      ];
    }
  }
  return doc;
}
