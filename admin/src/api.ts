// The admin's only way to the store: the public /v1 API, same origin, with the session cookie the
// browser sends by itself. The CSRF token of the sign-in answer lives in sessionStorage (this tab
// only); the key itself is never kept (src/docs/admin.md, "Sessions").
import type { Session } from "./types";

const STORE = "edge-store-admin";

/** The signed-in session of this tab, or null. */
export function currentSession(): Session | null {
  try {
    const s = JSON.parse(sessionStorage.getItem(STORE) ?? "null") as Session | null;
    return s && Date.parse(s.expires_at) > Date.now() ? s : null;
  } catch {
    return null;
  }
}

let onSignedOut: (why: string) => void = () => {};
/** What to do when the API says the session is gone (401). */
export function whenSignedOut(fn: (why: string) => void) {
  onSignedOut = fn;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Refusal = {
  error?: string;
  errors?: string[];
  results?: Record<string, { success?: boolean; errors?: string[] }>;
};

/** The words of a refusal: the envelope's error and its errors, or a write result's errors. */
export function errorText(status: number, body: unknown): string {
  if (body && typeof body === "object") {
    const b = body as Refusal;
    const results = b.results ? Object.values(b.results).flatMap((r) => r.errors ?? []) : [];
    const parts = [b.error, ...(b.errors ?? []), ...results].filter(Boolean);
    if (parts.length) return parts.join(": ");
  }
  return `the API answered ${status}`;
}

/**
 * One /v1 request; answers {body, headers}, throws ApiError with the API's own words when refused.
 * Writes send the session's CSRF token.
 */
// biome-ignore lint/suspicious/noExplicitAny: each caller names the shape it reads
export async function api<T = any>(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ body: T; headers: Headers }> {
  // X-Requested-With: a 401 then comes without the Basic challenge browsers meet with a login dialog.
  const headers: Record<string, string> = { Accept: "application/json", "X-Requested-With": "XMLHttpRequest" };
  if (method !== "GET") headers["X-CSRF-Token"] = currentSession()?.csrf_token ?? "";
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
  if (res.status === 401 && path !== "/v1/sessions") {
    sessionStorage.removeItem(STORE);
    onSignedOut("Your session ended: sign in again.");
  }
  // A write of many items answers 200 when one succeeded; the admin writes one at a time.
  const results = (json as Refusal | undefined)?.results;
  const failed = results && Object.values(results).some((r) => r.success === false);
  if (!res.ok || failed) throw new ApiError(res.status, errorText(res.status, json));
  return { body: json as T, headers: res.headers };
}

export async function signIn(key: string): Promise<Session> {
  const { body } = await api<Session>("POST", "/v1/sessions", { key });
  sessionStorage.setItem(STORE, JSON.stringify(body));
  return body;
}

export async function signOut() {
  try {
    await api("DELETE", "/v1/sessions/current");
  } finally {
    sessionStorage.removeItem(STORE);
  }
}

export const can = (scope: string) => currentSession()?.key.scopes.includes(scope) ?? false;
