// Customers (docs/admin.md, "Customers"): the list with their orders, spend and latest order,
// searched by e-mail, name or phone; a customer's page with their details and latest orders.
import { api } from "./api";
import { Pager, SearchForm, usePagedList } from "./list";
import type { Customer, CustomerDetail } from "./types";
import { Heads, Message, money, orderState, Title, useLoad, when } from "./ui";

const PAGE = 25;

export function CustomersPage() {
  const list = usePagedList<Customer>("/v1/customers", PAGE, {}, (b) => (b as { customers: Customer[] }).customers);
  const { data, error, loading } = list;
  return (
    <>
      <Title>Customers</Title>
      <SearchForm list={list} id="csearch" label="E-mail, name or phone" />
      <Message error={error} />
      {loading && <p role="status">Loading…</p>}
      {data && data.rows.length === 0 && <p>No customers match.</p>}
      {data && data.rows.length > 0 && (
        <div class="scroll" tabindex={0}>
          <table class="list">
            <caption class="sr-only">Customers, newest first</caption>
            <Heads columns={["Name", "E-mail", ["Orders", "num"], ["Total spent", "num"], "Last order"]} />
            <tbody>
              {data.rows.map((c) => (
                <tr>
                  <td>
                    <a href={`#/customers/${c.customer_id}`}>{c.name || c.email}</a>
                  </td>
                  <td>{c.email}</td>
                  <td class="num">{c.orders_count}</td>
                  <td class="num">{money(c.total_spent, c.currency)}</td>
                  <td>
                    {c.last_order_id ? (
                      <a href={`#/orders/${c.last_order_id}`}>
                        #{c.last_order_id}, {when(c.last_order_at)}
                      </a>
                    ) : (
                      <span class="muted">none</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} />
    </>
  );
}

export function CustomerPage({ id }: { id: string }) {
  const { data: c, error } = useLoad(() => api<CustomerDetail>("GET", `/v1/customers/${id}`).then((r) => r.body), [id]);
  const address = (d: Record<string, unknown> | null) =>
    d &&
    [
      [d.firstname, d.lastname].filter(Boolean).join(" "),
      d.company_name,
      d.address,
      d.address2,
      [d.zipcode, d.city].filter(Boolean).join(" "),
      d.country,
    ]
      .filter(Boolean)
      .join(", ");
  return (
    <>
      <p>
        <a href="#/customers">← Customers</a>
      </p>
      <Title>{c ? c.name || c.email : `Customer ${id}`}</Title>
      <Message error={error} />
      {c && (
        <>
          <dl class="facts">
            <dt>E-mail</dt>
            <dd>{c.email}</dd>
            <dt>Phone</dt>
            <dd>{c.phone ?? "—"}</dd>
            <dt>Billing address</dt>
            <dd>{address(c.billing_details) || "—"}</dd>
            <dt>Orders</dt>
            <dd>{c.orders_count}</dd>
            <dt>Total spent</dt>
            <dd>{money(c.total_spent, c.currency)} (cancelled orders left out)</dd>
            <dt>Customer since</dt>
            <dd>{when(c.created_at)}</dd>
          </dl>
          <h2>
            Orders
            {c.orders_count > c.orders.length && ` (the latest ${c.orders.length} of ${c.orders_count})`}
          </h2>
          <p>
            <a href={`#/orders?q=${encodeURIComponent(c.email)}`}>Find every order with this e-mail in Orders</a>
          </p>
          <div class="scroll" tabindex={0}>
            <table class="list">
              <caption class="sr-only">Orders of {c.name || c.email}, newest first</caption>
              <Heads columns={["Order", "Date", "Status", ["Total", "num"]]} />
              <tbody>
                {c.orders.map((o) => {
                  const st = orderState(o.status, o.date_paid);
                  return (
                    <tr>
                      <td>
                        <a href={`#/orders/${o.order_id}`}>#{o.order_id}</a>
                      </td>
                      <td>{when(o.created_at)}</td>
                      <td>
                        <span class={`badge status-${st.name}`}>{st.label}</span>
                      </td>
                      <td class="num">{money(o.total, o.currency)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
    </>
  );
}
