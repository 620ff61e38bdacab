import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ORDER_LIMIT_MAX } from "../src/orders/list";
import { createProduct, followLinks, get, post, refusedQueries, uid } from "./helpers";

// GET /v1/orders in the modelled dialect (docs/modelled-reads.md, "Modelled reads"). Storage is per file, so the
// first test sees no orders at all. Statuses and their dates are set in the database directly:
// PUT /v1/orders is not what is under test here.

type Customer = { email?: string; firstname?: string; lastname?: string };

async function makeOrders(n: number, customer: Customer = {}, qty = 1) {
  const sku = uid();
  await createProduct({ sku, stock: 10_000, price: 99.5 });
  const body = Array.from({ length: n }, () => ({
    order_id: "create",
    customer: {
      email: customer.email ?? `${uid("c").toLowerCase()}@example.com`,
      billing_details: { firstname: customer.firstname ?? "Alex", lastname: customer.lastname ?? "Doe", country: "SE" },
    },
    shipping: { id: 3, name: "Postal", price: 49 },
    products: [{ sku, qty }],
  }));
  const r = await post("/v1/orders", body);
  expect(r.status).toBe(200);
  return Object.values(r.json.results).map((x: any) => x.order_id as number);
}

/** Sets an order's status and dates (epoch ms), as the lifecycle would. */
async function setStatus(id: number, status: string, at: { paid?: number; status?: number } = {}) {
  await env.DB.prepare("UPDATE orders SET status = ?1, date_paid = ?2, status_date = ?3 WHERE id = ?4")
    .bind(status, at.paid ?? null, at.status ?? null, id)
    .run();
}

const orderIds = (list: any[]) => list.map((o) => Number(o.order_id));

const follow = followLinks;

describe("GET /v1/orders", () => {
  it("answers an empty list with 200 []", async () => {
    const r = await get("/v1/orders");
    expect(r.status).toBe(200);
    expect(r.json).toEqual([]);
    expect(r.headers.get("link")).toBeNull();
  });

  it("lists a bare array, newest order id first, with the documented fields", async () => {
    const ids = await makeOrders(3, {}, 2);
    const r = await get("/v1/orders");
    expect(r.status).toBe(200);
    expect(orderIds(r.json)).toEqual([ids[2], ids[1], ids[0]]);
    const o = r.json[0];
    expect(Object.keys(o).sort()).toEqual(
      ["date_created", "order_id", "products", "status", "status_name", "total_amount"].sort(),
    );
    expect(o).toMatchObject({ order_id: String(ids[2]), status: "-1", status_name: "unpaid", total_amount: "248.00" });
    expect(o.date_created).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(o.products[0]).toMatchObject({ qty: 2, price: "99.50" });
    expect(typeof o.products[0].id).toBe("number");
  });

  it("with include_details adds the detail fields; order_id gives them always", async () => {
    const [id] = await makeOrders(1, { firstname: "Kim", lastname: "Lee" });
    const r = await get(`/v1/orders?order_id=${id}`);
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(1);
    const o = r.json[0];
    expect(o).toMatchObject({
      order_id: String(id),
      items_amount: "99.50",
      shipping_amount: "49.00",
      discount_amount: "0.00",
      total_amount: "148.50",
      total_pay_amount: "148.50",
      tax_amount: "19.90",
      shipping_id: "3",
      shipping_name: "Postal",
      date_paid: "",
      is_taxfree: false,
      customer: { full_name: "Kim Lee", country: "SE", shipping_details: { full_name: "Kim Lee" } },
    });
    // tax_amount is the sum of the order's tax lines, as our own GET /v1/orders/{id} gives them.
    const plain = (await get(`/v1/orders/${id}`)).json;
    expect(plain.tax.reduce((n: number, x: any) => n + x.amount, 0).toFixed(2)).toBe(o.tax_amount);
    const listed = (await get("/v1/orders?include_details=true&limit=1")).json[0];
    expect(listed).toHaveProperty("total_pay_amount");
    expect(listed).toHaveProperty("customer");
    expect((await get("/v1/orders?include_details=false&limit=1")).json[0]).not.toHaveProperty("customer");
  });

  it("order_id of a missing order is 404; a filter that matches nothing is 200 []", async () => {
    const r = await get("/v1/orders?order_id=99999999");
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ code: 404, error: "order 99999999 not found" });
    // order_id with a filter the order does not match: no order with that id matches.
    const [unpaid] = await makeOrders(1);
    expect((await get(`/v1/orders?order_id=${unpaid}&status=paid`)).status).toBe(404);
    expect((await get(`/v1/orders?order_id=${unpaid}&status=unpaid`)).status).toBe(200);
    const none = await get(`/v1/orders?search=${uid("nobody")}`);
    expect(none.status).toBe(200);
    expect(none.json).toEqual([]);
  });

  it("searches customer name, e-mail and order id", async () => {
    const tag = uid("zq")
      .toLowerCase()
      .replace(/[^a-z0-9]/g, "");
    const [byName] = await makeOrders(1, { firstname: "Ada", lastname: `Love${tag}` });
    const [byMail] = await makeOrders(1, { email: `${tag}@shop.example` });
    const [other] = await makeOrders(1);
    expect(orderIds((await get(`/v1/orders?search=${tag.toUpperCase()}`)).json)).toEqual([byMail, byName]);
    expect(orderIds((await get(`/v1/orders?search=ada%20love${tag}`)).json)).toEqual([byName]);
    expect(orderIds((await get(`/v1/orders?search=${tag}%40shop`)).json)).toEqual([byMail]);
    expect(orderIds((await get(`/v1/orders?search=${other}`)).json)).toEqual([other]);
  });

  it("filters by status word or code and by paid and status dates (UNIX seconds)", async () => {
    const [paid, done, cancelled, unpaid] = await makeOrders(4);
    const t = 1_700_000_000;
    await setStatus(paid, "paid", { paid: t * 1000, status: t * 1000 });
    await setStatus(done, "done", { paid: (t + 100) * 1000, status: (t + 200) * 1000 });
    await setStatus(cancelled, "cancelled", { status: (t + 300) * 1000 });
    for (const [q, want] of [
      ["status=paid", [paid]],
      ["status=1", [paid]],
      ["status=DONE", [done]],
      ["status=2", [done]],
      ["status=cancelled", [cancelled]],
      ["status=3", [cancelled]],
      [`from_date_paid=${t}`, [done, paid]],
      [`from_date_paid=${t + 1}`, [done]],
      [`to_date_paid=${t}`, [paid]],
      [`to_date_paid=${t + 99}`, [paid]],
      [`from_date_paid=${t}&to_date_paid=${t + 100}&sort_order=asc`, [paid, done]],
      [`status=paid&from_date_paid=${t + 1}`, []],
      [`from_status_date=${t + 200}&to_date_paid=${t + 1000}`, [done]],
      [`from_status_date=${t + 150}&status=cancelled`, [cancelled]],
    ] as const) {
      const r = await get(`/v1/orders?${q}`);
      expect(r.status, q).toBe(200);
      expect(orderIds(r.json), q).toEqual(want);
    }
    const list = (await get("/v1/orders?status=-1")).json;
    expect(list.map((o: any) => o.status_name)).toContain("unpaid");
    expect(list.every((o: any) => o.status === "-1")).toBe(true);
    expect(orderIds(list)).toContain(unpaid);
    // An order whose status never changed has had it since its creation.
    expect(orderIds((await get(`/v1/orders?from_status_date=${t + 400}`)).json)).toContain(unpaid);
    const cancelledOut = (await get(`/v1/orders?order_id=${cancelled}`)).json[0];
    expect(cancelledOut).toMatchObject({ status: "3", status_name: "cancelled" });
    expect((await get(`/v1/orders?order_id=${paid}`)).json[0].date_paid).toBe("2023-11-14 22:13:20");
  });

  it("sorts by order_id, date and price, both ways", async () => {
    const [a] = await makeOrders(1, {}, 3);
    const [b] = await makeOrders(1, {}, 1);
    const [c] = await makeOrders(1, {}, 2);
    // Dates set apart, in an order unlike the ids', so that each sort shows.
    for (const [id, at] of [
      [a, 3_000],
      [b, 1_000],
      [c, 2_000],
    ]) {
      await env.DB.prepare("UPDATE orders SET created_at = ?1 WHERE id = ?2").bind(at, id).run();
    }
    const sorted = async (q: string) =>
      orderIds((await get(`/v1/orders?${q}&limit=${ORDER_LIMIT_MAX}`)).json).filter((id) => [a, b, c].includes(id));
    expect(await sorted("order_by=order_id")).toEqual([c, b, a]);
    expect(await sorted("order_by=order_id&sort_order=asc")).toEqual([a, b, c]);
    expect(await sorted("order_by=date&sort_order=asc")).toEqual([b, c, a]);
    expect(await sorted("order_by=date&sort_order=desc")).toEqual([a, c, b]);
    expect(await sorted("order_by=price&sort_order=asc")).toEqual([b, c, a]);
    expect(await sorted("order_by=price")).toEqual([a, c, b]);
  });

  it("pages by limit and offset to an empty page", async () => {
    await makeOrders(4);
    const all = orderIds((await get(`/v1/orders?limit=${ORDER_LIMIT_MAX}`)).json);
    const seen: number[] = [];
    for (let offset = 0; ; offset += 3) {
      const r = await get(`/v1/orders?limit=3&offset=${offset}&include_details=true`);
      expect(r.status).toBe(200);
      if (!r.json.length) break;
      const link = r.headers.get("link");
      if (offset + 3 < all.length) {
        expect(new URL(/<([^>]+)>/.exec(link as string)?.[1] as string).searchParams.get("offset")).toBe(
          String(offset + 3),
        );
      } else expect(link).toBeNull();
      seen.push(...orderIds(r.json));
      expect(offset).toBeLessThan(all.length + 3);
    }
    expect(seen).toEqual(all);
  });

  it.each(["order_by=order_id&sort_order=desc", "order_by=date&sort_order=asc", "order_by=price&sort_order=desc"])(
    "pages by cursor through Link headers (%s), the same orders as one page",
    async (q) => {
      const all = orderIds((await get(`/v1/orders?${q}&limit=${ORDER_LIMIT_MAX}`)).json);
      const pages = await follow(`/v1/orders?${q}&limit=2`);
      expect(pages.flatMap(orderIds)).toEqual(all);
      expect(pages.slice(0, -1).every((p) => p.length === 2)).toBe(true);
    },
  );

  it("pages by offset and by cursor agree with one page, for any limit and sort (property)", async () => {
    await makeOrders(3);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom("order_id", "date", "price"),
        fc.constantFrom("asc", "desc"),
        async (limit, by, dir) => {
          const q = `order_by=${by}&sort_order=${dir}`;
          const all = orderIds((await get(`/v1/orders?${q}&limit=${ORDER_LIMIT_MAX}`)).json);
          const byCursor = (await follow(`/v1/orders?${q}&limit=${limit}`)).flatMap(orderIds);
          const byOffset: number[] = [];
          for (let offset = 0; ; offset += limit) {
            const page = orderIds((await get(`/v1/orders?${q}&limit=${limit}&offset=${offset}`)).json);
            if (!page.length) break;
            byOffset.push(...page);
          }
          expect(byCursor).toEqual(all);
          expect(byOffset).toEqual(all);
        },
      ),
      { numRuns: 12 },
    );
  });

  it("accepts apps_load and ignores it", async () => {
    const r = await get("/v1/orders?apps_load=true&limit=1");
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(1);
  });
});

describe("GET /v1/orders: refused queries", () => {
  refusedQueries(
    "/v1/orders",
    [
      ["orderid=1", "unknown query parameter: orderid"],
      ["sku=A", "unknown query parameter: sku"],
      ["status=paid&status=done", "query parameter given more than once: status"],
    ],
    [
      ["order_id=abc", "order_id: must be a positive whole number (an id)"],
      ["order_id=", "order_id: must not be empty"],
      ["search=", "search: must not be empty"],
      ["offset=-1", "offset: must be a whole number from 0 to 100000000"],
      ["limit=0", `limit: must be a whole number from 1 to ${ORDER_LIMIT_MAX}`],
      [`limit=${ORDER_LIMIT_MAX + 1}`, `limit: must be a whole number from 1 to ${ORDER_LIMIT_MAX}`],
      ["sort_order=up", "sort_order: must be asc or desc"],
      ["order_by=total", "order_by: must be price, date or order_id"],
      ["include_details=maybe", "include_details: must be true or false"],
      ["from_date_paid=2024-01-01", "from_date_paid: must be a time in UNIX seconds"],
      ["to_date_paid=-5", "to_date_paid: must be a time in UNIX seconds"],
      ["from_status_date=", "from_status_date: must not be empty"],
      ["status=shipped", "status: must be unpaid, paid, done, cancelled, -1, 1, 2 or 3"],
      ["status=0", "status: must be unpaid, paid, done, cancelled, -1, 1, 2 or 3"],
      ["cursor=garbage", "cursor: is not a cursor this service gave out"],
      ["offset=3&cursor=aWQ6MQ", "cursor: cannot be combined with offset or order_id"],
    ],
  );

  it("needs credentials", async () => {
    expect((await get("/v1/orders", { headers: { authorization: "" } })).status).toBe(401);
  });
});
