import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { garmentVariants, SIZES } from "./fixtures/garments.mjs";
import { createProduct, get, post, put, uid } from "./helpers";
import { modelledProductDetails, type Row } from "./modelled-reference";

// The request sequences of the modelled API's public clients (docs/modelled-reads.md, "Modelled reads"), replayed
// against this service, with each answer read the way that client reads it: the fields it takes
// and the JSON types its parser accepts. Where the modelled API's documentation and its clients
// disagree, the clients win: lists and lookups answer bare, as the C# SDK and the spider read them.
// At real sizes: 16 orders of 100 lines; 46 orders of which 24 have 500 lines (past 2 MiB a page);
// a catalogue with a 2,048-variant product, and one with two of them in a window of 100.

type Json = Record<string, any>;
type Kind = "string" | "number" | "boolean" | "object" | "array" | "numeric-string" | "int";

/** What a client's parser demands of a field; throws with the field's path when it would fail. */
function read(obj: Json, fields: Record<string, Kind>, at: string) {
  for (const [name, kind] of Object.entries(fields)) {
    const v = obj[name];
    const path = `${at}.${name}`;
    if (kind === "array") expect(Array.isArray(v), path).toBe(true);
    else if (kind === "object") expect(v !== null && typeof v === "object" && !Array.isArray(v), path).toBe(true);
    else if (kind === "numeric-string") expect(v, path).toMatch(/^-?\d+(\.\d+)?$/);
    else if (kind === "int") expect(Number.isInteger(v), path).toBe(true);
    else expect(typeof v, path).toBe(kind);
  }
}

// The C# SDK's Product and Variant classes: strings where it declares string (it accepts JSON
// numbers there too, but these are the documented types), stock an int, a variant's
// disable_minusqty a bool, images keyed by position.
const SDK_PRODUCT: Record<string, Kind> = {
  id: "numeric-string",
  sku: "string",
  title: "string",
  visible: "numeric-string",
  price: "numeric-string",
  qty: "numeric-string",
  stock: "int",
  tax_rate: "numeric-string",
  disable_minusqty: "numeric-string",
  qty_location: "string",
  supplier_name: "string",
  supplier_sku: "string",
  datafield_1: "string",
  description: "string",
  images: "object",
  variants: "array",
};
const SDK_VARIANT: Record<string, Kind> = {
  id: "numeric-string",
  product_id: "numeric-string",
  sku: "string",
  price: "numeric-string",
  qty: "numeric-string",
  disable_minusqty: "boolean",
  values: "array",
};
// The SDK's Order: strings for money and status; lines' ids and qty arrive as JSON numbers, which
// its JSON library reads into its string fields.
const SDK_ORDER: Record<string, Kind> = {
  order_id: "numeric-string",
  date_created: "string",
  date_paid: "string",
  status: "numeric-string",
  total_amount: "numeric-string",
  total_pay_amount: "numeric-string",
  items_amount: "numeric-string",
  shipping_amount: "numeric-string",
  discount_amount: "numeric-string",
  tax_amount: "numeric-string",
  currency: "string",
  is_taxfree: "boolean",
  is_taxontop: "boolean",
  paymethod: "object",
  customer: "object",
  products: "array",
};
// An order of a list without details: what statistics scripts read.
const LIST_ORDER: Record<string, Kind> = {
  order_id: "numeric-string",
  date_created: "string",
  status: "numeric-string",
  total_amount: "numeric-string",
  products: "array",
};
const SDK_LINE: Record<string, Kind> = {
  product_id: "int",
  title: "string",
  price: "numeric-string",
  qty: "int",
  sku: "string",
  variant: "string",
};

async function catalog() {
  const sku = uid("SDK");
  const p = await createProduct({
    sku,
    title: "SDK lamp",
    price: 899,
    images: [{ url: "https://example.com/1.jpg", alttext: "one" }],
    variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "L", sku: `${sku}-L`, qty: 5 }] },
  });
  return { sku, id: p.product_id as number, variantSku: `${sku}-L` };
}

async function order(variantSku: string, email: string) {
  const r = await post("/v1/orders", [
    {
      order_id: "create",
      customer: { email, billing_details: { firstname: "Sam", lastname: "Sdk", city: "Malmö", country: "SE" } },
      payment: { method: "card", transaction_id: uid("tx") },
      shipping: { id: 1, name: "Postal", price: 49 },
      products: [{ sku: variantSku, qty: 2 }],
    },
  ]);
  expect(r.status).toBe(200);
  return r.json.results.create_1.order_id as number;
}

describe("the C# SDK (QuickbutikSharp)", () => {
  it("reads one product: product_id=N&include_details=true&limit=1", async () => {
    const { id, variantSku } = await catalog();
    const r = await get(`/v1/products?product_id=${id}&include_details=true&limit=1`);
    expect(r.status).toBe(200);
    const product = r.json;
    read(product, SDK_PRODUCT, "product");
    expect(product.id).toBe(String(id));
    expect(product.images["1"]).toEqual({ image: "https://example.com/1.jpg", alttext: "one" });
    read(product.variants[0], SDK_VARIANT, "product.variants[0]");
    expect(product.variants[0].sku).toBe(variantSku);
    expect(product.variants[0].values[0]).toMatchObject({ val: "L" });
    // Not found: the SDK reads `code` of the error body to tell a 404.
    const missing = await get("/v1/products?product_id=99999999&include_details=true&limit=1");
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe(404);
  });

  it("updates inventory: PUT /v1/products {sku, stock}, then reads the stock back", async () => {
    const sku = uid("INV");
    const p = await createProduct({ sku, stock: 3 });
    const r = await put("/v1/products", { sku, stock: 17 });
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(1);
    const back = (await get(`/v1/products?product_id=${p.product_id}&include_details=true&limit=1`)).json;
    expect(back.stock).toBe(17);
    expect(back.qty).toBe("17");
  });

  it("updates inventory as the SDK serialises it: an object keyed by its class name", async () => {
    const sku = uid("INV");
    const p = await createProduct({ sku, stock: 3 });
    // The SDK's PUT body is a dictionary keyed by its request class, not a plain array.
    const r = await put("/v1/products", { ProductUpdate: { sku, stock: 9 } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ success: 1, errors: [] });
    const back = (await get(`/v1/products?product_id=${p.product_id}&include_details=true&limit=1`)).json;
    expect(back.qty).toBe("9");
  });

  it("counts products: the count as a string it reads into an int", async () => {
    await catalog();
    const r = await get("/v1/products/count");
    expect(r.status).toBe(200);
    expect(r.json.count).toMatch(/^\d+$/);
    expect(Number.parseInt(r.json.count, 10)).toBeGreaterThan(0);
  });

  it("reads one order: order_id=N, element [0] with products, customer and total_pay_amount", async () => {
    const { variantSku } = await catalog();
    const orderId = await order(variantSku, "sam@example.com");
    const r = await get(`/v1/orders?order_id=${orderId}`);
    expect(r.status).toBe(200);
    const [o] = r.json;
    read(o, SDK_ORDER, "[0]");
    read(o.products[0], SDK_LINE, "[0].products[0]");
    read(o.customer, { email: "string", full_name: "string", city: "string", shipping_details: "object" }, "customer");
    expect(o).toMatchObject({ order_id: String(orderId), total_pay_amount: "1847.00", status: "-1" });
    expect(o.customer).toMatchObject({ email: "sam@example.com", full_name: "Sam Sdk", city: "Malmö" });
  });

  it("lists paid orders since a time: status=paid&from_date_paid=<UNIX seconds>", async () => {
    const { variantSku } = await catalog();
    const before = await order(variantSku, "early@example.com");
    const after = await order(variantSku, "late@example.com");
    const since = 1_750_000_000;
    for (const [id, at] of [
      [before, since - 60],
      [after, since + 60],
    ]) {
      await env.DB.prepare("UPDATE orders SET status = 'paid', date_paid = ?1, status_date = ?1 WHERE id = ?2")
        .bind(at * 1000, id)
        .run();
    }
    const r = await get(`/v1/orders?status=paid&from_date_paid=${since}&include_details=true`);
    expect(r.status).toBe(200);
    expect(r.json.map((o: Json) => o.order_id)).toEqual([String(after)]);
    read(r.json[0], SDK_ORDER, "[0]");
    expect(r.json[0]).toMatchObject({ status: "1", date_paid: "2025-06-15 15:07:40" });
    // Nothing matched: 200 and an empty list (the SDK turned the old 404 into the same).
    const none = await get(`/v1/orders?status=done&from_date_paid=${since}`);
    expect(none.status).toBe(200);
    expect(none.json).toEqual([]);
  });

  it("changes an order's status as the SDK sends it: order_id as a number, flags as booleans", async () => {
    const { variantSku } = await catalog();
    const orderId = await order(variantSku, "kim@example.com");
    const r = await put("/v1/orders", {
      OrderUpdate: { order_id: orderId, status: "paid", email_confirmation: false },
    });
    expect(r.status).toBe(200);
    expect(r.json.results.update_1).toMatchObject({ success: true, status: "paid" });
    const [o] = (await get(`/v1/orders?order_id=${orderId}`)).json;
    expect(o.status).toBe("1");
    expect(o.date_paid).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });
});

describe("a paging client: limit=100&offset=N&include_details=true until an empty page", () => {
  it("reads every product once and stops", async () => {
    await catalog();
    await env.DB.prepare(
      `INSERT INTO products (title, price, stock, created_at, updated_at)
       SELECT 'paged ' || value, 1000, value, 0, 0 FROM json_each(?1)`,
    )
      .bind(JSON.stringify(Array.from({ length: 230 }, (_, i) => i)))
      .run();
    const total = Number((await get("/v1/products/count")).json.count);
    const seen = new Set<string>();
    let requests = 0;
    for (let offset = 0; ; offset += 100) {
      const r = await get(`/v1/products?limit=100&offset=${offset}&include_details=true`);
      requests++;
      expect(r.status).toBe(200);
      const page: Json[] = r.json;
      if (!page.length) break;
      for (const p of page) {
        read(p, { id: "numeric-string", title: "string", price: "numeric-string", images: "object" }, "product");
        seen.add(p.id);
      }
      expect(requests).toBeLessThan(20);
    }
    expect(seen.size).toBe(total);
    // Full pages, then the empty page that stops it.
    expect(requests).toBe(Math.ceil(total / 100) + 1);
  });
});

/** A product of 2,048 variants over five options (8 x 4 x 4 x 4 x 4), written straight to D1. */
async function bigProduct(tag: string) {
  const seq = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));
  const [made] = await env.DB.batch<{ id: number }>([
    env.DB.prepare(
      `INSERT INTO products (title, sku, price, option_names, created_at, updated_at)
       VALUES (?1, ?1, 19900, '["Size","Colour","Fit","Cut","Sleeve"]', 0, 0) RETURNING id`,
    ).bind(tag),
  ]);
  const id = made.results[0].id;
  await env.DB.prepare(
    `INSERT INTO variants (product_id, sku, option1_value, option2_value, option3_value, option4_value,
       option5_value, price, qty, position, created_at, updated_at)
     SELECT ?1, ?2 || '-' || j.value, 'S' || (j.value % 8), 'C' || (j.value / 8 % 4), 'F' || (j.value / 32 % 4),
       'K' || (j.value / 128 % 4), 'L' || (j.value / 512), 19900, 1, j.value, 0, 0 FROM json_each(?3) AS j`,
  )
    .bind(id, tag, seq(2048))
    .run();
  return id;
}

describe("a product spider: limit=100&offset=N&include_details=true until a short page, with a 2,048-variant product", () => {
  it("collects every product and every variant, in full pages", async () => {
    const tag = uid("SPIDER");
    const big = await bigProduct(tag);
    await env.DB.prepare(
      `INSERT INTO products (title, price, stock, created_at, updated_at)
       SELECT ?2 || ' ' || value, 1000, value, 0, 0 FROM json_each(?1)`,
    )
      .bind(JSON.stringify(Array.from({ length: 150 }, (_, i) => i)), tag)
      .run();
    const total = Number((await get("/v1/products/count")).json.count);
    const variants = (await env.DB.prepare("SELECT count(*) AS n FROM variants").first<{ n: number }>())?.n;
    const seen = new Map<string, number>();
    const sizes: number[] = [];
    for (let offset = 0; ; offset += 100) {
      const r = await get(`/v1/products?limit=100&offset=${offset}&include_details=true`);
      expect(r.status, r.text.slice(0, 200)).toBe(200);
      const page: Json[] = r.json;
      sizes.push(page.length);
      for (const p of page) {
        read(p, SDK_PRODUCT, "product");
        seen.set(p.id, p.variants.length);
      }
      if (page.length < 100) break;
    }
    expect(seen.size).toBe(total);
    expect(seen.get(String(big))).toBe(2048);
    expect([...seen.values()].reduce((a, b) => a + b, 0)).toBe(variants);
    // Every page full but the last: a short page is the end for this client.
    expect(sizes.slice(0, -1).every((n) => n === 100)).toBe(true);
  });

  it("reads the 2,048-variant product alone as the SDK does, every variant with its five values", async () => {
    const tag = uid("BIG");
    const id = await bigProduct(tag);
    const r = await get(`/v1/products?product_id=${id}&include_details=true&limit=1`);
    expect(r.status).toBe(200);
    read(r.json, SDK_PRODUCT, "product");
    expect(r.json.variants).toHaveLength(2048);
    expect(r.json.qty).toBe("2048");
    for (const v of [r.json.variants[0], r.json.variants[2047]]) read(v, SDK_VARIANT, "variant");
    expect(r.json.variants[2047].values.map((x: Json) => x.val)).toEqual(["S7", "C3", "F3", "K3", "L3"]);
    expect(new Set(r.json.variants.map((v: Json) => v.sku)).size).toBe(2048);
  });
});

// Two garments of 2,048 variants as a shop writes them (test/fixtures/garments.mjs, shared with the
// bench), the window the spider was refused (400) before.
function garment(kind: string, title: string, price: number) {
  return {
    title,
    sku: kind,
    price,
    description: `${title}: garment-dyed, reinforced "shoulder" seams; wash at 30 °C.`,
    images: [{ url: `https://cdn.shop.example/${kind.toLowerCase()}-1.jpg`, alttext: title }],
    categories: [["Clothes", kind === "TSHIRT" ? "T-shirts" : "Hoodies"]],
    variants: { add: garmentVariants(kind, price) },
  };
}

const socks = (tag: string, from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    title: `Everyday socks ${tag} ${from + i}`,
    sku: `${tag}-SOCK-${from + i}`,
    price: 99,
    variants: {
      add: SIZES.slice(0, 1 + (i % 6)).map((size) => ({
        sku: `${tag}-SOCK-${from + i}-${size}`,
        variant_option1_name: "Size",
        variant_option1_value: size,
        qty: 10,
      })),
    },
  }));

/** Every product as D1 holds it, presented by the reference (test/modelled-reference.ts). */
async function storedProducts() {
  const [ps, vs] = await env.DB.batch<Row>([
    env.DB.prepare(
      `SELECT p.*, (SELECT count(*) FROM variants AS v WHERE v.product_id = p.id) AS variant_count,
         (SELECT total(v.qty) FROM variants AS v WHERE v.product_id = p.id) AS variant_qty FROM products AS p`,
    ),
    env.DB.prepare("SELECT * FROM variants ORDER BY product_id, position, id"),
  ]);
  const byProduct = new Map<unknown, Row[]>();
  for (const v of vs.results) byProduct.set(v.product_id, [...(byProduct.get(v.product_id) ?? []), v]);
  return new Map(ps.results.map((p) => [String(p.id), modelledProductDetails(p, byProduct.get(p.id) ?? [])]));
}

describe("a product spider with two 2,048-variant products in one window of 100", () => {
  it("collects every product exactly once with its fields, in full pages, the large window streamed", async () => {
    const tag = uid("WIN");
    // Fill to a whole window, so that the next 100 products are one page of limit=100.
    const count = Number((await get("/v1/products/count")).json.count);
    await env.DB.prepare(
      `INSERT INTO products (title, price, created_at, updated_at) SELECT ?2 || ' fill ' || value, 500, 0, 0
       FROM json_each(?1)`,
    )
      .bind(JSON.stringify(Array.from({ length: (100 - (count % 100)) % 100 }, (_, i) => i)), tag)
      .run();
    const window = Number((await get("/v1/products/count")).json.count);
    expect(window % 100).toBe(0);
    for (const body of [
      socks(tag, 0, 10),
      garment("TSHIRT", `Organic T-shirt Classic ${tag}`, 299),
      socks(tag, 10, 40),
      garment("HOODIE", `Heavyweight Hoodie ${tag}`, 799),
      socks(tag, 50, 48),
    ]) {
      const r = await post("/v1/products", body);
      expect(r.status, r.text.slice(0, 300)).toBe(200);
    }
    const want = await storedProducts();
    const seen = new Map<string, Json>();
    const sizes: number[] = [];
    for (let offset = 0; ; offset += 100) {
      const r = await get(`/v1/products?limit=100&offset=${offset}&include_details=true`);
      expect(r.status, r.text.slice(0, 200)).toBe(200);
      const page: Json[] = r.json;
      sizes.push(page.length);
      if (offset === window) {
        // The window once refused with 400: whole, and streamed (no Content-Length).
        expect(page.filter((p) => p.variants.length === 2048)).toHaveLength(2);
        expect(new TextEncoder().encode(r.text).length).toBeGreaterThan(2 * 1024 * 1024);
        expect(r.headers.get("content-length")).toBeNull();
      }
      for (const p of page) {
        expect(seen.has(p.id), `product ${p.id} twice`).toBe(false);
        seen.set(p.id, p);
        read(p, SDK_PRODUCT, `product ${p.id}`);
        expect(p, `product ${p.id}`).toEqual(want.get(p.id));
      }
      if (page.length < 100) break;
    }
    expect(seen.size).toBe(want.size);
    expect(sizes.slice(0, -1).every((n) => n === 100)).toBe(true);
    const shirt = [...seen.values()].find((p) => p.title === `Organic T-shirt Classic ${tag}`) as Json;
    expect(shirt.variants).toHaveLength(2048);
    expect(new Set(shirt.variants.map((v: Json) => v.sku)).size).toBe(2048);
    expect(shirt.variants[27]).toMatchObject({
      sku: "TSHIRT-ORG-FORGRN-L-REG",
      values: [
        { name: "Size", val: "L" },
        { name: "Colour", val: "Forest green" },
        { name: "Material", val: "Organic cotton" },
        { name: "Fit", val: "Regular" },
      ],
    });
    for (const v of [shirt.variants[0], shirt.variants[2047]]) read(v, SDK_VARIANT, "variant");
  }, 180_000); // two creates of 2,048 variants and six pages, on a loaded 2-core machine
});

describe("order statistics scripts at 16 orders x 100 lines", () => {
  async function sixteenOrders() {
    const tag = uid("STAT");
    const p = await createProduct({
      title: `Stat ${tag}`,
      price: 10,
      variants: {
        add: Array.from({ length: 100 }, (_, i) => ({
          sku: `${tag}-${i}`,
          variant_option1_name: "Size",
          variant_option1_value: `v${i}`,
          qty: 1000,
          price: 10 + i,
        })),
      },
    });
    expect(p.variants).toHaveLength(100);
    const body = Array.from({ length: 16 }, (_, o) => ({
      order_id: "create",
      customer: { email: `stat${o}@example.com`, billing_details: { firstname: "S", lastname: "T", country: "SE" } },
      products: Array.from({ length: 100 }, (_, i) => ({ sku: `${tag}-${i}`, qty: 1 + ((o + i) % 3) })),
    }));
    const r = await post("/v1/orders", body);
    expect(r.status).toBe(200);
    return Object.values(r.json.results).map((x: any) => String(x.order_id));
  }

  it("a plain GET /v1/orders answers all 16 orders with all their lines", async () => {
    const ids = await sixteenOrders();
    const r = await get("/v1/orders?include_details=true");
    expect(r.status).toBe(200);
    expect(r.headers.get("link")).toBeNull();
    const mine = (r.json as Json[]).filter((o) => ids.includes(o.order_id));
    expect(mine).toHaveLength(16);
    for (const o of mine) {
      read(o, SDK_ORDER, "order");
      expect(o.products).toHaveLength(100);
      read(o.products[0], SDK_LINE, "order.products[0]");
    }
  });

  it("an average-order-value script paging limit=N&offset until a short page gets the right figure", async () => {
    await sixteenOrders();
    const want = await env.DB.prepare("SELECT count(*) AS n, avg(total) AS avg FROM orders").first<{
      n: number;
      avg: number;
    }>();
    for (const limit of [5, 16, 100, 500]) {
      let sum = 0;
      let n = 0;
      for (let offset = 0; ; offset += limit) {
        const r = await get(`/v1/orders?limit=${limit}&offset=${offset}&include_details=true`);
        expect(r.status, `limit=${limit} offset=${offset}`).toBe(200);
        for (const o of r.json as Json[]) {
          sum += Number(o.total_amount);
          n++;
        }
        if (r.json.length < limit) break;
      }
      expect(n, `limit=${limit}`).toBe(want?.n);
      expect(sum / n, `limit=${limit}`).toBeCloseTo((want?.avg ?? 0) / 100, 6);
    }
  });
});

describe("order importers and statistics at 46 orders, 24 of them x 500 lines", () => {
  /** 46 orders through the API, the 500-line ones among the small: every page past 2 MiB holds some. */
  async function fortySixOrders() {
    const tag = uid("BIG46");
    const p = await createProduct({
      // As a shop writes them: lines of about 250 bytes each.
      title: `Organic cotton T-shirt, relaxed fit, garment-dyed ${tag}`,
      price: 10,
      variants: {
        add: Array.from({ length: 500 }, (_, i) => ({
          sku: `${tag}-${i}`,
          variant_option1_name: "Size",
          variant_option1_value: `Forest green, size ${i}`,
          qty: 1000,
          price: 10 + i,
        })),
      },
    });
    expect(p.variants).toHaveLength(500);
    const body = Array.from({ length: 46 }, (_, o) => ({
      order_id: "create",
      customer: {
        email: `big${o}@example.com`,
        phone: "070-765 43 21",
        billing_details: { firstname: "Big", lastname: `Buyer ${o}`, city: "Umeå", country: "SE" },
      },
      products: Array.from({ length: o % 2 === 0 || o === 45 ? 500 : 2 }, (_, i) => ({
        sku: `${tag}-${(o + i) % 500}`,
        qty: 1 + ((o + i) % 3),
      })),
    }));
    const r = await post("/v1/orders", body);
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    const ids = Object.values(r.json.results).map((x: any) => String(x.order_id));
    expect(ids).toHaveLength(46);
    return ids;
  }

  /** Every order of the database, as D1 has it: total and line count by id. */
  async function stored() {
    const rows = await env.DB.prepare(
      `SELECT o.id, o.total, (SELECT count(*) FROM order_lines AS l WHERE l.order_id = o.id) AS lines
       FROM orders AS o`,
    ).all<{ id: number; total: number; lines: number }>();
    return new Map(rows.results.map((r) => [String(r.id), r]));
  }

  /** Checks each order as the SDK reads it and against D1; returns them by id, each exactly once. */
  function collect(pages: Json[][], want: Map<string, { total: number; lines: number }>, details = true) {
    const seen = new Map<string, Json>();
    for (const page of pages)
      for (const o of page) {
        expect(seen.has(o.order_id), `order ${o.order_id} twice`).toBe(false);
        seen.set(o.order_id, o);
        read(o, details ? SDK_ORDER : LIST_ORDER, `order ${o.order_id}`);
        const row = want.get(o.order_id);
        expect(o.products, `order ${o.order_id}`).toHaveLength(row?.lines ?? -1);
        expect(Math.round(Number(o.total_amount) * 100), `order ${o.order_id}`).toBe(row?.total);
        read(o.products[o.products.length - 1], SDK_LINE, `order ${o.order_id} last line`);
      }
    return seen;
  }

  it("an importer reading the first page, GET /v1/orders?include_details=true, gets all 46 orders", async () => {
    const ids = await fortySixOrders();
    const want = await stored();
    expect(want.size).toBeLessThanOrEqual(100);
    const first = await get("/v1/orders?include_details=true");
    expect(first.status).toBe(200);
    // The whole default page of 100: every order there is, 24 of them with 500 lines.
    expect(first.json).toHaveLength(want.size);
    expect(new TextEncoder().encode(first.text).length).toBeGreaterThan(2 * 1024 * 1024);
    expect(first.headers.get("link")).toBeNull();
    const seen = collect([first.json], want);
    for (const id of ids) expect(seen.has(id), id).toBe(true);
    expect([...seen.values()].filter((o) => o.products.length === 500)).toHaveLength(24);
    const mine = seen.get(ids[0]) as Json;
    expect(mine.customer).toMatchObject({
      email: "big0@example.com",
      full_name: "Big Buyer 0",
      phone: "070-765 43 21",
    });
    expect(mine.products[499]).toMatchObject({ variant: expect.stringMatching(/^Forest green, size \d+$/) });
  });

  it.each([
    ["limit=100", ""],
    ["limit=500", "&include_details=true"],
    ["limit=50", "&include_details=true"],
    ["limit=16", ""],
    ["limit=5", "&include_details=true"],
  ])(
    "a statistics script paging %s&offset=N%s until a short page gets every order once and the right average",
    async (limit, details) => {
      await fortySixOrders();
      const want = await stored();
      const n = Number(limit.split("=")[1]);
      const pages: Json[][] = [];
      for (let offset = 0; ; offset += n) {
        const r = await get(`/v1/orders?${limit}&offset=${offset}${details}`);
        expect(r.status, `${limit} offset=${offset}: ${r.text.slice(0, 200)}`).toBe(200);
        pages.push(r.json);
        if (r.json.length < n) break;
        expect(r.json, `${limit} offset=${offset}`).toHaveLength(n);
      }
      const seen = collect(pages, want, details !== "");
      expect(seen.size).toBe(want.size);
      const total = [...want.values()].reduce((a, o) => a + o.total, 0);
      const sum = [...seen.values()].reduce((a, o) => a + Math.round(Number(o.total_amount) * 100), 0);
      expect(sum).toBe(total);
    },
  );

  it("a client following the cursor Link instead gets the same orders", async () => {
    await fortySixOrders();
    const want = await stored();
    const pages: Json[][] = [];
    let path: string | undefined = "/v1/orders?limit=30&include_details=true";
    while (path) {
      const r = await get(path);
      expect(r.status).toBe(200);
      pages.push(r.json);
      const link = /^<([^>]+)>/.exec(r.headers.get("link") ?? "")?.[1];
      path = link && new URL(link).pathname + new URL(link).search;
      expect(pages.length).toBeLessThan(20);
    }
    expect(collect(pages, want).size).toBe(want.size);
  });
});
