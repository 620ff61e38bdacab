import { type Context, Hono } from "hono";
import { z } from "zod";
import type { AppEnv, Credential } from "../env";
import { failed, verifySecretKey } from "../keys/auth";
import { jsonBody } from "../platform/body";
import { ApiError } from "../platform/errors";
import { storeTimeZone } from "../platform/timezone";
import { zv } from "../platform/zv";
import {
  checkOrigin,
  createSession,
  csrfToken,
  idleMs,
  listSessions,
  revokeKeySessions,
  revokeSession,
  sessionClearCookie,
  sessionCookie,
  sessionSetCookie,
} from "./store";

// Sign-in and sign-out of the admin, and the sessions of every key (docs/admin.md,
// "Sessions"). POST is the one /v1 route the auth middleware lets through unauthenticated: the key
// in its body is the credential. Every answer is `Cache-Control: no-store` (src/keys/auth.ts).

const MAX_KEY_LENGTH = 200;
const sessionId = zv("param", z.object({ id: z.string().regex(/^[0-9a-f]{64}$/, "must be a session id") }));

/** The session of this request's cookie; 400 when the request authenticated with a key header. */
function ownSession(c: Context<AppEnv>) {
  const session = c.var.credential?.session;
  if (!session) throw new ApiError(400, "this request carries no session cookie: there is no session to end");
  return session;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The answer of a sign-in and of GET /current; a key that expires first ends the session then. */
function sessionAnswer(c: Context<AppEnv>, cred: Credential, csrf: string, expires: number, idleExpires: number) {
  const expiresAt = cred.expiresAt === null ? expires : Math.min(cred.expiresAt, expires);
  return {
    csrf_token: csrf,
    expires_at: iso(expiresAt),
    idle_expires_at: iso(idleExpires),
    key: { id: cred.keyId, name: cred.name, scopes: cred.scopes },
    currency: c.env.DEFAULT_CURRENCY || "SEK",
    timezone: storeTimeZone(c.env),
  };
}

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
    // A wrong key counts against the client's address like a wrong Authorization header (no challenge).
    if (!cred) return failed(c, false);
    const session = await createSession(c.var.db, { keyId: cred.keyId, bootstrap: key }, now, {
      userAgent: c.req.header("user-agent"),
      replaces: sessionCookie(c),
    });
    return c.json(sessionAnswer(c, cred, session.csrf, session.expiresAt, now + idleMs(c.env)), 201, {
      "Set-Cookie": sessionSetCookie(session.id),
    });
  })
  // Any tab of the browser reads its session, and with it the CSRF token its writes send.
  .get("/current", async (c) => {
    const session = ownSession(c);
    const csrf = await csrfToken(sessionCookie(c) ?? "");
    const cred = c.var.credential!;
    const idle = Math.min(session.idleExpiresAt, session.expiresAt, cred.expiresAt ?? Infinity);
    return c.json(sessionAnswer(c, cred, csrf, session.expiresAt, idle));
  })
  .delete("/current", async (c) => {
    const session = ownSession(c);
    await revokeSession(c.var.db, session.id, Date.now());
    return c.body(null, 204, { "Set-Cookie": sessionClearCookie() });
  })
  // Sign out everywhere: every session of the signed-in key, in every browser.
  .delete("/", async (c) => {
    const session = ownSession(c);
    const keyId = c.var.credential?.keyId ?? null;
    const ended = await revokeKeySessions(c.var.db, { keyId, keyHash: session.keyHash }, Date.now());
    return c.json({ ended }, 200, { "Set-Cookie": sessionClearCookie() });
  })
  .get("/", async (c) => {
    const sessions = await listSessions(c.var.db, Date.now(), idleMs(c.env), c.var.credential?.session?.id);
    return c.json({ sessions });
  })
  .delete("/:id", sessionId, async (c) => {
    const { id } = c.req.valid("param");
    if (!(await revokeSession(c.var.db, id, Date.now()))) throw new ApiError(404, `no live session ${id}`);
    return c.body(null, 204);
  });
