import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createProduct, get, post, put, refusedQueries, uid } from "./helpers";

// GET /v1/orders, our own filters beside the modelled ones (docs/orders.md, "Finding orders"):
// created_from/created_to, paid, count (X-Total-Count), and search by SKU; with the modelled
// status, order_by and sort_order they make the admin's views (today, unpaid, to ship).
// Storage is per file: every test makes its own orders and narrows the list to them by a search.

const DAY = 86_400_000;

async function makeOrders(skus: string[], email = `${uid("f").toLowerCase()}@example.com`) {
  for (const sku of new Set(skus)) await createProduct({ sku, stock: 10_000, price: 10 });
  const body = skus.map((sku, i) => ({
    order_id: "create",
    customer: { email, billing_details: { firstname: "Filter", lastname: "Tester" } },
    products: [{ sku, qty: i + 1 }],
  }));
  const r = await post("/v1/orders", body);
  expect(r.status, r.text).toBe(200);
  return { ids: Object.values(r.json.results).map((x: any) => x.order_id as number), email };
}

const setCreated = (id: number, at: number) =>
  env.DB.prepare("UPDATE orders SET created_at = ? WHERE id = ?").bind(at, id).run();
const ids = (list: any[]) => list.map((o) => Number(o.order_id));

describe("created_from and created_to", () => {
  it("keep orders created in the range, both ends included, as dates or times with an offset", async () => {
    const { ids: made, email } = await makeOrders([uid(), uid(), uid()]);
    const day = Date.parse("2026-03-10T00:00:00Z");
    await setCreated(made[0], day - 1);
    await setCreated(made[1], day);
    await setCreated(made[2], day + DAY - 1);
    const q = (p: string) => get(`/v1/orders?search=${encodeURIComponent(email)}&${p}`);
    expect(ids((await q("created_from=2026-03-10&created_to=2026-03-10")).json)).toEqual([made[2], made[1]]);
    expect(ids((await q("created_to=2026-03-09")).json)).toEqual([made[0]]);
    // A merchant's midnight in Stockholm (UTC+1) is 23:00 UTC the day before.
    const stockholm = await q(`created_from=${encodeURIComponent("2026-03-10T00:00:00+01:00")}`);
    expect(ids(stockholm.json)).toEqual([made[2], made[1], made[0]]);
    expect(ids((await q("created_from=2026-03-10T00:00:00.001Z")).json)).toEqual([made[2]]);
  });

  const ISO = "must be an ISO 8601 date (2026-11-26) or a time with its offset (2026-11-26T00:00:00+01:00)";
  refusedQueries(
    "/v1/orders",
    [],
    [
      ["created_from=yesterday", `created_from: ${ISO}`],
      ["created_from=2026-13-01", `created_from: ${ISO}`],
      ["created_to=2026-03-10T10:00:00", `created_to: ${ISO}`],
      ["paid=maybe", "paid: must be true or false"],
      ["count=yes", "count: must be true or false"],
    ],
  );
});

describe("paid, and the admin's views", () => {
  it("paid=false keeps orders never paid; status=done&paid=false is shipped unpaid (on invoice)", async () => {
    const { ids: made, email } = await makeOrders([uid(), uid(), uid(), uid()]);
    const [unpaid, toShip, shippedPaid, shippedUnpaid] = made;
    const change = await put("/v1/orders", [
      { order_id: toShip, status: "paid" },
      { order_id: shippedPaid, status: "paid" },
      { order_id: shippedUnpaid, status: "done" },
    ]);
    expect(change.status).toBe(200);
    expect((await put("/v1/orders", [{ order_id: shippedPaid, status: "done" }])).status).toBe(200);
    const q = async (p: string) => ids((await get(`/v1/orders?search=${encodeURIComponent(email)}&${p}`)).json);
    expect(await q("status=unpaid")).toEqual([unpaid]);
    // To ship: paid and not shipped.
    expect(await q("status=paid")).toEqual([toShip]);
    expect(await q("status=done&paid=false")).toEqual([shippedUnpaid]);
    expect(await q("paid=true")).toEqual([shippedPaid, toShip]);
    expect(await q("paid=false")).toEqual([shippedUnpaid, unpaid]);
  });
});

describe("count=true", () => {
  it("answers X-Total-Count: every order the filters match, whatever the page", async () => {
    const { ids: made, email } = await makeOrders([uid(), uid(), uid(), uid(), uid()]);
    const search = `search=${encodeURIComponent(email)}`;
    const first = await get(`/v1/orders?${search}&limit=2&count=true`);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-total-count")).toBe("5");
    expect(first.json).toHaveLength(2);
    // The next page by cursor counts the same whole.
    const next = new URL(first.headers.get("link")?.match(/<([^>]+)>/)?.[1] ?? "").search;
    const second = await get(`/v1/orders${next}`);
    expect(second.headers.get("x-total-count")).toBe("5");
    const paged = await get(`/v1/orders?${search}&limit=2&offset=4&count=true`);
    expect(paged.headers.get("x-total-count")).toBe("5");
    expect(ids(paged.json)).toEqual([made[0]]);
    await put("/v1/orders", [{ order_id: made[1], status: "paid" }]);
    expect((await get(`/v1/orders?${search}&status=paid&count=1`)).headers.get("x-total-count")).toBe("1");
    expect((await get(`/v1/orders?${search}`)).headers.get("x-total-count")).toBeNull();
  });
});

describe("search", () => {
  it("finds orders by the SKU of a line, in any case, and by part of it", async () => {
    const sku = uid("PACK");
    const { ids: made } = await makeOrders([sku, uid(), sku]);
    expect(ids((await get(`/v1/orders?search=${sku.toLowerCase()}`)).json)).toEqual([made[2], made[0]]);
    expect(ids((await get(`/v1/orders?search=${sku.slice(0, -1)}`)).json)).toEqual(
      expect.arrayContaining([made[2], made[0]]),
    );
  });

  it("finds by order number, e-mail and customer name, sorted by total or date either way", async () => {
    const { ids: made, email } = await makeOrders([uid(), uid(), uid()]);
    const search = `search=${encodeURIComponent(email)}`;
    // Totals rise with the line qty (1, 2, 3 at 10.00).
    expect(ids((await get(`/v1/orders?${search}&order_by=price&sort_order=asc`)).json)).toEqual(made);
    expect(ids((await get(`/v1/orders?${search}&order_by=price&sort_order=desc`)).json)).toEqual([...made].reverse());
    await setCreated(made[2], Date.parse("2026-01-01T00:00:00Z"));
    expect(ids((await get(`/v1/orders?${search}&order_by=date&sort_order=asc`)).json)[0]).toBe(made[2]);
    expect(ids((await get(`/v1/orders?search=${made[1]}`)).json)).toEqual([made[1]]);
    expect(ids((await get("/v1/orders?search=filter%20tester&limit=500")).json)).toEqual(expect.arrayContaining(made));
  });
});
