import { ALL_SCOPES } from "../keys/scopes";
import { SESSION_COOKIE } from "./store";

// The admin's sessions (src/docs/admin.md, "Sessions"); src/openapi/document.ts spreads them in.

const json = (schema: Record<string, unknown>) => ({ "application/json": { schema } });
const error = (description: string) => ({ description, content: json({ $ref: "#/components/schemas/Error" }) });
const COOKIE = `${SESSION_COOKIE}=<id>; Max-Age=43200; Path=/; HttpOnly; Secure; SameSite=Strict`;

export const sessionsPaths = {
  "/v1/sessions": {
    post: {
      operationId: "createSession",
      tags: ["sessions"],
      summary: "Sign in: a session cookie for a secret key",
      description:
        "Verifies the key as an Authorization header would (a live stored sk_ key, or an entry of API_KEY) and " +
        `sets the cookie ${COOKIE}. Every later request with the cookie and no key header carries the key's ` +
        "scopes; a write (not GET) must also send the answer's csrf_token as X-CSRF-Token, and an Origin, when " +
        "sent, must be this service's. Requests with the cookie never get CORS headers.",
      security: [],
      "x-idempotency": false,
      requestBody: {
        required: true,
        content: json({
          type: "object",
          required: ["key"],
          properties: { key: { type: "string", minLength: 1, maxLength: 200, description: "A secret key." } },
        }),
      },
      responses: {
        "201": {
          description: "Signed in; the session cookie is set.",
          headers: {
            "Set-Cookie": { description: COOKIE, schema: { type: "string" } },
          },
          content: json({
            type: "object",
            required: ["csrf_token", "expires_at", "key"],
            properties: {
              csrf_token: { type: "string", pattern: "^[0-9a-f]{64}$", description: "Send as X-CSRF-Token on writes." },
              expires_at: { type: "string", description: "ISO 8601 time in UTC: when the session ends." },
              key: {
                type: "object",
                required: ["id", "name", "scopes"],
                properties: {
                  id: { type: ["integer", "null"], description: "The stored key's id; null for API_KEY." },
                  name: { type: "string" },
                  scopes: { type: "array", items: { type: "string", enum: [...ALL_SCOPES] } },
                },
              },
            },
          }),
        },
        "400": error("No key in the body."),
        "401": error("The key is not a live secret key."),
      },
    },
  },
  "/v1/sessions/current": {
    delete: {
      operationId: "deleteSession",
      tags: ["sessions"],
      summary: "Sign out: the session of this request's cookie ends at once",
      security: [{ sessionCookie: [] }],
      "x-idempotency": false,
      parameters: [{ name: "X-CSRF-Token", in: "header", required: true, schema: { type: "string" } }],
      responses: {
        "204": { description: "Signed out; the cookie is cleared." },
        "400": error("The request carries no session cookie (a key header was used)."),
        "403": error("X-CSRF-Token missing or wrong, or a foreign Origin."),
      },
    },
  },
};
