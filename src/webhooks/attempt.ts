import { signature } from "./sign";

// One HTTP attempt of one event to one endpoint, in the endpoint's format (docs/webhooks.md, "Webhooks").

export const ATTEMPT_TIMEOUT_MS = 10_000;
export const USER_AGENT = "edge-store-webhooks/1.0";
const UTF8 = new TextEncoder();

/** What an attempt needs of the event and the endpoint (the consumer's load query gives both). */
export type Target = {
  eventId: string;
  type: string;
  orderId: number | null;
  productId: number | null;
  eventAt: number;
  /** The stored API key whose request caused the event; null for the bootstrap key or the cron. */
  key?: EventKey | null;
  endpointId: number;
  url: string;
  format: string;
  /** The standard payload's `data` as JSON text: the event's object (payload.ts); else its id. */
  data?: string;
  /** The standard body as UTF-8, encoded once per event by the consumer for all its endpoints. */
  encoded?: Uint8Array;
};

export type AttemptResult = { status: number | null; error: string | null; durationMs: number };

/** Whether the receiver took the delivery: a 2xx answer. */
export const delivered = (r: AttemptResult) => r.status !== null && r.status >= 200 && r.status < 300;

export type EventKey = { id: number; name: string };

/** The resource an event is about, by id (the quickbutik format's query); a test send (test.ts) names none. */
const resource = (t: Target) =>
  t.type.startsWith("order.")
    ? { order_id: t.orderId }
    : t.type.startsWith("product.")
      ? { product_id: t.productId }
      : {};

/**
 * What a delivery of `t` sends, unsigned (and what the admin's payload view shows): its method,
 * URL and body ("" for the quickbutik format's GET, whose signature covers the query instead).
 */
export function requestOf(t: Target) {
  let url = t.url;
  let body = "";
  if (t.format === "quickbutik") {
    // As the modelled API delivers: GET with the event in the query, no body; the receiver's own
    // query parameters (a shared secret, say) stay as they were.
    const u = new URL(t.url);
    u.searchParams.set("event_type", t.type);
    for (const [k, v] of Object.entries(resource(t))) u.searchParams.set(k, String(v));
    url = u.toString();
  } else {
    // `key`: who caused the event; `data`: the object as it is now, as SQLite or the order presenter
    // wrote it (never parsed again here).
    const head = JSON.stringify({
      type: t.type,
      timestamp: new Date(t.eventAt).toISOString(),
      key: t.key ?? undefined,
    });
    body = `${head.slice(0, -1)},"data":${t.data ?? JSON.stringify(resource(t))}}`;
  }
  return { url, method: t.format === "quickbutik" ? "GET" : "POST", body };
}

/**
 * What a quickbutik GET's signature covers in place of a body: its query string as sent, without
 * its `?` (docs/webhooks.md, "Formats"), so a captured GET does not verify with another query.
 */
export const signedQuery = (url: string) => new URL(url).search.slice(1);

/** The request of one attempt, signed with its own timestamp and the event's webhook-id. */
export async function buildRequest(t: Target, key: CryptoKey, nowMs: number) {
  const timestamp = Math.floor(nowMs / 1000);
  const { url, method, body: text } = requestOf(t);
  const body = t.encoded ?? UTF8.encode(text);
  // fetch sends the URL as this serialisation of it (serialising a parsed URL again changes
  // nothing), so the query signed is the query the receiver reads.
  const signed = method === "GET" ? signedQuery(url) : body;
  const headers: Record<string, string> = {
    "user-agent": USER_AGENT,
    ...(method === "POST" && { "content-type": "application/json" }),
    "webhook-id": t.eventId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await signature(key, t.eventId, timestamp, signed),
  };
  return { url, method, headers, body };
}

/**
 * Sends one attempt: at most `timeoutMs`, no redirect followed (a 3xx is a failure). Never throws;
 * the error never names the URL, whose query may hold the receiver's own secret.
 */
export async function attempt(t: Target, key: CryptoKey, timeoutMs = ATTEMPT_TIMEOUT_MS): Promise<AttemptResult> {
  const start = Date.now();
  const req = await buildRequest(t, key, start);
  try {
    const res = await fetch(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.method === "POST" ? req.body : undefined,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The answer's body is not read: cancelling it frees the connection at once.
    await res.body?.cancel().catch(() => {});
    return { status: res.status, error: null, durationMs: Date.now() - start };
  } catch (e) {
    const name = e instanceof Error ? e.name : "";
    const error =
      name === "TimeoutError" || name === "AbortError"
        ? `timeout: no answer within ${timeoutMs / 1000} s`
        : `network error: ${(e instanceof Error ? e.message : String(e)).split(t.url).join("<url>").slice(0, 200)}`;
    return { status: null, error, durationMs: Date.now() - start };
  }
}
