// One order and its actions (docs/admin.md, "Orders"): pay, ship (an unpaid order only with
// the explicit "ship unpaid (invoice)" choice), cancel with a reason and a restock choice that is
// not pre-ticked once shipped, edit the lines of an unpaid order; each offered only when the key's
// scopes and the order's state allow it. Its history says who did what.
import { useState } from "preact/hooks";
import { api, can } from "./api";
import { actionsFor, CancelForm, type Change, type OrderProps, refundNote } from "./order-actions";
import { Lines, LinesEditor } from "./order-lines";
import { ordersListHash } from "./orders-list";
import type { Address, Order } from "./types";
import { Message, money, orderState, Title, useAction, useDirty, useLoad, when } from "./ui";

const who = (c: Address | null) => [c?.firstname, c?.lastname].filter(Boolean).join(" ");
const address = (d: Address | null) =>
  d &&
  [who(d), d.company_name, d.address, d.address2, [d.zipcode, d.city].filter(Boolean).join(" "), d.country].filter(
    Boolean,
  );

export function OrderPage({ id }: { id: string }) {
  const { data: o, error, reload } = useLoad(() => api<Order>("GET", `/v1/orders/${id}`).then((r) => r.body), [id]);
  const action = useAction();
  const change: Change = (body, ok, label) =>
    action.run(
      async () => {
        await api("PUT", "/v1/orders", [{ order_id: Number(id), ...body }]);
        await reload();
        return true;
      },
      ok,
      (path) => label?.(path) ?? FIELDS[path],
    );
  if (error)
    return (
      <>
        <Title>Order #{id}</Title>
        <Message error={error} />
        <p>
          <a href={ordersListHash}>Back to orders</a>
        </p>
      </>
    );
  if (!o) return <p role="status">Loading…</p>;
  const writable = can("orders:write");
  const st = orderState(o.status, o.date_paid);
  const billing = address(o.customer.billing_details);
  const shipping = address(o.customer.shipping_details);
  return (
    <>
      <p class="back">
        <a href={ordersListHash}>← Orders</a>
      </p>
      <Title>
        Order #{o.order_id} <span class={`badge status-${st.name}`}>{st.label}</span>
      </Title>
      <Message error={action.error} ok={action.ok} />
      {o.status !== "cancelled" && writable && (
        <Actions key={o.updated_at} order={o} busy={action.busy} change={change} />
      )}
      <section aria-labelledby="lines-h">
        <h2 id="lines-h">Lines</h2>
        {o.status === "unpaid" && writable ? (
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
              {o.key && <span class="muted"> by key {o.key.name}</span>}
            </li>
            {(o.history ?? []).map((h) => (
              <li>
                {CHANGES[h.change] ?? h.change} <time>{when(h.at)}</time>
                {h.change === "cancelled" && (
                  <>
                    {h.reason && `: ${h.reason}`}
                    {h.restock === null ? "" : h.restock ? "; stock returned" : "; stock not returned"}
                  </>
                )}
                <span class="muted">
                  {h.via === "system"
                    ? " by the store"
                    : ` by ${h.key.name ?? "a deleted key"}${h.via === "session" ? " (admin)" : " (API)"}`}
                </span>
              </li>
            ))}
            {o.date_cancelled && !o.history?.some((h) => h.change === "cancelled") && (
              <li>
                Cancelled <time>{when(o.date_cancelled)}</time>
                {o.cancel_reason && `: ${o.cancel_reason}`}
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

const CHANGES: Record<string, string> = {
  unpaid: "Marked unpaid",
  paid: "Paid",
  done: "Shipped",
  cancelled: "Cancelled",
  shipping: "Tracking set",
  lines: "Lines edited",
};

/** The order's own fields as the page labels them, for refusals. */
const FIELDS: Record<string, string> = {
  "shipping_info.trackingnumber": "Tracking number",
  "shipping_info.company": "Carrier",
  cancel_reason: "Reason",
};

function Actions({ order, busy, change }: OrderProps) {
  const [tracking, setTracking] = useState(order.shipping_info.trackingnumber ?? "");
  const [company, setCompany] = useState(order.shipping_info.company ?? "");
  const [cancelling, setCancelling] = useState(false);
  const [invoice, setInvoice] = useState(false);
  const allowed = actionsFor(order.status);
  const unpaid = allowed.pay;
  const refund = order.date_paid
    ? refundNote([{ total: String(order.total), method: order.payment.method }], order.currency)
    : "";
  useDirty(tracking !== (order.shipping_info.trackingnumber ?? "") || company !== (order.shipping_info.company ?? ""));
  const ship = (e: Event) => {
    e.preventDefault();
    const info: { trackingnumber?: string; company?: string } = {};
    if (tracking.trim()) info.trackingnumber = tracking.trim();
    if (company.trim()) info.company = company.trim();
    change(
      { status: "done", shipping_info: info },
      unpaid ? "Shipped unpaid: the invoice is still open." : "Marked shipped.",
    );
  };
  return (
    <section class="actions" aria-labelledby="actions-h">
      <h2 id="actions-h" class="sr-only">
        Actions
      </h2>
      {allowed.pay && (
        <button type="button" disabled={busy} onClick={() => change({ status: "paid" }, "Marked paid.")}>
          Mark paid
        </button>
      )}
      {allowed.ship && (
        <form class="ship" onSubmit={ship}>
          <div>
            <label for="tracking">Tracking number</label>
            <input id="tracking" value={tracking} maxlength={255} onInput={(e) => setTracking(e.currentTarget.value)} />
          </div>
          <div>
            <label for="company">Carrier</label>
            <input id="company" value={company} maxlength={255} onInput={(e) => setCompany(e.currentTarget.value)} />
          </div>
          {unpaid && (
            <label class="check">
              <input type="checkbox" checked={invoice} onChange={(e) => setInvoice(e.currentTarget.checked)} /> Ship
              unpaid (invoice)
            </label>
          )}
          <button type="submit" disabled={busy || (unpaid && !invoice)}>
            {unpaid ? "Ship unpaid" : "Mark shipped"}
          </button>
        </form>
      )}
      <div class="cancel">
        {cancelling ? (
          <CancelForm
            id="reason"
            legend={`Cancel order #${order.order_id} (total ${money(order.total, order.currency)})?`}
            shipped={allowed.shipped}
            shippedNote="it was shipped: only if the goods came back"
            confirm="Cancel order"
            keep="Keep it"
            busy={busy}
            note={refund}
            onConfirm={(restock, reason) =>
              change(
                { status: "cancelled", restock, ...(reason ? { cancel_reason: reason } : {}) },
                `${restock ? "Cancelled; stock returned." : "Cancelled; stock not returned."}${refund ? ` Nothing was refunded: refund ${money(order.total, order.currency)} with the payment provider if it is due.` : ""}`,
              )
            }
            onKeep={() => setCancelling(false)}
          />
        ) : (
          <button type="button" class="danger" onClick={() => setCancelling(true)}>
            Cancel…
          </button>
        )}
      </div>
    </section>
  );
}
