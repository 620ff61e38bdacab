// The scopes keys may hold (docs/keys.md, "Scopes"), in a module of their own that imports
// nothing, so the admin's bundle can list them without the Worker's types.

/** What a secret key may be granted (docs/keys.md, "Scopes"). */
export const SCOPES = ["products:read", "products:write", "orders:read", "orders:write", "webhooks", "keys"] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * What a publishable key may be granted beyond its fixed storefront routes: exact stock levels,
 * and the datafield_1..3 texts (which merchants also use for internal notes, so hidden by default).
 */
export const PUBLISHABLE_SCOPES = ["stock", "datafields"] as const;
