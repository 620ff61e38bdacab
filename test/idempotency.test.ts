import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { purgeIdempotencyKeys } from "../src/scheduled";
import { post, uid } from "./helpers";

const countSku = async (sku: string) =>
  (
    (await env.DB.prepare("SELECT count(*) AS n FROM products WHERE sku = ?").bind(sku).first<{ n: number }>()) as {
      n: number;
    }
  ).n;

describe("Idempotency-Key on POST /v1/products (contract 3.3)", () => {
  it("replays the first answer for the same key and body, creating nothing more", async () => {
    const key = uid("key");
    const body = { title: "Once", price: 10, sku: uid() };
    const first = await post("/v1/products", body, { headers: { "idempotency-key": key } });
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await post("/v1/products", body, { headers: { "idempotency-key": key } });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(await countSku(body.sku)).toBe(1);
  });

  it("replays a failed answer too, once the request reached the point of writing", async () => {
    const sku = uid();
    await post("/v1/products", { title: "Owner", price: 1, sku });
    const key = uid("key");
    const first = await post("/v1/products", { title: "Dup", price: 1, sku }, { headers: { "idempotency-key": key } });
    expect(first.status).toBe(409);
    const again = await post("/v1/products", { title: "Dup", price: 1, sku }, { headers: { "idempotency-key": key } });
    expect(again.status).toBe(409);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
  });

  it("refuses the same key with a different body with 422", async () => {
    const key = uid("key");
    await post("/v1/products", { title: "A", price: 1, sku: uid() }, { headers: { "idempotency-key": key } });
    const other = await post(
      "/v1/products",
      { title: "B", price: 1, sku: uid() },
      { headers: { "idempotency-key": key } },
    );
    expect(other.status).toBe(422);
    expect(other.json).toEqual({ code: 422, error: "this Idempotency-Key was used with a different request" });
  });

  it("lets exactly one of 20 concurrent requests with one key take effect", async () => {
    const key = uid("key");
    const body = { title: "Race", price: 1, sku: uid() };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post("/v1/products", body, { headers: { "idempotency-key": key } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.json.products[0].product_id)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get("idempotent-replayed") === "true")).toHaveLength(19);
    expect(await countSku(body.sku)).toBe(1);
  });

  it.each([
    ["too long", "k".repeat(256)],
    ["a control character", "a\tb"],
    ["only a space", " "],
  ])("refuses a key that is %s with 400", async (_, key) => {
    const r = await post("/v1/products", { title: "K", price: 1 }, { headers: { "idempotency-key": key } });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual(["Idempotency-Key: must be 1 to 255 printable characters"]);
  });

  it("keeps records 24 hours: an expired key runs again, and the cron purges it", async () => {
    const key = uid("key");
    const body = { title: "Old", price: 1, sku: uid() };
    const first = await post("/v1/products", body, { headers: { "idempotency-key": key } });
    const old = Date.now() - 25 * 60 * 60 * 1000;
    await env.DB.prepare("UPDATE idempotency_keys SET created_at = ? WHERE key = ?").bind(old, key).run();
    // Same key after expiry: a new request; the SKU now exists, so it fails as a new request would.
    const later = await post("/v1/products", body, { headers: { "idempotency-key": key } });
    expect(later.headers.get("idempotent-replayed")).toBeNull();
    expect(later.status).toBe(409);
    expect(first.status).toBe(200);
    await env.DB.prepare("UPDATE idempotency_keys SET created_at = ? WHERE key = ?").bind(old, key).run();
    await purgeIdempotencyKeys(env);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM idempotency_keys WHERE key = ?").bind(key).first();
    expect(left).toEqual({ n: 0 });
  });
});
