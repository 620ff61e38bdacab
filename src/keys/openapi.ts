import { z } from "zod";
import { answer, error, json, pathId, schema, utcTime as time } from "../openapi/build";
import { keyCreate, MAX_KEYS } from "./schema";
import { ALL_SCOPES } from "./scopes";

// The key routes of the OpenAPI document, and the schemes every /v1 operation's security names
// (src/openapi/complete.ts sets it from the one route -> scope table, docs/keys.md).

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
  sessionCookie: {
    type: "apiKey",
    in: "cookie",
    name: "__Host-session",
    description:
      "The admin's session (docs/admin.md): set by POST /v1/sessions; carries the signed-in key's scopes. Writes also need X-CSRF-Token.",
  },
  publishableKey: {
    type: "apiKey",
    in: "header",
    name: "X-Publishable-Key",
    description:
      "A publishable key (pk_...), for storefronts and browsers: only the operations that list it, public fields only.",
  },
};

const nullableTime = time.nullable().meta({ description: "ISO 8601 time in UTC, or null." });

export const keyOut = z.object({
  id: z.int().min(1),
  name: z.string(),
  type: z.enum(["secret", "publishable"]),
  prefix: z.string().meta({ description: "The key's first 11 characters, to recognise it." }),
  scopes: z.array(z.enum(ALL_SCOPES as [string, ...string[]])),
  allowed_origins: z.array(z.string()),
  expires_at: nullableTime,
  created_at: time,
  last_used_at: nullableTime.meta({ description: "To the minute; null if never used." }),
  revoked: z.boolean(),
  revoked_at: nullableTime,
});
export const keyCreated = keyOut.extend({
  key: z.string().regex(/^(sk|pk)_[0-9a-f]{48}$/),
  notices: z.array(z.string()),
});

/** The key management routes (docs/keys.md); src/openapi/document.ts spreads them into its paths. */
export const keysPaths = {
  "/v1/keys": {
    post: {
      operationId: "createKey",
      tags: ["keys"],
      summary: "Create a secret or publishable key; the key is in this answer only",
      "x-idempotency": false,
      requestBody: { required: true, content: json(schema(keyCreate, "input")) },
      responses: {
        "201": answer("The key, with `key` shown this once.", keyCreated),
        "400": error("A field is invalid; errors name it."),
        "403": error(
          "The key lacks scope keys, would grant a scope it lacks, or would create a publishable key without products:read and orders:write.",
        ),
        "409": error(`Already ${MAX_KEYS} live keys.`),
      },
    },
    get: {
      operationId: "listKeys",
      tags: ["keys"],
      summary: "List every key, revoked ones included (never the keys themselves)",
      responses: {
        "200": answer("The keys.", z.object({ keys: z.array(keyOut) })),
        "403": error("The key lacks scope keys."),
      },
    },
  },
  "/v1/keys/{id}": {
    delete: {
      operationId: "revokeKey",
      tags: ["keys"],
      summary: "Revoke a key: refused at once here, everywhere within 60 s",
      "x-idempotency": false,
      parameters: [pathId()],
      responses: {
        "204": { description: "Revoked (again is fine)." },
        "400": error("The id is not an id."),
        "403": error("The key lacks scope keys."),
        "404": error("No such key."),
      },
    },
  },
};
