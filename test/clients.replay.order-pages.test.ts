import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type Json, type Kind, read, SDK_LINE, SDK_ORDER } from "./fixtures/clients-replay";
import { createProduct, get, post, uid } from "./helpers";

// The modelled API's clients that page through orders (statistics scripts, order importers),
// replayed against this service with each answer read the way they read it
// (test/fixtures/clients-replay.ts; docs/modelled-reads.md, "Modelled reads"), at real sizes: 16
// orders of 100 lines; 46 orders of which 24 have 500 lines (past 2 MiB a page).

// An order of a list without details: what statistics scripts read.
const LIST_ORDER: Record<string, Kind> = {
  order_id: "numeric-string",
  date_created: "string",
  status: "numeric-string",
  total_amount: "numeric-string",
  products: "array",
};

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
