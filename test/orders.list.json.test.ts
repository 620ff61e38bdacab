import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createProduct, get, post, uid } from "./helpers";
import { modelledOrder, modelledOrderDetails, type Row } from "./modelled-orders-reference";

// GET /v1/orders answers the JSON text SQLite builds (src/orders/modelled-json.ts), never parsed by
// the Worker. It must be exactly what the reference presenters (modelled-orders-reference.ts) make
// of D1's own rows: checked on random orders, with the values that could travel differently
// (empty and missing names, a company, non-ASCII and escaped text, shipping to another address,
// discounts, statuses and their dates, lines with and without options).

const text = fc.oneof(
  fc.constant(""),
  fc.string({ minLength: 1, maxLength: 10 }).filter((t) => t.trim() === t && t.trim() !== ""),
  fc.constantFrom('quote " and \\ backslash', "back`tick", "åäö ✓ 𝄞", "Null", "0"),
);
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const address = fc.record(
  {
    firstname: maybe(text),
    lastname: maybe(text),
    company_name: maybe(text),
    address: maybe(text),
    city: maybe(text),
    zipcode: maybe(fc.constantFrom("11122", "SW1A 1AA")),
    country: fc.constantFrom("SE", "NO"),
  },
  { requiredKeys: ["country"] },
);

const orderArb = fc.record({
  billing: address,
  shipping: maybe(address),
  phone: maybe(fc.constantFrom("+46701234567", "070-765 43 21")),
  note: maybe(text),
  status: fc.constantFrom("unpaid", "paid", "done", "cancelled"),
  lines: fc.array(fc.record({ variant: fc.boolean(), qty: fc.integer({ min: 1, max: 3 }) }), {
    minLength: 1,
    maxLength: 4,
  }),
});

async function reference(id: number) {
  const [os, ls] = await env.DB.batch<Row>([
    env.DB.prepare("SELECT * FROM orders WHERE id = ?1").bind(id),
    env.DB.prepare("SELECT rowid AS line_id, * FROM order_lines WHERE order_id = ?1 ORDER BY position").bind(id),
  ]);
  return { details: modelledOrderDetails(os.results[0], ls.results), plain: modelledOrder(os.results[0], ls.results) };
}

describe("GET /v1/orders: orders built as JSON text by SQLite", () => {
  it("present exactly as the reference does from D1's rows (differential)", async () => {
    const plain = uid("PL");
    const sized = uid("SZ");
    await createProduct({ sku: plain, stock: 100_000, price: 99.5 });
    await post("/v1/products", {
      title: "Sized",
      price: 12,
      variants: {
        add: [
          {
            sku: sized,
            variant_option1_name: "Size",
            variant_option1_value: "M",
            variant_option2_name: "Colour",
            variant_option2_value: "röd",
            qty: 100_000,
          },
        ],
      },
    });
    await fc.assert(
      fc.asyncProperty(orderArb, async (spec) => {
        const r = await post("/v1/orders", [
          {
            order_id: "create",
            customer: {
              email: `${uid("c").toLowerCase()}@example.com`,
              phone: spec.phone,
              billing_details: spec.billing,
              shipping_details: spec.shipping,
            },
            note: spec.note,
            shipping: { id: 3, name: "Postal", price: 49 },
            products: spec.lines.map((l) => ({ sku: l.variant ? sized : plain, qty: l.qty })),
          },
        ]);
        expect(r.status, r.text).toBe(200);
        const id = r.json.results.create_1.order_id as number;
        const at = 1_700_000_000_123;
        await env.DB.prepare(
          "UPDATE orders SET status = ?2, date_paid = iif(?2 IN ('paid', 'done'), ?3, NULL), status_date = iif(?2 = 'unpaid', NULL, ?3 + 5000) WHERE id = ?1",
        )
          .bind(id, spec.status, at)
          .run();
        const want = await reference(id);
        const one = await get(`/v1/orders?order_id=${id}`);
        expect(one.status).toBe(200);
        expect(one.json).toEqual([want.details]);
        const page = await get(`/v1/orders?limit=1&offset=0&sort_order=desc`);
        expect(page.json).toEqual([want.plain]);
      }),
      { numRuns: 60 },
    );
  });
});
