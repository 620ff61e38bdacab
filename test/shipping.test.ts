import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { methodList, methodOut } from "../src/shipping/openapi";
import { call, createProduct, get, post, uid } from "./helpers";

// /v1/shipping-methods (src/docs/orders.md, "Shipping methods"): managed by secret keys with
// orders:write, listed to storefronts (visible ones only), and what a storefront's order pays for
// shipping: the method's price, free from free_over, only to its countries.

const SHOP = "https://shop.example";
const patch = (id: number, body: unknown, init = {}) => call("PATCH", `/v1/shipping-methods/${id}`, { ...init, body });
const conforms = (schema: z.ZodType, value: unknown) => expect(schema.safeParse(value).error).toBeUndefined();

async function publishable() {
  const r = await post("/v1/keys", { name: uid("pk"), type: "publishable", allowed_origins: [SHOP] });
  return { headers: { authorization: "", "x-publishable-key": r.json.key as string } };
}
let visitor = 0;
const storefrontOrder = (pk: { headers: Record<string, string> }, body: Record<string, unknown>) =>
  post("/v1/orders", [{ order_id: "create", ...body }], {
    headers: { ...pk.headers, "cf-connecting-ip": `192.0.2.${++visitor}` },
    cf: { colo: "ARN" },
  });

describe("shipping methods", () => {
  it("are created, listed, changed and deleted by a secret key", async () => {
    const r = await post("/v1/shipping-methods", {
      name: "Postnord",
      price: "49.50",
      free_over: 500,
      countries: ["se", "NO"],
    });
    expect(r.status, r.text).toBe(201);
    conforms(methodOut.extend({}), r.json);
    expect(r.json).toMatchObject({
      name: "Postnord",
      price: 49.5,
      free_over: 500,
      countries: ["SE", "NO"],
      visible: true,
    });
    const id = r.json.id as number;

    const changed = await patch(id, { price: 59, free_over: null, visible: false });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json).toMatchObject({ name: "Postnord", price: 59, free_over: null, visible: false });

    const list = await get("/v1/shipping-methods");
    conforms(methodList, list.json);
    expect(list.json.shipping_methods.map((m: { id: number }) => m.id)).toContain(id);

    expect((await call("DELETE", `/v1/shipping-methods/${id}`)).status).toBe(204);
    expect((await call("DELETE", `/v1/shipping-methods/${id}`)).status).toBe(404);
    expect((await patch(id, { price: 1 })).status).toBe(404);
  });

  it.each([
    [{ price: 10 }, "name: is required"],
    [{ name: "x" }, "price: is required"],
    [{ name: "x", price: -1 }, "price: must not be negative"],
    [{ name: "x", price: 1, free_over: "lots" }, "free_over: must be an amount of money"],
    [{ name: "x", price: 1, countries: ["Sweden"] }, "countries[0]: must be a two-letter country code"],
    [{ name: "x", price: 1, countries: ["SE", "se"] }, "countries: must not repeat a country"],
    [{ name: "x", price: 1, visible: "maybe" }, "visible: must be 1, 0, true or false"],
  ])("refuses %j with 400 naming the field", async (body, error) => {
    const r = await post("/v1/shipping-methods", body);
    expect(r.status).toBe(400);
    expect(r.json.errors.join("\n")).toContain(error);
  });

  it("are managed with orders:write and read with orders:read", async () => {
    const reader = await post("/v1/keys", { name: uid("r"), type: "secret", scopes: ["orders:read"] });
    const auth = { headers: { authorization: `Bearer ${reader.json.key}` } };
    expect((await get("/v1/shipping-methods", auth)).status).toBe(200);
    const r = await post("/v1/shipping-methods", { name: "x", price: 1 }, auth);
    expect(r.status).toBe(403);
    expect(r.json.error).toBe("this key lacks the scope orders:write");
  });

  it("are listed to a storefront visible only, and filtered by country", async () => {
    const pk = await publishable();
    const shown = (await post("/v1/shipping-methods", { name: uid("SE"), price: 49, countries: ["SE"] })).json;
    const anywhere = (await post("/v1/shipping-methods", { name: uid("ANY"), price: 99 })).json;
    const hidden = (await post("/v1/shipping-methods", { name: uid("HID"), price: 0, visible: false })).json;
    const ids = async (q: string, init = pk) =>
      (await get(`/v1/shipping-methods${q}`, init)).json.shipping_methods.map((m: { id: number }) => m.id);
    const all = await ids("");
    expect(all).toEqual(expect.arrayContaining([shown.id, anywhere.id]));
    expect(all).not.toContain(hidden.id);
    const toNorway = await ids("?country=no");
    expect(toNorway).toContain(anywhere.id);
    expect(toNorway).not.toContain(shown.id);
    expect((await get("/v1/shipping-methods?country=Norway", pk)).status).toBe(400);
    // A storefront may not manage them.
    expect((await post("/v1/shipping-methods", { name: "x", price: 0 }, pk)).status).toBe(403);
    for (const m of [shown, anywhere, hidden]) await call("DELETE", `/v1/shipping-methods/${m.id}`);
  });

  it("price a storefront's order: the method's price, free over its amount, to its countries only", async () => {
    const pk = await publishable();
    const sku = uid("SHIP");
    await createProduct({ sku, price: 100, stock: 100 });
    const m = (await post("/v1/shipping-methods", { name: "Postnord", price: 49, free_over: 300, countries: ["SE"] }))
      .json;
    const hidden = (await post("/v1/shipping-methods", { name: "Staff", price: 0, visible: 0 })).json;
    const to = (country?: string) => (country ? { customer: { shipping_details: { country } } } : {});
    const cases: [Record<string, unknown>, number, Record<string, unknown>][] = [
      [{ products: [{ sku, qty: 1 }], shipping: { id: m.id }, ...to("se") }, 200, { shipping: 49, total: 149 }],
      [{ products: [{ sku, qty: 3 }], shipping: { id: m.id }, ...to("SE") }, 200, { shipping: 0, total: 300 }],
      [
        { products: [{ sku, qty: 1 }], shipping: { id: m.id }, ...to("NO") },
        400,
        { errors: [`shipping.id: shipping method ${m.id} does not ship to NO`] },
      ],
      [
        { products: [{ sku, qty: 1 }], shipping: { id: m.id } },
        400,
        { errors: [`shipping.id: shipping method ${m.id} ships only to SE: give customer.shipping_details.country`] },
      ],
      [
        { products: [{ sku, qty: 1 }], shipping: { id: hidden.id } },
        400,
        { errors: [`shipping.id: no shipping method ${hidden.id}`] },
      ],
      [
        { products: [{ sku, qty: 1 }] },
        400,
        { errors: ["shipping.id: is required: name one of the store's shipping methods (GET /v1/shipping-methods)"] },
      ],
    ];
    for (const [body, status, want] of cases) {
      const r = await storefrontOrder(pk, body);
      expect(r.status, r.text).toBe(status);
      expect(r.json.results.create_1).toMatchObject(want);
    }
    // A secret key's order still gives its own shipping, as integrations do.
    const s = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }], shipping: { price: 5 } }]);
    expect(s.json.results.create_1).toMatchObject({ success: true, shipping: 5, total: 105 });
    for (const x of [m, hidden]) await call("DELETE", `/v1/shipping-methods/${x.id}`);
  });
});
