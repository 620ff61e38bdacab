import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createProduct, get, post, uid } from "./helpers";

// A storefront trying to state a payment (docs/storefront.md, "Storefront orders"): a publishable
// key's order is in the store's currency, and it records no payment method, transaction or log.
// Each refusal is a 400 naming the field, with nothing written; secret keys keep every field.

let address = 0;

async function publishable() {
  const r = await post("/v1/keys", { name: uid("pk"), type: "publishable", allowed_origins: ["https://shop.example"] });
  expect(r.status, r.text).toBe(201);
  return r.json.key as string;
}
const send = (key: string, body: Record<string, unknown>, vars: Record<string, string> = {}) =>
  post("/v1/orders", [{ order_id: "create", ...body }], {
    headers: { authorization: "", "x-publishable-key": key, "cf-connecting-ip": `203.0.113.${++address}` },
    cf: { colo: "ARN" },
    env: vars,
  });
const orderCount = async () => (await env.DB.prepare("SELECT count(*) AS n FROM orders").first<{ n: number }>())?.n;
const CURRENCY = "payment.currency: a publishable key's order is in the store's currency (SEK)";
const CODE = "payment.currency: must be a three-letter currency code";
const NO_PAYMENT = "a publishable key cannot record a payment";

describe("a storefront stating a payment", () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ["another currency", { currency: "JPY" }, [CURRENCY]],
    // As for every key, what is no currency code is also told so.
    ["a currency that is no currency", { currency: "kronor" }, [CURRENCY, CODE]],
    ["a currency of the wrong type", { currency: 752 }, [CURRENCY, CODE]],
    ["a null currency, as every key is", { currency: null }, [CODE]],
    ["a payment method", { method: "invoice" }, [`payment.method: ${NO_PAYMENT}`]],
    ["a transaction", { transaction_id: "tx-1" }, [`payment.transaction_id: ${NO_PAYMENT}`]],
    ["a payment log", { log: "captured OK" }, [`payment.log: ${NO_PAYMENT}`]],
    ["an empty method", { method: "" }, [`payment.method: ${NO_PAYMENT}`]],
    [
      "all of them",
      { currency: "USD", method: "card", transaction_id: "tx-2", log: "captured OK" },
      [
        CURRENCY,
        `payment.method: ${NO_PAYMENT}`,
        `payment.transaction_id: ${NO_PAYMENT}`,
        `payment.log: ${NO_PAYMENT}`,
      ],
    ],
  ])("is refused %s, naming the field, and nothing is written", async (_, payment, errors) => {
    const key = await publishable();
    const sku = uid("PAY");
    const p = await createProduct({ sku, price: 178, stock: 5 });
    const before = await orderCount();
    const r = await send(key, { products: [{ sku, qty: 1 }], payment });
    expect(r.status, r.text).toBe(400);
    expect(r.json.results.create_1).toEqual({ success: false, errors, notices: [] });
    expect(await orderCount()).toBe(before);
    expect((await get(`/v1/products/${p.product_id}`)).json.stock).toBe(5);
  });

  it.each<[string, unknown]>([
    ["the store's currency", "SEK"],
    ["in lower case", "sek"],
    ["with spaces around", " Sek "],
    ["blank (none given)", ""],
  ])("is granted %s: the wish matches, so the order is in SEK", async (_, currency) => {
    const key = await publishable();
    const sku = uid("PAY");
    await createProduct({ sku, price: 178, stock: 5 });
    const r = await send(key, { products: [{ sku, qty: 1 }], payment: { currency } });
    expect(r.status, r.text).toBe(200);
    const created = r.json.results.create_1;
    expect([created.currency, created.total, created.notices]).toEqual(["SEK", 178, []]);
    const stored = await get(`/v1/orders/${created.order_id}`);
    expect(stored.json.currency).toBe("SEK");
    expect(stored.json.payment).toMatchObject({ method: null, transaction_id: null, log: null });
  });

  it("is held to the store's DEFAULT_CURRENCY, whatever it is", async () => {
    const key = await publishable();
    const sku = uid("PAY");
    await createProduct({ sku, price: 10, stock: 5 });
    const vars = { DEFAULT_CURRENCY: "EUR" };
    const refused = await send(key, { products: [{ sku, qty: 1 }], payment: { currency: "SEK" } }, vars);
    expect(refused.json.results.create_1.errors).toEqual([
      "payment.currency: a publishable key's order is in the store's currency (EUR)",
    ]);
    const ok = await send(key, { products: [{ sku, qty: 1 }], payment: { currency: "eur" } }, vars);
    expect(ok.json.results.create_1.currency).toBe("EUR");
  });

  it("while a secret key (the payment provider's server, an integration) keeps every field", async () => {
    const sku = uid("PAY");
    await createProduct({ sku, price: 178, stock: 5 });
    const payment = { currency: "JPY", method: "card", transaction_id: "tx-9", log: "captured OK" };
    const r = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }], payment }]);
    expect(r.status, r.text).toBe(200);
    const stored = await get(`/v1/orders/${r.json.results.create_1.order_id}`);
    expect(stored.json.currency).toBe("JPY");
    expect(stored.json.payment).toMatchObject({ method: "card", transaction_id: "tx-9", log: "captured OK" });
  });
});
