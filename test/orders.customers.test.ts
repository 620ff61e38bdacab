import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { PHONE_ERROR, PHONE_NOTICE } from "../src/orders/schema";
import { createProduct, get, post, uid } from "./helpers";

// Customers (src/docs/orders.md, "Orders"): found by e-mail case-insensitively or created, inside the write batch.

const customerRow = (email: string) =>
  env.DB.prepare("SELECT * FROM customers WHERE email_key = ?").bind(email.toLowerCase()).first<any>();

async function orderFor(sku: string, customer?: Record<string, unknown>) {
  const r = await post("/v1/orders", [{ order_id: "create", customer, products: [{ sku, qty: 1 }] }]);
  expect(r.status).toBe(200);
  return (await get(`/v1/orders/${r.json.results.create_1.order_id}`)).json;
}

describe("customers", () => {
  it("finds the customer by e-mail whatever its case and updates details from the latest order", async () => {
    const sku = uid();
    await createProduct({ sku, stock: 100 });
    const email = `${uid("anna")}@Example.com`;
    const a = await orderFor(sku, {
      email,
      type: "consumer",
      phone: "+46701234567",
      newsletter_subscribe: true,
      billing_details: { city: "Lund", country: "se" },
    });
    const b = await orderFor(sku, {
      email: email.toUpperCase(),
      phone: "+46 8 123 456 78",
      newsletter_subscribe: false,
    });
    expect(b.customer.customer_id).toBe(a.customer.customer_id);
    const row = await customerRow(email);
    expect(row).toMatchObject({
      id: a.customer.customer_id,
      email: email.toUpperCase(),
      phone: "+46812345678",
      type: "consumer",
      // false never unsubscribes an earlier subscription
      newsletter: 1,
      has_login: 0,
    });
    expect(JSON.parse(row.billing_details)).toEqual({ city: "Lund", country: "SE" });
    // The order keeps its own copy of the address, whatever happens to the customer later.
    expect(a.customer.billing_details).toEqual({ city: "Lund", country: "SE" });
    expect(b.customer.billing_details).toBeNull();
  });

  it("login_create true marks an account; later false leaves it", async () => {
    const sku = uid();
    await createProduct({ sku, stock: 100 });
    const email = `${uid("bo")}@example.com`;
    await orderFor(sku, { email, login_create: "1" });
    await orderFor(sku, { email, login_create: false });
    expect(await customerRow(email)).toMatchObject({ has_login: 1, newsletter: 0 });
  });

  it("a guest order without e-mail links to no customer and creates none", async () => {
    const sku = uid();
    await createProduct({ sku, stock: 100 });
    const before = await env.DB.prepare("SELECT count(*) AS n FROM customers").first<{ n: number }>();
    const o = await orderFor(sku, { phone: "+46701234567", billing_details: { firstname: "Guest" } });
    expect(o.customer).toMatchObject({ customer_id: null, email: null, phone: "+46701234567" });
    const after = await env.DB.prepare("SELECT count(*) AS n FROM customers").first<{ n: number }>();
    expect(after?.n).toBe(before?.n);
  });

  it.each([
    ["+46 70-765 43 21", "+46707654321", false],
    ["(+46) 70.765.43.21", "+46707654321", false],
    ["070-765 43 21", "070-765 43 21", true],
    ["  08 123 456 ", "08 123 456", true],
    ["070-765 43 21 ext. 12", "070-765 43 21 ext. 12", true],
    ["+1 (555) 123-4567 x89", "+1 (555) 123-4567 x89", true],
    ["030/123 45 #7", "030/123 45 #7", true],
    ["+49 30/1234567", "+49301234567", false],
  ])("keeps the phone %j as %j (a notice when not international: %s)", async (sent, stored, notice) => {
    const sku = uid();
    await createProduct({ sku, stock: 10 });
    const r = await post("/v1/orders", [
      { order_id: "create", customer: { phone: sent }, products: [{ sku, qty: 1 }] },
    ]);
    expect(r.status, r.text).toBe(200);
    const res = r.json.results.create_1;
    expect(res.notices.includes(PHONE_NOTICE)).toBe(notice);
    expect((await get(`/v1/orders/${res.order_id}`)).json.customer.phone).toBe(stored);
  });

  it.each([["12ab"], ["call me"], ["070-765 43 21 ask for Ann"], ["ext. 12"], ["+46 70[123]"]])(
    "refuses the phone %j naming customer.phone, and writes nothing",
    async (sent) => {
      const sku = uid();
      await createProduct({ sku, stock: 10 });
      const r = await post("/v1/orders", [
        { order_id: "create", customer: { phone: sent }, products: [{ sku, qty: 1 }] },
      ]);
      expect(r.status, r.text).toBe(400);
      expect(r.json.results.create_1.errors).toEqual([`customer.phone: ${PHONE_ERROR}`]);
      const n = await env.DB.prepare("SELECT count(*) AS n FROM orders WHERE phone = ?1").bind(sent).first<any>();
      expect(n.n).toBe(0);
    },
  );

  it("two orders of one request with one e-mail share one customer", async () => {
    const sku = uid();
    await createProduct({ sku, stock: 100 });
    const email = `${uid("cy")}@example.com`;
    const r = await post("/v1/orders", [
      { order_id: "create", customer: { email }, products: [{ sku, qty: 1 }] },
      {
        order_id: "create",
        customer: { email: email.toUpperCase(), newsletter_subscribe: 1 },
        products: [{ sku, qty: 1 }],
      },
    ]);
    const ids = await Promise.all(
      [r.json.results.create_1, r.json.results.create_2].map(
        async (x) => (await get(`/v1/orders/${x.order_id}`)).json.customer.customer_id,
      ),
    );
    expect(ids[0]).toBe(ids[1]);
    expect(await customerRow(email)).toMatchObject({ id: ids[0], newsletter: 1 });
  });
});
