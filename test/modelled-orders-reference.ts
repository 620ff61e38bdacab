import { dateText, moneyText } from "../src/platform/query";

// The reference presenters of orders in the modelled dialect (docs/modelled-reads.md, "Modelled
// reads"), in JavaScript over D1's row objects: what src/orders/modelled-json.ts builds in SQL must
// equal what these make (test/orders.list.json.test.ts). Ids, money and statuses as strings, dates
// as "YYYY-MM-DD HH:MM:SS" UTC; order lines' ids and qty are JSON numbers; missing text is "".

export type Row = Record<string, unknown>;

import { STATUS_CODES, type StatusName } from "../src/orders/modelled-json";

const s = (v: unknown) => (v === null || v === undefined ? "" : String(v));

type Address = {
  company_name?: string;
  firstname?: string;
  lastname?: string;
  address?: string;
  address2?: string;
  city?: string;
  zipcode?: string;
  country?: string;
};

const fullName = (a: Address) => [a.firstname, a.lastname].filter(Boolean).join(" ");

function addressBlock(a: Address) {
  return {
    company_name: s(a.company_name),
    full_name: fullName(a),
    address: s(a.address),
    address2: s(a.address2),
    city: s(a.city),
    zipcode: s(a.zipcode),
    country: s(a.country),
  };
}

const parseAddress = (json: unknown): Address => (typeof json === "string" ? JSON.parse(json) : {});

/** One order line: ids and qty as JSON numbers, the unit price as text, the variant's label. */
function modelledLine(l: Row) {
  const options = l.options === "[]" ? [] : (JSON.parse(l.options as string) as { value: string }[]);
  return {
    id: l.line_id as number,
    product_id: l.product_id as number,
    variant_id: (l.variant_id ?? null) as number | null,
    title: s(l.title),
    sku: s(l.sku),
    variant: options.map((o) => o.value).join(" / "),
    price: moneyText(l.unit_price as number),
    qty: l.qty as number,
  };
}

const taxTotal = (json: unknown) =>
  (typeof json === "string" ? (JSON.parse(json) as { amount: number }[]) : []).reduce((n, t) => n + t.amount, 0);

/** The documented fields of every order in a list (without include_details). */
export function modelledOrder(o: Row, lines: Row[]) {
  const status = o.status as StatusName;
  return {
    order_id: String(o.id),
    date_created: dateText(o.created_at as number),
    total_amount: moneyText(o.total as number),
    status: STATUS_CODES[status] ?? "",
    status_name: status,
    products: lines.map(modelledLine),
  };
}

/** An order with the detail fields (include_details=true, and every lookup by order_id): the list's, then these. */
export function modelledOrderDetails(o: Row, lines: Row[]) {
  const billing = parseAddress(o.billing_details);
  // An order without its own shipping address ships to the billing address.
  const shipping = o.shipping_details === null ? billing : parseAddress(o.shipping_details);
  return {
    ...modelledOrder(o, lines),
    date_paid: dateText(o.date_paid as number | null),
    status_date: o.status_date === null ? dateText(o.created_at as number) : dateText(o.status_date as number),
    currency: s(o.currency),
    items_amount: moneyText(o.subtotal as number),
    shipping_amount: moneyText(o.shipping_price as number),
    discount_amount: moneyText(o.discount as number),
    tax_amount: moneyText(taxTotal(o.tax)),
    total_pay_amount: moneyText(o.total as number),
    shipping_id: s(o.shipping_id),
    shipping_name: s(o.shipping_name),
    tracking_number: s(o.tracking_number),
    shipping_company: s(o.shipping_company),
    notes: s(o.note),
    // Prices include tax here, and no order is tax-free.
    is_taxfree: false,
    is_taxontop: false,
    paymethod: { method: s(o.payment_method), transaction_id: s(o.transaction_id) },
    customer: {
      email: s(o.email),
      phone: s(o.phone),
      customer_type: s(o.customer_type),
      company_name: s(billing.company_name),
      full_name: fullName(billing),
      address: s(billing.address),
      address2: s(billing.address2),
      city: s(billing.city),
      zipcode: s(billing.zipcode),
      country: s(billing.country),
      notes: s(o.note),
      shipping_details: addressBlock(shipping),
      billing_details: addressBlock(billing),
    },
  };
}

export type ModelledOrder = ReturnType<typeof modelledOrder> | ReturnType<typeof modelledOrderDetails>;
