// The admin's only way to the store: the public /v1 API, same origin, with the session cookie the
// browser sends by itself. Every tab reads the browser's one session (and its CSRF token) from
// GET /v1/sessions/current; nothing of it is kept in web storage, and the key itself never is
// (docs/admin.md, "Sessions"). Tabs tell each other of a sign-in or sign-out.
import type { Session, SessionKey } from "./types";

let session: Session | null = null;

/** The browser's session as this tab last read it, or null. */
export const currentSession = () => session;

type Listener = (event: "in" | "out" | "expired", why?: string) => void;
let listener: Listener = () => {};
/** What to do on a sign-in or sign-out (here or in another tab), and when the API says the session ended. */
export function onSessionChange(fn: Listener) {
  listener = fn;
}

// Other tabs of this browser: a sign-in or sign-out there is one here too.
const tabs = typeof BroadcastChannel === "undefined" ? undefined : new BroadcastChannel("edge-store-admin");
if (tabs) {
  tabs.onmessage = async (e: MessageEvent<string>) => {
    if (e.data === "out") {
      session = null;
      listener("out", "Signed out in another tab.");
    } else if (e.data === "in" && (await loadSession())) listener("in");
  };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The refusal's field paths and messages (`products[0].qty: ...`), for the page to place. */
    readonly errors: string[] = [],
    /** The refusal's body and headers (a 412 carries the product as it is now, and its ETag). */
    readonly body?: unknown,
    readonly headers?: Headers,
  ) {
    super(message);
  }
}

type Refusal = {
  error?: string;
  errors?: string[];
  results?: Record<string, { success?: boolean; errors?: string[] }>;
};

/** The field errors of a refusal: the envelope's errors, or a write result's errors. */
function fieldErrors(body: unknown): string[] {
  if (!body || typeof body !== "object") return [];
  const b = body as Refusal;
  const results = b.results ? Object.values(b.results).flatMap((r) => r.errors ?? []) : [];
  return [...(b.errors ?? []), ...results];
}

/** The words of a refusal: the envelope's error and its errors, or a write result's errors. */
export function errorText(status: number, body: unknown): string {
  const parts = [(body as Refusal | undefined)?.error, ...fieldErrors(body)].filter(Boolean);
  return parts.length ? parts.join(": ") : `the API answered ${status}`;
}

export const SESSION_ENDED = "Your session ended. Sign in again: what you typed is still here.";

async function send(method: string, path: string, body: unknown, extra: Record<string, string> = {}) {
  // X-Requested-With: a 401 then comes without the Basic challenge browsers meet with a login dialog.
  const headers: Record<string, string> = {
    ...extra,
    Accept: "application/json",
    "X-Requested-With": "XMLHttpRequest",
  };
  if (method !== "GET") headers["X-CSRF-Token"] = session?.csrf_token ?? "";
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, "the store did not answer: check the connection and try again");
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { res, json };
}

/**
 * One /v1 request; answers {body, headers}, throws ApiError with the API's own words when refused.
 * Writes send the session's CSRF token; one refused because another tab signed in anew (a new
 * session, so a new token) is sent again with the token read afresh.
 */
// biome-ignore lint/suspicious/noExplicitAny: each caller names the shape it reads
export async function api<T = any>(
  method: string,
  path: string,
  body?: unknown,
  /** Extra request headers (If-Match). */
  headers?: Record<string, string>,
): Promise<{ body: T; headers: Headers }> {
  let { res, json } = await send(method, path, body, headers);
  if (res.status === 403 && method !== "GET" && /X-CSRF-Token/.test(errorText(403, json))) {
    const before = session?.csrf_token;
    if ((await loadSession()) && session?.csrf_token !== before)
      ({ res, json } = await send(method, path, body, headers));
  }
  // The session as last read stays: the page under the sign-in dialog keeps its menu and scopes.
  if (res.status === 401 && path !== "/v1/sessions") {
    listener("expired", SESSION_ENDED);
    throw new ApiError(401, SESSION_ENDED);
  }
  // A write of many items answers 200 when one succeeded; the admin writes one at a time.
  const results = (json as Refusal | undefined)?.results;
  const failed = results && Object.values(results).some((r) => r.success === false);
  if (!res.ok || failed)
    throw new ApiError(res.status, errorText(res.status, json), fieldErrors(json), json, res.headers);
  return { body: json as T, headers: res.headers };
}

/** Reads the browser's session (any tab's sign-in); null when there is none. */
export async function loadSession(): Promise<Session | null> {
  const { res, json } = await send("GET", "/v1/sessions/current", undefined);
  session = res.ok ? (json as Session) : null;
  return session;
}

export async function signIn(key: string): Promise<Session> {
  const { body } = await api<Session>("POST", "/v1/sessions", { key });
  session = body;
  tabs?.postMessage("in");
  return body;
}

/** Signs out this browser, or every browser signed in with this key. */
export async function signOut(everywhere = false) {
  try {
    await api("DELETE", everywhere ? "/v1/sessions" : "/v1/sessions/current");
  } finally {
    session = null;
    tabs?.postMessage("out");
  }
}

export const can = (scope: SessionKey["scopes"][number]) => session?.key.scopes.includes(scope) ?? false;
