// Orders: the list (status filter, search, pages) and one order with its actions: pay, ship with a
// tracking number, cancel with or without restock, edit the lines of an unpaid order.
import { useState } from "preact/hooks";
import { api } from "./api";
import { Pager, SearchForm, usePagedList } from "./list";
import type { Address, Order, OrderRow } from "./types";
import { Message, money, STATUSES, Status, statusName, Title, useAction, useLoad, when } from "./ui";

const PAGE = 25;

export function OrdersPage() {
  const [status, setStatus] = useState("");
  const list = usePagedList<OrderRow>("/v1/orders", PAGE, { include_details: "true", status });
  const { data, error, loading } = list;
  return (
    <>
      <Title>Orders</Title>
      <SearchForm list={list} id="search" label="Order id, e-mail or name">
        <div>
          <label for="status">Status</label>
          <select
            id="status"
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value);
              list.setOffset(0);
            }}
          >
            <option value="">All</option>
            {STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </div>
      </SearchForm>
      <Message error={error} />
      {loading && <p role="status">Loading…</p>}
      {data && (
        <>
          <div class="scroll" tabindex={0}>
            <table class="list">
              <caption class="sr-only">Orders, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Order</th>
                  <th scope="col">Date</th>
                  <th scope="col">Customer</th>
                  <th scope="col">Status</th>
                  <th scope="col" class="num">
                    Total
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.rows.map((o) => (
                  <tr>
                    <td>
                      <a href={`#/orders/${o.order_id}`}>#{o.order_id}</a>
                    </td>
                    <td>{when(o.date_created)}</td>
                    <td>
                      {o.customer?.full_name || o.customer?.email || <span class="muted">guest</span>}
                      {o.customer?.full_name && o.customer?.email && (
                        <>
                          <br />
                          <span class="muted">{o.customer.email}</span>
                        </>
                      )}
                    </td>
                    <td>
                      <Status status={o.status} />
                    </td>
                    <td class="num">{money(o.total_amount, o.currency)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {data.rows.length === 0 && <p>No orders match.</p>}
          <Pager list={list} />
        </>
      )}
    </>
  );
}

const who = (c: Address | null) => [c?.firstname, c?.lastname].filter(Boolean).join(" ");
const address = (d: Address | null) =>
  d &&
  [who(d), d.company, d.address, d.address2, [d.zipcode, d.city].filter(Boolean).join(" "), d.country].filter(Boolean);

export function OrderPage({ id }: { id: string }) {
  const { data: o, error, reload } = useLoad(() => api<Order>("GET", `/v1/orders/${id}`).then((r) => r.body), [id]);
  const action = useAction();
  const change: Change = (body, ok) =>
    action.run(async () => {
      await api("PUT", "/v1/orders", [{ order_id: Number(id), ...body }]);
      await reload();
      return true;
    }, ok);
  if (error)
    return (
      <>
        <Title>Order #{id}</Title>
        <Message error={error} />
        <p>
          <a href="#/orders">Back to orders</a>
        </p>
      </>
    );
  if (!o) return <p role="status">Loading…</p>;
  const billing = address(o.customer.billing_details);
  const shipping = address(o.customer.shipping_details);
  return (
    <>
      <p class="back">
        <a href="#/orders">← Orders</a>
      </p>
      <Title>
        Order #{o.order_id} <Status status={o.status} />
      </Title>
      <Message error={action.error} ok={action.ok} />
      {o.status !== "cancelled" && <Actions key={o.updated_at} order={o} busy={action.busy} change={change} />}
      <section aria-labelledby="lines-h">
        <h2 id="lines-h">Lines</h2>
        {o.status === "unpaid" ? (
          <LinesEditor key={o.updated_at} order={o} busy={action.busy} change={change} />
        ) : (
          <Lines order={o} />
        )}
        <dl class="totals">
          <dt>Subtotal</dt>
          <dd>{money(o.subtotal, o.currency)}</dd>
          <dt>Shipping{o.shipping.name ? ` (${o.shipping.name})` : ""}</dt>
          <dd>{money(o.shipping.price, o.currency)}</dd>
          {o.discount > 0 && (
            <>
              <dt>Discount</dt>
              <dd>−{money(o.discount, o.currency)}</dd>
            </>
          )}
          {o.tax.map((t) => (
            <>
              <dt>Tax {t.rate} % (included)</dt>
              <dd>{money(t.amount, o.currency)}</dd>
            </>
          ))}
          <dt class="total">Total</dt>
          <dd class="total">{money(o.total, o.currency)}</dd>
        </dl>
      </section>
      <div class="cols">
        <section aria-labelledby="customer-h">
          <h2 id="customer-h">Customer</h2>
          <p>
            {o.customer.email ?? <span class="muted">guest, no e-mail</span>}
            {o.customer.phone && (
              <>
                <br />
                {o.customer.phone}
              </>
            )}
          </p>
          {billing && (
            <>
              <h3>Billing address</h3>
              <p>
                {billing.map((l) => (
                  <>
                    {l}
                    <br />
                  </>
                ))}
              </p>
            </>
          )}
          {shipping && (
            <>
              <h3>Shipping address</h3>
              <p>
                {shipping.map((l) => (
                  <>
                    {l}
                    <br />
                  </>
                ))}
              </p>
            </>
          )}
          {o.customer.note && (
            <>
              <h3>Note</h3>
              <p>{o.customer.note}</p>
            </>
          )}
          <h3>Payment</h3>
          <p>
            {o.payment.method ?? "—"}
            {o.payment.transaction_id && ` · ${o.payment.transaction_id}`}
          </p>
        </section>
        <section aria-labelledby="history-h">
          <h2 id="history-h">History</h2>
          <ol class="history">
            <li>
              Created <time>{when(o.created_at)}</time>
            </li>
            {o.date_paid && (
              <li>
                Paid <time>{when(o.date_paid)}</time>
              </li>
            )}
            {o.date_done && (
              <li>
                Shipped (done) <time>{when(o.date_done)}</time>
              </li>
            )}
            {o.date_cancelled && (
              <li>
                Cancelled <time>{when(o.date_cancelled)}</time>
                {o.cancel_reason && `: ${o.cancel_reason}`}
              </li>
            )}
            {o.status_date && (
              <li>
                Last status change (to {statusName(o.status)}) <time>{when(o.status_date)}</time>
              </li>
            )}
            {o.hold_expires_at && (
              <li>
                Cancelled if unpaid by <time>{when(o.hold_expires_at)}</time>
              </li>
            )}
          </ol>
          {(o.shipping_info.trackingnumber || o.shipping_info.company) && (
            <>
              <h3>Tracking</h3>
              <p>
                {o.shipping_info.company ?? ""} {o.shipping_info.trackingnumber ?? ""}
              </p>
            </>
          )}
        </section>
      </div>
    </>
  );
}

type Change = (body: Record<string, unknown>, ok: string) => Promise<boolean | undefined>;
type OrderProps = { order: Order; busy: boolean; change: Change };

function Actions({ order, busy, change }: OrderProps) {
  const [tracking, setTracking] = useState(order.shipping_info.trackingnumber ?? "");
  const [company, setCompany] = useState(order.shipping_info.company ?? "");
  const [restock, setRestock] = useState(true);
  const [cancelling, setCancelling] = useState(false);
  const ship = (e: Event) => {
    e.preventDefault();
    const info: { trackingnumber?: string; company?: string } = {};
    if (tracking.trim()) info.trackingnumber = tracking.trim();
    if (company.trim()) info.company = company.trim();
    change({ status: "done", shipping_info: info }, "Marked shipped.");
  };
  return (
    <section class="actions" aria-labelledby="actions-h">
      <h2 id="actions-h" class="sr-only">
        Actions
      </h2>
      {order.status === "unpaid" && (
        <button type="button" disabled={busy} onClick={() => change({ status: "paid" }, "Marked paid.")}>
          Mark paid
        </button>
      )}
      {order.status !== "done" && (
        <form class="ship" onSubmit={ship}>
          <div>
            <label for="tracking">Tracking number</label>
            <input id="tracking" value={tracking} maxlength={255} onInput={(e) => setTracking(e.currentTarget.value)} />
          </div>
          <div>
            <label for="company">Carrier</label>
            <input id="company" value={company} maxlength={255} onInput={(e) => setCompany(e.currentTarget.value)} />
          </div>
          <button type="submit" disabled={busy}>
            Mark shipped
          </button>
        </form>
      )}
      <div class="cancel">
        {cancelling ? (
          <fieldset>
            <legend>Cancel order #{order.order_id}?</legend>
            <label class="check">
              <input type="checkbox" checked={restock} onChange={(e) => setRestock(e.currentTarget.checked)} /> Put the
              items back in stock
            </label>
            <button
              type="button"
              class="danger"
              disabled={busy}
              onClick={() =>
                change(
                  { status: "cancelled", restock },
                  restock ? "Cancelled; stock returned." : "Cancelled; stock not returned.",
                )
              }
            >
              Cancel order
            </button>
            <button type="button" onClick={() => setCancelling(false)}>
              Keep it
            </button>
          </fieldset>
        ) : (
          <button type="button" class="danger" onClick={() => setCancelling(true)}>
            Cancel…
          </button>
        )}
      </div>
    </section>
  );
}

function Lines({ order }: { order: Order }) {
  return (
    <div class="scroll" tabindex={0}>
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Item</th>
            <th scope="col">SKU</th>
            <th scope="col" class="num">
              Qty
            </th>
            <th scope="col" class="num">
              Price
            </th>
            <th scope="col" class="num">
              Total
            </th>
          </tr>
        </thead>
        <tbody>
          {order.products.map((l) => (
            <tr>
              <td>
                {l.title}
                {l.options.length > 0 && (
                  <>
                    {" "}
                    <span class="muted">{l.options.map((o) => o.value).join(" / ")}</span>
                  </>
                )}
              </td>
              <td>{l.sku}</td>
              <td class="num">{l.qty}</td>
              <td class="num">{money(l.price)}</td>
              <td class="num">{money(l.total)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** An unpaid order's lines, editable: quantities, removals and new lines go in one PUT. */
function LinesEditor({ order, busy, change }: OrderProps) {
  const [qty, setQty] = useState(() => order.products.map((l) => String(l.qty)));
  const [sku, setSku] = useState("");
  const [addQty, setAddQty] = useState("1");
  const save = (e: Event) => {
    e.preventDefault();
    // Kept lines keep their unit price: only quantities change here.
    const products: Record<string, unknown>[] = order.products
      .map((l, i) => ({ l, qty: Number(qty[i]) }))
      .filter(({ qty }) => qty > 0)
      .map(({ l, qty }) => ({
        ...(l.variant_id ? { variant_id: l.variant_id } : l.product_id ? { product_id: l.product_id } : { sku: l.sku }),
        qty,
        price: l.price,
      }));
    if (sku.trim()) products.push({ sku: sku.trim(), qty: Number(addQty) });
    change({ products }, "Lines saved.");
  };
  return (
    <form onSubmit={save}>
      <div class="scroll" tabindex={0}>
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Item</th>
              <th scope="col">SKU</th>
              <th scope="col" class="num">
                Qty (0 removes)
              </th>
              <th scope="col" class="num">
                Price
              </th>
              <th scope="col" class="num">
                Total
              </th>
            </tr>
          </thead>
          <tbody>
            {order.products.map((l, i) => (
              <tr>
                <td>
                  {l.title}
                  {l.options.length > 0 && (
                    <>
                      {" "}
                      <span class="muted">{l.options.map((o) => o.value).join(" / ")}</span>
                    </>
                  )}
                </td>
                <td>{l.sku}</td>
                <td class="num">
                  <input
                    class="qty"
                    type="number"
                    min="0"
                    max="100000"
                    required
                    aria-label={`Quantity of ${l.title} ${l.sku ?? ""}`}
                    value={qty[i]}
                    onInput={(e) => setQty(qty.map((q, j) => (j === i ? e.currentTarget.value : q)))}
                  />
                </td>
                <td class="num">{money(l.price)}</td>
                <td class="num">{money(l.total)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <fieldset class="add-line">
        <legend>Add a line</legend>
        <div>
          <label for="add-sku">SKU</label>
          <input id="add-sku" value={sku} onInput={(e) => setSku(e.currentTarget.value)} />
        </div>
        <div>
          <label for="add-qty">Qty</label>
          <input
            id="add-qty"
            class="qty"
            type="number"
            min="1"
            max="100000"
            value={addQty}
            onInput={(e) => setAddQty(e.currentTarget.value)}
          />
        </div>
      </fieldset>
      <button type="submit" disabled={busy}>
        Save lines
      </button>
    </form>
  );
}
