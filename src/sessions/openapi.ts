import { z } from "zod";
import { ALL_SCOPES } from "../keys/scopes";
import { answer, error, json, pathId, schema } from "../openapi/build";
import { SESSION_COOKIE } from "./store";

// The admin's sessions (docs/admin.md, "Sessions"); src/openapi/document.ts spreads them in.

const COOKIE = `${SESSION_COOKIE}=<id>; Max-Age=43200; Path=/; HttpOnly; Secure; SameSite=Strict`;
const hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const time = (description: string) => z.string().meta({ description: `ISO 8601 time in UTC: ${description}` });
const CSRF = [{ name: "X-CSRF-Token", in: "header", required: true, schema: { type: "string" } }];
const NO_COOKIE = error("The request carries no session cookie (a key header was used).");
const WRONG_CSRF = error("X-CSRF-Token missing or wrong, or a foreign Origin.");
const NO_SCOPE = error("The key lacks scope keys.");

export const sessionOut = z.object({
  csrf_token: hex64.meta({ description: "Send as X-CSRF-Token on writes." }),
  expires_at: time("when the session ends, however busy (12 hours after sign-in, or the key's expiry)."),
  idle_expires_at: time("when it ends unless used before (SESSION_IDLE_MINUTES after the last use, 30 by default)."),
  key: z.object({
    id: z.int().nullable().meta({ description: "The stored key's id; null for API_KEY." }),
    name: z.string(),
    scopes: z.array(z.enum(ALL_SCOPES as [string, ...string[]])),
  }),
  currency: z.string().meta({ description: "The store's currency (DEFAULT_CURRENCY): product prices are in it." }),
  timezone: z.string().meta({
    description: "The store's IANA time zone (STORE_TIMEZONE; UTC when unset or not a zone): the admin's days are its.",
  }),
});

export const sessionListed = z.object({
  id: hex64.meta({ description: "The session's id (the SHA-256 of its cookie, never the cookie)." }),
  key: z.object({ id: z.int().nullable(), name: z.string() }),
  created_at: time("the sign-in."),
  last_seen_at: time("its last use (to the minute)."),
  expires_at: time("when it ends unless used before, or at the latest."),
  user_agent: z.string().nullable().meta({ description: "The browser's User-Agent at sign-in." }),
  current: z.boolean().meta({ description: "Whether it is the session of this request." }),
});

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
        "sent, must be this service's. Requests with the cookie never get CORS headers. A session cookie the " +
        "request carries already ends: a browser has one session.",
      security: [],
      "x-idempotency": false,
      requestBody: {
        required: true,
        content: json(
          schema(z.object({ key: z.string().min(1).max(200).meta({ description: "A secret key." }) }), "input"),
        ),
      },
      responses: {
        "201": {
          ...answer("Signed in; the session cookie is set.", sessionOut),
          headers: { "Set-Cookie": { description: COOKIE, schema: { type: "string" } } },
        },
        "400": error("No key in the body."),
        "401": error("The key is not a live secret key."),
      },
    },
    get: {
      operationId: "listSessions",
      tags: ["sessions"],
      summary: "Every live session of every key, newest first (at most 500)",
      responses: {
        "200": answer("The live sessions.", z.object({ sessions: z.array(sessionListed) })),
        "403": NO_SCOPE,
      },
    },
    delete: {
      operationId: "deleteKeySessions",
      tags: ["sessions"],
      summary: "Sign out everywhere: every session of the signed-in key ends at once",
      security: [{ sessionCookie: [] }],
      "x-idempotency": false,
      parameters: CSRF,
      responses: {
        "200": answer("Signed out in every browser; the cookie is cleared.", z.object({ ended: z.int() })),
        "400": NO_COOKIE,
        "403": WRONG_CSRF,
      },
    },
  },
  "/v1/sessions/current": {
    get: {
      operationId: "getSession",
      tags: ["sessions"],
      summary: "The session of this request's cookie, with its CSRF token",
      description:
        "What any tab of the browser reads to write with the session: the sign-in's answer, read again. The " +
        "token is derived from the cookie, so only a page that sends the cookie from this origin can read it.",
      security: [{ sessionCookie: [] }],
      responses: {
        "200": answer("The session.", sessionOut),
        "400": NO_COOKIE,
      },
    },
    delete: {
      operationId: "deleteSession",
      tags: ["sessions"],
      summary: "Sign out: the session of this request's cookie ends at once",
      security: [{ sessionCookie: [] }],
      "x-idempotency": false,
      parameters: CSRF,
      responses: {
        "204": { description: "Signed out; the cookie is cleared." },
        "400": NO_COOKIE,
        "403": WRONG_CSRF,
      },
    },
  },
  "/v1/sessions/{id}": {
    delete: {
      operationId: "endSession",
      tags: ["sessions"],
      summary: "End one session (the keys page's end button)",
      "x-idempotency": false,
      parameters: [pathId("id", schema(hex64))],
      responses: {
        "204": { description: "Ended." },
        "400": error("The id is not a session id."),
        "403": NO_SCOPE,
        "404": error("No live session with that id."),
      },
    },
  },
};
