import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import orderDetails from "./fixtures/modelled-order-details.json";
import orderList from "./fixtures/modelled-order-list.json";
import productCount from "./fixtures/modelled-product-count.json";
import productDetails from "./fixtures/modelled-product-details.json";
import productList from "./fixtures/modelled-product-list.json";
import { createProduct, get, post, uid } from "./helpers";

// The modelled reads' answers against fixtures written from the modelled API's documentation
// (test/fixtures/README.md): the same keys at every level and the same JSON type for every field
// (a string where it sends a string, a number or boolean where it sends one). Values differ.

type Shape = string | Shape[] | { [key: string]: Shape };

/** Keys and JSON types, recursively; an array by the shape of its elements (all alike). */
function shape(v: unknown): Shape {
  if (v === null) return "null";
  if (Array.isArray(v)) {
    const shapes = v.map(shape);
    for (const s of shapes) expect(s).toEqual(shapes[0]);
    return shapes.length ? [shapes[0]] : [];
  }
  if (typeof v === "object") {
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => [k, shape(x)]),
    );
  }
  return typeof v;
}

/** Full answers: a product with a variant and an image, an order of that variant, paid. */
async function scene() {
  const sku = uid("SHAPE");
  const p = await createProduct({
    sku,
    title: "VITA Ljus lampskärm",
    price: 899,
    description: "<p>Lampskärm</p>",
    images: [{ url: "https://example.com/lamp.jpg" }],
    categories: [["Belysning", "Lampskärmar"]],
    variants: {
      add: [{ variant_option1_name: "Färg", variant_option1_value: 'Grön " 32 size', sku: `${sku}-G`, qty: 5 }],
    },
    disable_minusqty: 1,
  });
  const r = await post("/v1/orders", [
    {
      order_id: "create",
      customer: {
        type: "consumer",
        email: `${uid("john").toLowerCase()}@example.com`,
        phone: "+46701234567",
        billing_details: {
          firstname: "John",
          lastname: "Doe",
          address: "Storgatan 1",
          city: "Stockholm",
          country: "SE",
        },
      },
      payment: { method: "invoice", transaction_id: "tx-1001" },
      shipping: { id: 1, name: "Postal service", price: 49 },
      products: [{ sku: `${sku}-G`, qty: 1 }],
    },
  ]);
  const orderId = r.json.results.create_1.order_id as number;
  await env.DB.prepare("UPDATE orders SET status = 'paid', date_paid = ?1, status_date = ?1 WHERE id = ?2")
    .bind(Date.now(), orderId)
    .run();
  return { productId: p.product_id as number, orderId };
}

describe("modelled answers have the documented keys and JSON types", () => {
  it("products: list, lookup with include_details, search, count", async () => {
    const { productId } = await scene();
    const list = (await get(`/v1/products?limit=1&offset=0`)).json;
    expect(list).toHaveLength(1);
    expect(shape(list)).toEqual(shape(productList));
    const one = (await get(`/v1/products?product_id=${productId}&include_details=true`)).json;
    expect(shape(one)).toEqual(shape(productDetails));
    const found = (await get("/v1/products?search=VITA&include_details=true")).json;
    expect(shape(found)).toEqual(shape([productDetails]));
    expect(shape((await get("/v1/products?search=VITA")).json)).toEqual(shape(productList));
    expect(shape((await get("/v1/products/count")).json)).toEqual(shape(productCount));
  });

  it("orders: list, with include_details, lookup by order_id", async () => {
    const { orderId } = await scene();
    expect(shape((await get("/v1/orders?limit=1")).json)).toEqual(shape(orderList));
    expect(shape((await get("/v1/orders?limit=1&include_details=true")).json)).toEqual(shape(orderDetails));
    expect(shape((await get(`/v1/orders?order_id=${orderId}`)).json)).toEqual(shape(orderDetails));
  });

  it("a line of a product without variants has variant_id null, the only null in the shapes", async () => {
    const sku = uid("PLAIN");
    await createProduct({ sku, stock: 3 });
    const r = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }]);
    const [o] = (await get(`/v1/orders?order_id=${r.json.results.create_1.order_id}`)).json;
    expect(o.products[0].variant_id).toBeNull();
    expect(JSON.stringify({ ...o, products: [] })).not.toContain("null");
    const p = (await get(`/v1/products?sku=${sku}&include_details=true`)).json;
    expect(JSON.stringify(p)).not.toContain("null");
  });
});
