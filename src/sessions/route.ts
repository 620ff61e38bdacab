import { Hono } from "hono";
import type { AppEnv } from "../env";
import { verifySecretKey } from "../keys/verify";
import { failed } from "../platform/auth";
import { jsonBody } from "../platform/body";
import { ApiError } from "../platform/errors";
import { checkOrigin, createSession, revokeSession, sessionClearCookie, sessionSetCookie } from "./store";

// Sign-in and sign-out of the admin (docs/admin.md, "Sessions"). POST is the one /v1 route the
// auth middleware lets through unauthenticated: the key in its body is the credential.

const MAX_KEY_LENGTH = 200;
const NO_STORE = { "Cache-Control": "no-store" };

export const sessionsRoute = new Hono<AppEnv>()
  .post("/", jsonBody, async (c) => {
    // No signing a browser into a session from another site's page (login CSRF).
    checkOrigin(c);
    const body = c.var.body as { key?: unknown } | null;
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      throw new ApiError(400, "body must be an object with the key");
    }
    const key = typeof body.key === "string" ? body.key.trim() : undefined;
    if (!key || key.length > MAX_KEY_LENGTH) {
      throw new ApiError(400, "invalid body", [`key: must be a secret key of 1 to ${MAX_KEY_LENGTH} characters`]);
    }
    const now = Date.now();
    const cred = await verifySecretKey(c, key, now);
    // A wrong key counts against the client's address like a wrong Authorization header; no Basic
    // challenge, as none was sent.
    if (!cred) return failed(c, false);
    const session = await createSession(c.var.db, { keyId: cred.keyId, bootstrap: key }, now);
    // A key that expires first ends the session then (checked on each request); say so up front.
    const expiresAt = cred.expiresAt === null ? session.expiresAt : Math.min(cred.expiresAt, session.expiresAt);
    return c.json(
      {
        csrf_token: session.csrf,
        expires_at: new Date(expiresAt).toISOString(),
        key: { id: cred.keyId, name: cred.name, scopes: cred.scopes },
      },
      201,
      { ...NO_STORE, "Set-Cookie": sessionSetCookie(session.id) },
    );
  })
  .delete("/current", async (c) => {
    const session = c.var.credential?.session;
    if (!session) throw new ApiError(400, "this request carries no session cookie: there is no session to end");
    await revokeSession(c.var.db, session.id, Date.now());
    return c.body(null, 204, { ...NO_STORE, "Set-Cookie": sessionClearCookie() });
  });
