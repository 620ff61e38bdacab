import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { app } from "../src/app";
import type { Bindings } from "../src/env";

export const KEY = "test-key";
export const basic = (user: string, password = user) => `Basic ${btoa(`${user}:${password}`)}`;

let counter = 0;
/** Storage is isolated per test file, not per test: every test makes its own SKUs. */
export const uid = (prefix = "SKU") => `${prefix}-${Date.now().toString(36)}-${(++counter).toString(36)}`;

type Init = {
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  env?: Partial<Bindings>;
  /** `request.cf`, as Cloudflare's edge (or the local simulator) gives it; absent by default. */
  cf?: Record<string, unknown>;
};

// Queues that keep nothing. With the real (simulated) queues, a file that writes 100 events fills
// a batch, the simulated consumer delivers it at once, and one still running or logging when the
// file ends fails the whole run (EnvironmentTeardownError; seen once in CI, from
// test/products.put.stock.test.ts). The tests of delivery pass queues of their own (`init.env`);
// tests that call the scheduled sweep directly use quietEnv.
const NOWHERE = { send: async () => {}, sendBatch: async () => {} };
/** The test environment with queues that keep nothing, for code called without `call`. */
export const quietEnv = { ...env, EVENTS: NOWHERE, RETRIES: NOWHERE } as unknown as Bindings;

/** A request to the app inside the Workers runtime, authenticated unless told otherwise. */
export async function call(method: string, path: string, init: Init = {}) {
  const headers: Record<string, string> = { authorization: basic(KEY), ...init.headers };
  // Bytes, not a string: a string body would get a default text/plain Content-Type.
  let body: Uint8Array | undefined = init.raw === undefined ? undefined : new TextEncoder().encode(init.raw);
  if (init.body !== undefined) {
    body = new TextEncoder().encode(JSON.stringify(init.body));
    headers["content-type"] ??= "application/json";
  }
  for (const [k, v] of Object.entries(headers)) if (v === "") delete headers[k];
  const req = new Request(new URL(path, "http://localhost"), { method, headers, body, cf: init.cf } as RequestInit);
  const res = await app.request(req, undefined, { ...quietEnv, ...init.env });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

export const post = (path: string, body: unknown, init: Init = {}) => call("POST", path, { ...init, body });

export const put = (path: string, body: unknown, init: Init = {}) => call("PUT", path, { ...init, body });
export const get = (path: string, init: Init = {}) => call("GET", path, init);

/** A request body a fetch stub received, as text: webhook attempts send bytes (src/webhooks/attempt.ts). */
export const bodyText = (body: BodyInit | null | undefined) =>
  body instanceof Uint8Array ? new TextDecoder().decode(body) : String(body ?? "");

/** Creates one product through the API and returns it as the API answered. */
export async function createProduct(body: Record<string, unknown>) {
  const r = await post("/v1/products", { title: "Test product", price: 100, ...body });
  if (r.status !== 200) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.json.products[0];
}

/**
 * Registers an enabled webhook endpoint taking every event type, straight in D1. Writes record
 * outbox events only while an endpoint subscribes (docs/webhooks.md, "Webhooks"), so a test file that checks
 * events calls this once (storage is per test file). Its URL is one the consumer refuses at delivery
 * (a loopback address), so the queued events never reach the network from a test.
 */
export async function subscribeAll() {
  await env.DB.prepare(
    `INSERT INTO webhook_endpoints (url, events, format, secret, created_at)
     VALUES ('https://127.0.0.1/hooks', '["*"]', 'standard', 'whsec_dGVzdA==', 0)`,
  ).run();
}

/**
 * The refused-query tables of a list endpoint: each unknown or repeated parameter is 400 naming
 * it; each invalid value is 400 "invalid query" with the parameter's error.
 */
export function refusedQueries(path: string, unknown: [string, string][], invalid: [string, string][]) {
  it.each(unknown)("%s is 400 naming it", async (q, error) => {
    const r = await get(`${path}?${q}`);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe(error);
  });

  it.each(invalid)("%s is 400 naming the parameter", async (q, error) => {
    const r = await get(`${path}?${q}`);
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ code: 400, error: "invalid query", errors: [error] });
  });
}

/** Follows `Link: <...>; rel="next"` from `path` (a list route) to the end; every page's body. */
export async function followLinks(path: string): Promise<any[]> {
  const route = path.split("?")[0];
  const pages: any[] = [];
  let next: string | undefined = path;
  while (next) {
    const r = await get(next);
    expect(r.status).toBe(200);
    pages.push(r.json);
    const link = r.headers.get("link");
    next = link ? `${route}${new URL(/^<([^>]+)>; rel="next"$/.exec(link)?.[1] as string).search}` : undefined;
    expect(pages.length).toBeLessThan(50);
  }
  return pages;
}
