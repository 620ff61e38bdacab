import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { version } from "../package.json";
import { LATEST_MIGRATION } from "../src/db/migrations";
import { STORE_URL_UNSET } from "../src/platform/health";
import { wrapD1 } from "./d1-wrap";
import { get, KEY, post, uid } from "./helpers";

// EMPTY_DB has no tables at all; STALE_DB has only the first migration recorded (test/vitest.config.ts).
beforeAll(async () => {
  await env.STALE_DB.batch([
    env.STALE_DB.prepare(
      "CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)",
    ),
    env.STALE_DB.prepare("INSERT OR IGNORE INTO d1_migrations (name) VALUES (?)").bind(env.TEST_MIGRATIONS[0].name),
  ]);
});

describe("GET /", () => {
  it("answers the name and package.json's version, as the OpenAPI document does", async () => {
    const r = await get("/", { headers: { authorization: "" } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ name: "edge-store", version });
    expect((await get("/openapi.json")).json.info.version).toBe(version);
  });
});

describe("GET /health", () => {
  it("knows the newest bundled migration (update src/db/migrations.ts with each new migration)", () => {
    expect(LATEST_MIGRATION).toBe(env.TEST_MIGRATIONS.at(-1)?.name);
  });

  it("is 200 ok without credentials when the schema is at the latest migration and STORE_URL is set", async () => {
    const r = await get("/health", { headers: { authorization: "" }, env: { STORE_URL: "https://shop.example/p" } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: "ok" });
    expect(r.headers.get("x-request-id")).toBeTruthy();
  });

  it.each([[""], ["  "], [undefined]])("says so when STORE_URL is %j: products would have no url", async (value) => {
    const r = await get("/health", { headers: { authorization: "" }, env: { STORE_URL: value } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: "ok", warnings: [STORE_URL_UNSET] });
  });

  it.each([
    ["Europe/Stockholm", "Europe/Stockholm"],
    ["america/new_york", "America/New_York"],
    [undefined, "UTC"],
    ["", "UTC"],
    ["Mars/Olympus", "UTC"],
    ["+01:00", "UTC"],
  ])("STORE_TIMEZONE %j: the admin's session names %s, and /health warns when it is no zone", async (zone, named) => {
    const env = { STORE_URL: "https://shop.example/p", STORE_TIMEZONE: zone };
    const health = await get("/health", { headers: { authorization: "" }, env });
    const bad = zone !== undefined && zone !== "" && named === "UTC";
    expect(health.status).toBe(200);
    expect(health.json.warnings ?? []).toEqual(bad ? [expect.stringContaining(`STORE_TIMEZONE "${zone}"`)] : []);
    const session = await post("/v1/sessions", { key: KEY }, { headers: { authorization: "" }, env });
    expect(session.json.timezone).toBe(named);
  });

  it("is 503 naming the cause when no migration was applied", async () => {
    const r = await get("/health", { env: { DB: env.EMPTY_DB } });
    expect(r.status).toBe(503);
    expect(r.json).toEqual({ code: 503, error: "database schema is not applied: run the migrations" });
    expect(r.headers.get("retry-after")).toBeNull();
  });

  it("is 503 naming both migrations when the database is behind", async () => {
    const r = await get("/health", { env: { DB: env.STALE_DB } });
    expect(r.status).toBe(503);
    expect(r.json.error).toBe(
      `database schema is at ${env.TEST_MIGRATIONS[0].name}, this version needs ${LATEST_MIGRATION}: run the migrations`,
    );
  });

  it("is 503 with Retry-After when the database does not answer", async () => {
    const r = await get("/health", { env: { DB: wrapD1({ failCall: 1 }).db } });
    expect(r.status).toBe(503);
    expect(r.json).toEqual({ code: 503, error: "the database is unavailable" });
    expect(r.headers.get("retry-after")).toBe("5");
  });
});

describe("/v1 against a database without its migrations", () => {
  it.each([
    ["GET", "/v1/products"],
    ["GET", "/v1/orders"],
    ["POST", "/v1/products"],
  ])("%s %s is 500 'schema is not applied', never a 503 to retry", async (method, path) => {
    const r =
      method === "POST"
        ? await post(path, { title: "x", price: 1, sku: uid() }, { env: { DB: env.EMPTY_DB } })
        : await get(path, { env: { DB: env.EMPTY_DB } });
    expect(r.status).toBe(500);
    expect(r.json).toEqual({ code: 500, error: "database schema is not applied: run the migrations" });
    expect(r.headers.get("retry-after")).toBeNull();
    expect(r.headers.get("x-request-id")).toBeTruthy();
  });
});
