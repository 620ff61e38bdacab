import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import type { Bindings } from "../src/env";
import { scheduled } from "../src/scheduled";
import { call, createProduct, post, put, uid } from "./helpers";
import { change, order, stocked } from "./orders-put-helpers";

// The outbox writes an event only while an enabled endpoint takes its type (docs/webhooks.md, "Webhooks"),
// and only written events go to the queue. This file starts with no endpoint at all (storage is
// per test file), so every write path is seen both ways.

let sent: string[];
const queue = {
  sendBatch: async (msgs: { body: { event_id: string } }[]) => {
    sent.push(...msgs.map((m) => m.body.event_id));
  },
};
const withQueue = { env: { EVENTS: queue } as unknown as Partial<Bindings> };

const eventRows = async () =>
  (await env.DB.prepare("SELECT id, type FROM events ORDER BY rowid").all<{ id: string; type: string }>()).results;

async function endpoint(events: string[]) {
  const row = await env.DB.prepare(
    `INSERT INTO webhook_endpoints (url, events, format, secret, created_at)
     VALUES ('https://127.0.0.1/', ?1, 'standard', 'whsec_dGVzdA==', 0) RETURNING id`,
  )
    .bind(JSON.stringify(events))
    .first<{ id: number }>();
  return row?.id as number;
}

/** Every kind of write the store records events for, each through the API. */
async function everyWrite() {
  const sku = uid("OB");
  const p = await createProduct({ sku, stock: 50 });
  expect((await put("/v1/products", { sku, stock: 40 }, withQueue)).status).toBe(200);
  expect((await put("/v1/products", { product_id: p.product_id, title: "Renamed" }, withQueue)).status).toBe(200);
  const created = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }], withQueue);
  const id = created.json.results.create_1.order_id as number;
  expect((await change([{ order_id: id, status: "paid" }], withQueue)).json.results.update_1.success).toBe(true);
  expect((await change([{ order_id: id, status: "cancelled" }], withQueue)).json.results.update_1.success).toBe(true);
  const gone = await createProduct({ sku: uid("OBD") });
  expect((await call("DELETE", "/v1/products", { body: { product_id: gone.product_id }, ...withQueue })).status).toBe(
    200,
  );
}

beforeEach(async () => {
  sent = [];
  await env.DB.batch([env.DB.prepare("DELETE FROM events"), env.DB.prepare("DELETE FROM webhook_endpoints")]);
});

describe("outbox subscription gate", () => {
  it("writes no event and sends nothing to the queue while no endpoint exists", async () => {
    await everyWrite();
    expect(await eventRows()).toEqual([]);
    expect(sent).toEqual([]);
  });

  it("writes and sends every event once an endpoint takes all types", async () => {
    await endpoint(["*"]);
    await everyWrite();
    const rows = await eventRows();
    // The createProduct calls of everyWrite go without the stand-in queue, so only rows are seen.
    expect(rows.map((r) => r.type)).toEqual([
      "product.add",
      "product.update",
      "product.update",
      "order.created",
      "order.new",
      "order.cancelled",
      "product.add",
      "product.delete",
    ]);
    const queued = rows.filter((r) => !(r.type === "product.add")).map((r) => r.id);
    expect(sent.sort()).toEqual(queued.sort());
  });

  it("writes and sends only the types some endpoint takes", async () => {
    await endpoint(["order.created", "order.cancelled"]);
    await everyWrite();
    const rows = await eventRows();
    expect(rows.map((r) => r.type)).toEqual(["order.created", "order.cancelled"]);
    expect(sent.sort()).toEqual(rows.map((r) => r.id).sort());
  });

  it("ignores a disabled endpoint", async () => {
    const id = await endpoint(["*"]);
    await env.DB.prepare("UPDATE webhook_endpoints SET disabled_at = 1 WHERE id = ?").bind(id).run();
    await everyWrite();
    expect(await eventRows()).toEqual([]);
    expect(sent).toEqual([]);
  });

  it("the unpaid hold's cancellations follow the same rule", async () => {
    const hold = { ...env, UNPAID_ORDER_HOLD_MINUTES: "1", EVENTS: queue } as unknown as Bindings;
    const { sku } = await stocked(10);
    const first = await order([{ sku, qty: 1 }]);
    await scheduled(hold, Date.now() + 2 * 60_000);
    expect(await eventRows()).toEqual([]);
    expect(sent).toEqual([]);

    await endpoint(["order.cancelled"]);
    const second = await order([{ sku, qty: 1 }]);
    await scheduled(hold, Date.now() + 2 * 60_000);
    const rows = await eventRows();
    expect(rows.map((r) => r.type)).toEqual(["order.cancelled"]);
    expect(sent).toEqual(rows.map((r) => r.id));
    const status = await env.DB.prepare("SELECT id, status FROM orders WHERE id IN (?1, ?2) ORDER BY id")
      .bind(first, second)
      .all<{ id: number; status: string }>();
    expect(status.results.map((r) => r.status)).toEqual(["cancelled", "cancelled"]);
  });
});
