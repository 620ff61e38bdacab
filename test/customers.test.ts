import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { customerDetail, customerList } from "../src/customers/schema";
import { createProduct, get, post, put, uid } from "./helpers";

// /v1/customers (docs/customers.md): the customers secret keys' orders made, with their totals,
// for orders:read keys only; never for a publishable key.

const SHOP = "https://shop.example";

async function order(sku: string, customer: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const r = await post("/v1/orders", [{ order_id: "create", customer, products: [{ sku, qty: 1 }], ...extra }]);
  expect(r.status, r.text).toBe(200);
  return r.json.results.create_1.order_id as number;
}

/** A product of `price` and a customer with orders of it; answers the customer's id and e-mail. */
async function shopper(price: number, orders: number, name = { firstname: "Anna", lastname: uid("Svensson") }) {
  const sku = uid();
  await createProduct({ sku, price, stock: 1000 });
  const email = `${uid("c")}@example.com`;
  const ids: number[] = [];
  for (let i = 0; i < orders; i++) ids.push(await order(sku, { email, billing_details: name }));
  const one = await get(`/v1/customers?search=${encodeURIComponent(email)}`);
  expect(one.json.customers).toHaveLength(1);
  return { id: one.json.customers[0].customer_id as number, email, ids, sku, name };
}

const secret = async (scopes: string[]) => {
  const r = await post("/v1/keys", { name: uid("k"), type: "secret", scopes });
  return { headers: { authorization: `Bearer ${r.json.key}` } };
};

describe("customers", () => {
  it("lists a customer with their orders count, spend and last order; cancelled orders spend nothing", async () => {
    const c = await shopper(100, 3);
    const cancelled = await put("/v1/orders", [{ order_id: c.ids[0], status: "cancelled" }]);
    expect(cancelled.status, cancelled.text).toBe(200);
    // An order in another currency counts as an order, not in the spend of the store's currency.
    await order(c.sku, { email: c.email }, { payment: { currency: "EUR" } });
    const r = await get(`/v1/customers?search=${encodeURIComponent(c.email)}`);
    expect(r.status, r.text).toBe(200);
    expect(customerList.safeParse(r.json).error).toBeUndefined();
    const [row] = r.json.customers;
    expect(row).toMatchObject({
      customer_id: c.id,
      email: c.email,
      name: `Anna ${c.name.lastname}`,
      orders_count: 4,
      total_spent: 200,
      currency: "SEK",
    });
    const detail = await get(`/v1/customers/${c.id}`);
    expect(detail.status, detail.text).toBe(200);
    expect(customerDetail.safeParse(detail.json).error).toBeUndefined();
    expect(detail.json.last_order_id).toBe(detail.json.orders[0].order_id);
    expect(detail.json.last_order_at).toBe(detail.json.orders[0].created_at);
    expect(detail.json.orders.map((o: { order_id: number }) => o.order_id).slice(1)).toEqual([...c.ids].reverse());
    expect(detail.json.orders.at(-1)).toMatchObject({ status: "cancelled", total: 100, currency: "SEK" });
  });

  it("finds customers by any part of the e-mail, the name or the phone, any case", async () => {
    const c = await shopper(10, 1, { firstname: "Märta", lastname: uid("Lind") });
    await order(c.sku, { email: c.email, phone: "+46 70 111 22 33" });
    for (const s of [
      c.email.slice(2, 12).toUpperCase(),
      c.name.lastname.toLowerCase(),
      `märta ${c.name.lastname}`,
      "701112233",
    ]) {
      const r = await get(`/v1/customers?search=${encodeURIComponent(s)}`);
      expect(
        r.json.customers.map((x: { customer_id: number }) => x.customer_id),
        s,
      ).toContain(c.id);
    }
    const none = await get(`/v1/customers?search=${uid("nobody")}&count=true`);
    expect(none.json.customers).toEqual([]);
    expect(none.headers.get("x-total-count")).toBe("0");
  });

  it("pages newest first with a Link to the next page and the count of every match", async () => {
    const tag = uid("page").toLowerCase();
    const made: number[] = [];
    for (let i = 0; i < 5; i++) made.push((await shopper(5, 1, { firstname: tag, lastname: String(i) })).id);
    const seen: number[] = [];
    let path: string | undefined = `/v1/customers?search=${tag}&limit=2&count=true`;
    while (path) {
      const r = await get(path);
      expect(r.headers.get("x-total-count")).toBe("5");
      seen.push(...r.json.customers.map((x: { customer_id: number }) => x.customer_id));
      const link = r.headers.get("link");
      path = link
        ? new URL(/<([^>]+)>/.exec(link)![1]).pathname + new URL(/<([^>]+)>/.exec(link)![1]).search
        : undefined;
    }
    expect(seen).toEqual([...made].reverse());
  });

  it.each([
    ["limit=0", "limit: must be a whole number from 1 to 100"],
    ["limit=101", "limit: must be a whole number from 1 to 100"],
    ["offset=-1", "offset: must be a whole number from 0 to 100000000"],
    ["search=", "search: must not be empty"],
    ["sort=name", "sort: unknown query parameter"],
    ["count=maybe", "count: must be true or false"],
  ])("refuses %s naming the parameter", async (query, error) => {
    const r = await get(`/v1/customers?${query}`);
    expect(r.status).toBe(400);
    expect(r.json.errors).toContain(error);
  });

  it("answers 404 for a customer that does not exist and 400 for an id that is not one", async () => {
    expect((await get("/v1/customers/999999999")).status).toBe(404);
    const bad = await get("/v1/customers/abc");
    expect(bad.status).toBe(400);
    expect(bad.json.errors.join()).toMatch(/customer_id/);
  });

  it("needs orders:read; a key with other scopes is refused", async () => {
    const c = await shopper(1, 1);
    const reader = await secret(["orders:read"]);
    expect((await get(`/v1/customers/${c.id}`, reader)).status).toBe(200);
    for (const scopes of [["products:read"], ["orders:write"], ["webhooks", "keys"]]) {
      const other = await secret(scopes);
      const list = await get("/v1/customers", other);
      expect(list.status).toBe(403);
      expect(list.json.error).toBe("this key lacks the scope orders:read");
      expect((await get(`/v1/customers/${c.id}`, other)).status).toBe(403);
    }
  });

  it("is never reachable with a publishable key, whatever it sends alongside", async () => {
    const c = await shopper(1, 1);
    const pk = (await post("/v1/keys", { name: uid("pk"), type: "publishable", allowed_origins: [SHOP] })).json
      .key as string;
    for (const path of ["/v1/customers", `/v1/customers/${c.id}`, `/v1/customers?search=${c.email}`]) {
      const r = await get(path, { headers: { authorization: "", "x-publishable-key": pk, origin: SHOP } });
      expect(r.status, path).toBe(403);
      expect(r.json.error).toBe("a publishable key may not call this route");
      expect(r.text).not.toContain(c.email);
    }
  });

  it("spend is the sum of the totals of the orders not cancelled, for any prices and cancellations", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ cents: fc.integer({ min: 0, max: 99_999 }), cancel: fc.boolean() }), {
          minLength: 1,
          maxLength: 4,
        }),
        async (draws) => {
          const email = `${uid("p")}@example.com`;
          let spent = 0;
          for (const d of draws) {
            const sku = uid();
            await createProduct({ sku, price: d.cents / 100, stock: 10 });
            const id = await order(sku, { email });
            if (d.cancel) await put("/v1/orders", [{ order_id: id, status: "cancelled" }]);
            else spent += d.cents;
          }
          const [row] = (await get(`/v1/customers?search=${encodeURIComponent(email)}`)).json.customers;
          expect(row.orders_count).toBe(draws.length);
          expect(Math.round(row.total_spent * 100)).toBe(spent);
        },
      ),
      { numRuns: 8 },
    );
  });
});
