// The order list (docs/admin.md, "Orders"): quick views, a created range, sort, search, the
// total count, all kept in the page's address (so Back and a reload restore them); rows selected
// for bulk Mark paid, Ship and Cancel; the whole view exported as one CSV (./orders-csv.ts). Days
// are the store's (./zone.ts). At 360 px each order is a card.
import { useEffect, useState } from "preact/hooks";
import { api, can } from "./api";
import { actionsFor, CancelForm, refundNote } from "./order-actions";
import { download, ordersCsv, viewRows } from "./orders-csv";
import type { OrderRow } from "./types";
import { Heads, Message, money, orderState, Title, useAction, useLoad, when } from "./ui";
import { dayBound, dayOf } from "./zone";

const PAGE = 25;

/** The quick views: each a set of the list's parameters (docs/orders.md, "Finding orders"). */
const VIEWS: { id: string; label: string; params: () => Record<string, string> }[] = [
  { id: "", label: "All", params: () => ({}) },
  {
    id: "today",
    label: "Today",
    params: () => ({ created_from: dayBound(dayOf(Date.now()), false) }),
  },
  { id: "unpaid", label: "Unpaid", params: () => ({ status: "unpaid" }) },
  { id: "to_ship", label: "To ship", params: () => ({ status: "paid" }) },
  { id: "invoice", label: "Shipped unpaid", params: () => ({ status: "done", paid: "false" }) },
  { id: "cancelled", label: "Cancelled", params: () => ({ status: "cancelled" }) },
];

const SORTS: Record<string, [string, string, string]> = {
  new: ["Newest first", "date", "desc"],
  old: ["Oldest first", "date", "asc"],
  high: ["Total, highest first", "price", "desc"],
  low: ["Total, lowest first", "price", "asc"],
};

const viewHref = (view: string, q: string) => {
  const p = new URLSearchParams();
  if (view) p.set("view", view);
  if (q) p.set("q", q);
  return `#/orders${p.size ? `?${p}` : ""}`;
};

/** The list's address: the filters live in the hash, so Back and the order page's link return to them. */
export let ordersListHash = "#/orders";
const go = (q: URLSearchParams) => {
  for (const [k, v] of [...q]) if (!v) q.delete(k);
  location.hash = `#/orders${q.size ? `?${q}` : ""}`;
};

export function OrdersPage({ query }: { query: URLSearchParams }) {
  ordersListHash = `#/orders${query.size ? `?${query}` : ""}`;
  const view = VIEWS.find((v) => v.id === (query.get("view") ?? "")) ?? VIEWS[0];
  const sort = SORTS[query.get("sort") ?? "new"] ?? SORTS.new;
  const offset = Number(query.get("offset") ?? 0) || 0;
  const from = query.get("from") ?? "";
  const to = query.get("to") ?? "";
  const q = query.get("q") ?? "";
  const [search, setSearch] = useState(q);
  // The box shows the search the list applies, after Back or a link too.
  useEffect(() => setSearch(q), [q]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const key = query.toString();
  /** The view's parameters, without paging: the list's and its CSV's. */
  const viewParams = () => {
    const p = new URLSearchParams({
      include_details: "true",
      order_by: sort[1],
      sort_order: sort[2],
      ...view.params(),
    });
    if (from) p.set("created_from", dayBound(from, false));
    if (to) p.set("created_to", dayBound(to, true));
    if (q) p.set("search", q);
    return p;
  };
  const list = useLoad(() => {
    const p = viewParams();
    p.set("count", "true");
    p.set("limit", String(PAGE));
    p.set("offset", String(offset));
    return api<OrderRow[]>("GET", `/v1/orders?${p}`).then((r) => ({
      rows: r.body,
      total: Number(r.headers.get("x-total-count") ?? r.body.length),
    }));
  }, [key]);
  const csv = useAction();
  const exportView = (total: number) =>
    csv.run(
      async () => {
        const rows = await viewRows(viewParams());
        download(`orders-${dayOf(Date.now())}.csv`, ordersCsv(rows));
        if (rows.length !== total)
          throw new Error(`Exported ${rows.length} orders; the view changed meanwhile (${total} when listed).`);
      },
      `Exported ${total === 1 ? "1 order" : `${total} orders`} of this view as one CSV file.`,
    );
  const set = (changes: Record<string, string>) => {
    const next = new URLSearchParams(query);
    for (const [k, v] of Object.entries(changes)) next.set(k, v);
    if (!("offset" in changes)) next.delete("offset");
    setSelected(new Set());
    go(next);
  };
  const { data, error, loading } = list;
  const rows = data?.rows ?? [];
  const chosen = rows.filter((o) => selected.has(o.order_id));
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  };
  return (
    <>
      <Title>Orders</Title>
      <nav class="views" aria-label="Views">
        {VIEWS.map((v) => (
          // A view keeps the search: what the box shows is always what the list applies.
          <a href={viewHref(v.id, q)} aria-current={v === view ? "page" : undefined}>
            {v.label}
          </a>
        ))}
      </nav>
      <search>
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            set({ q: search.trim() });
          }}
        >
          <div>
            <label for="search">Order number, name, e-mail or SKU</label>
            <input id="search" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
          </div>
          <button type="submit">Search</button>
          <div>
            <label for="from">Created from</label>
            <input id="from" type="date" value={from} onChange={(e) => set({ from: e.currentTarget.value })} />
          </div>
          <div>
            <label for="to">to</label>
            <input id="to" type="date" value={to} onChange={(e) => set({ to: e.currentTarget.value })} />
          </div>
          <div>
            <label for="sort">Sort</label>
            <select id="sort" value={query.get("sort") ?? "new"} onChange={(e) => set({ sort: e.currentTarget.value })}>
              {Object.entries(SORTS).map(([id, [label]]) => (
                <option value={id}>{label}</option>
              ))}
            </select>
          </div>
        </form>
      </search>
      <Message error={error} />
      {loading && <p role="status">Loading…</p>}
      {data && (
        <div class="row">
          <p class="count" role="status">
            {data.total === 1 ? "1 order" : `${data.total} orders`}
            {data.total > 0 && ` · showing ${offset + 1}–${offset + rows.length}`}
            {q && ` · search “${q}”`}
          </p>
          {data.total > 0 && (
            <button type="button" disabled={csv.busy} onClick={() => exportView(data.total)}>
              Export CSV ({data.total === 1 ? "1 order" : `all ${data.total}`})
            </button>
          )}
        </div>
      )}
      <Message error={csv.error} ok={csv.ok} />
      {data && rows.length > 0 && <Bulk orders={chosen} reload={list.reload} clear={() => setSelected(new Set())} />}
      {data && rows.length > 0 && (
        <table class="list orders">
          <caption class="sr-only">Orders, {sort[0].toLowerCase()}</caption>
          <Heads
            lead={
              <input
                type="checkbox"
                aria-label="Select every order on this page"
                checked={chosen.length === rows.length}
                onChange={(e) => setSelected(new Set(e.currentTarget.checked ? rows.map((o) => o.order_id) : []))}
              />
            }
            columns={["Order", "Date", "Customer", "Status", ["Total", "num"]]}
          />
          <tbody>
            {rows.map((o) => {
              const st = orderState(o.status, o.date_paid);
              return (
                <tr class={selected.has(o.order_id) ? "selected" : ""}>
                  <td class="pick">
                    <input
                      type="checkbox"
                      aria-label={`Select order #${o.order_id}`}
                      checked={selected.has(o.order_id)}
                      onChange={(e) => toggle(o.order_id, e.currentTarget.checked)}
                    />
                  </td>
                  <td data-label="Order">
                    <a href={`#/orders/${o.order_id}`}>#{o.order_id}</a>
                  </td>
                  <td data-label="Date">{when(o.date_created)}</td>
                  <td data-label="Customer">
                    {o.customer.full_name || o.customer.email || <span class="muted">guest</span>}
                    {o.customer.full_name && o.customer.email && (
                      <>
                        <br />
                        <span class="muted">{o.customer.email}</span>
                      </>
                    )}
                  </td>
                  <td data-label="Status">
                    <span class={`badge status-${st.name}`}>{st.label}</span>
                  </td>
                  <td data-label="Total" class="num">
                    {money(o.total_amount, o.currency)}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {data && rows.length === 0 && <p>No orders match.</p>}
      {data && (offset > 0 || offset + rows.length < data.total) && (
        <nav class="pager" aria-label="Pages of orders">
          <button
            type="button"
            disabled={offset === 0}
            onClick={() => set({ offset: String(Math.max(0, offset - PAGE)) })}
          >
            Previous
          </button>
          <button
            type="button"
            disabled={offset + rows.length >= data.total}
            onClick={() => set({ offset: String(offset + PAGE) })}
          >
            Next
          </button>
        </nav>
      )}
    </>
  );
}

type Results = { results: Record<string, { success: boolean; errors: string[] }> };

/** The selected orders' actions: each only on the orders whose state allows it; the rest are named. */
function Bulk({ orders, reload, clear }: { orders: OrderRow[]; reload: () => Promise<void>; clear: () => void }) {
  const action = useAction();
  const [cancelling, setCancelling] = useState(false);
  const writable = can("orders:write");
  const allowed = orders.map((o) => actionsFor(o.status));
  const unpaid = orders.filter((_, i) => allowed[i].pay);
  // In bulk, only paid orders ship: an unpaid one needs its own "ship unpaid (invoice)" choice.
  const paid = orders.filter((_, i) => allowed[i].ship && !allowed[i].pay);
  const open = orders.filter((_, i) => allowed[i].cancel);
  const shipped = allowed.some((a) => a.shipped);
  const change = (targets: OrderRow[], body: Record<string, unknown>, done: string) =>
    action.run(
      async () => {
        // One PUT for all of them (at most a page, 25): each element answers for itself.
        const r = await fetchPartial(targets.map((o) => ({ order_id: Number(o.order_id), ...body })));
        const refused = Object.values(r.results).filter((x) => !x.success);
        const skipped = orders.length - targets.length;
        clear();
        setCancelling(false);
        await reload();
        if (refused.length)
          throw new Error(`${refused.length} refused: ${refused.flatMap((x) => x.errors).join("; ")}`);
        return skipped;
      },
      `${done} ${targets.length} ${targets.length === 1 ? "order" : "orders"}${orders.length > targets.length ? ` (${orders.length - targets.length} skipped: not in a state for it)` : ""}.`,
    );
  if (!orders.length)
    return (
      <>
        <Message error={action.error} ok={action.ok} />
        <p class="hint">Select orders to pay, ship or cancel several at once.</p>
      </>
    );
  return (
    <section class="bulk" aria-label="Selected orders">
      <p>
        <strong>{orders.length} selected</strong>
      </p>
      <div class="row">
        {writable && (
          <>
            <button
              type="button"
              disabled={action.busy || !unpaid.length}
              onClick={() => change(unpaid, { status: "paid" }, "Marked paid:")}
            >
              Mark paid ({unpaid.length})
            </button>
            <button
              type="button"
              disabled={action.busy || !paid.length}
              onClick={() => change(paid, { status: "done" }, "Shipped:")}
            >
              Ship paid ({paid.length})
            </button>
            <button type="button" class="danger" disabled={!open.length} onClick={() => setCancelling(true)}>
              Cancel… ({open.length})
            </button>
          </>
        )}
      </div>
      {cancelling && (
        <CancelForm
          id="bulk-reason"
          legend={`Cancel ${open.length} orders?`}
          note={
            open.length
              ? refundNote(
                  open.filter((o) => o.date_paid).map((o) => ({ total: o.total_amount, method: o.paymethod.method })),
                  open[0].currency,
                )
              : ""
          }
          shipped={shipped}
          shippedNote="some were shipped: only if they came back"
          confirm="Cancel the orders"
          keep="Keep them"
          busy={action.busy}
          onConfirm={(restock, reason) =>
            change(open, { status: "cancelled", restock, cancel_reason: reason }, "Cancelled:")
          }
          onKeep={() => setCancelling(false)}
        />
      )}
      <Message error={action.error} ok={action.ok} />
    </section>
  );
}

async function fetchPartial(body: unknown[]): Promise<Results> {
  try {
    return (await api<Results>("PUT", "/v1/orders", body)).body;
  } catch (e) {
    // Every element refused: the answer's results still say why, element by element.
    const errors = (e as { errors?: string[] }).errors ?? [(e as Error).message];
    return { results: { all: { success: false, errors } } };
  }
}
