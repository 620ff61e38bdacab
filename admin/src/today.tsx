// The day at a glance (docs/admin.md, "Today"), the landing page: today's orders, revenue and
// units, unpaid orders waiting and low stock, today being the store's calendar day
// (STORE_TIMEZONE, ./zone.ts), whatever zone the browser is in.
import { api, can } from "./api";
import { viewRows } from "./orders-csv";
import { currency, LOW_STOCK } from "./products-list";
import type { ProductRow } from "./types";
import { Message, money, Title, useLoad } from "./ui";
import { dayBound, dayOf, storeZone, zoneLabel } from "./zone";

/** The products the low-stock figure reads; beyond them the Products page marks the rest. */
const PRODUCTS_READ = 500;

async function figures() {
  const day = dayOf(Date.now());
  const today = new URLSearchParams({
    include_details: "true",
    created_from: dayBound(day, false),
    created_to: dayBound(day, true),
  });
  const [orders, unpaid] = await Promise.all([
    viewRows(today),
    api("GET", "/v1/orders?status=unpaid&count=true&limit=1"),
  ]);
  // Cancelled orders sold nothing.
  const sold = orders.filter((o) => o.status !== "3");
  const cents = sold.reduce((n, o) => n + Math.round(Number(o.total_amount) * 100), 0);
  const units = sold.reduce((n, o) => n + o.products.reduce((u, l) => u + Number(l.qty), 0), 0);
  let low: { id: string; title: string; stock: number }[] | undefined;
  let more = false;
  if (can("products:read")) {
    const r = await api<ProductRow[]>("GET", `/v1/products?include_details=true&limit=${PRODUCTS_READ}`);
    more = r.headers.has("link");
    low = r.body.flatMap((p) => {
      const variants = p.variants ?? [];
      const stock = variants.length ? Math.min(...variants.map((v) => Number(v.qty))) : Number(p.stock);
      return stock <= LOW_STOCK ? [{ id: String(p.id), title: String(p.title), stock }] : [];
    });
  }
  return {
    day,
    orders: sold.length,
    cancelled: orders.length - sold.length,
    revenue: cents / 100,
    units,
    unpaid: Number(unpaid.headers.get("x-total-count") ?? 0),
    low,
    more,
  };
}

export function TodayPage() {
  const { data, error, loading } = useLoad(figures, []);
  const cur = currency();
  return (
    <>
      <Title>Today</Title>
      <p class="muted">
        {data
          ? `${new Date(`${data.day}T12:00:00Z`).toLocaleDateString(undefined, { dateStyle: "full", timeZone: "UTC" })} · `
          : ""}
        the store's time zone, {zoneLabel(storeZone())}
      </p>
      <Message error={error} />
      {loading && <p role="status">Loading…</p>}
      {data && (
        <>
          <dl class="glance">
            <div>
              <dt>Orders today</dt>
              <dd>
                <a href="#/orders?view=today">{data.orders}</a>
              </dd>
            </div>
            <div>
              <dt>Revenue today</dt>
              <dd>{money(data.revenue, cur)}</dd>
            </div>
            <div>
              <dt>Units sold today</dt>
              <dd>{data.units}</dd>
            </div>
            <div>
              <dt>Unpaid, waiting</dt>
              <dd>
                <a href="#/orders?view=unpaid">{data.unpaid}</a>
              </dd>
            </div>
            {data.low && (
              <div>
                <dt>Products low in stock</dt>
                <dd>
                  <a href="#/products">{data.low.length}</a>
                </dd>
              </div>
            )}
          </dl>
          <p class="hint">
            Orders created since midnight in the store's time zone, cancelled ones left out
            {data.cancelled ? ` (${data.cancelled} cancelled today)` : ""}; revenue is their totals with shipping and
            tax.
          </p>
          {data.low && data.low.length > 0 && (
            <section aria-labelledby="low-h">
              <h2 id="low-h">
                Low in stock ({LOW_STOCK} or fewer{data.more ? `, of the first ${PRODUCTS_READ} products` : ""})
              </h2>
              <ul>
                {data.low.map((p) => (
                  <li>
                    <a href={`#/products/${p.id}`}>{p.title}</a>: {p.stock} left
                  </li>
                ))}
              </ul>
            </section>
          )}
        </>
      )}
    </>
  );
}
