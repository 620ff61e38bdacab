// The order list's CSV export (docs/admin.md, "Orders"): one row per order line, with what a
// packer or an accountant needs, safe to open in a spreadsheet.
import { api } from "./api";
import { csvCell } from "./csv";
import type { OrderRow } from "./types";
import { orderState } from "./ui";

/** The most orders one GET /v1/orders answers (docs/modelled-reads.md). */
const CSV_PAGE = 500;

/** Every order of a view (the list's parameters without paging), read page by page. */
export async function viewRows(params: URLSearchParams): Promise<OrderRow[]> {
  const rows: OrderRow[] = [];
  for (;;) {
    const p = new URLSearchParams(params);
    p.set("limit", String(CSV_PAGE));
    p.set("offset", String(rows.length));
    const page = (await api<OrderRow[]>("GET", `/v1/orders?${p}`)).body;
    rows.push(...page);
    if (page.length < CSV_PAGE) return rows;
  }
}

/** What a packer or an accountant needs, one row per order line. */
const CSV_COLUMNS = [
  "order",
  "date",
  "status",
  "paid",
  "customer",
  "email",
  "phone",
  "ship_to",
  "address",
  "zipcode",
  "city",
  "country",
  "shipping",
  "tracking",
  "sku",
  "item",
  "variant",
  "qty",
  "unit_price",
  "line_total",
  "order_total",
  "tax",
  "currency",
  "payment",
];

export function ordersCsv(orders: OrderRow[]): string {
  const lines = [CSV_COLUMNS.join(",")];
  for (const o of orders) {
    const to = o.customer.shipping_details;
    for (const l of o.products) {
      const row = [
        o.order_id,
        o.date_created,
        orderState(o.status, o.date_paid).label,
        o.date_paid ? "yes" : "no",
        o.customer.full_name,
        o.customer.email,
        o.customer.phone,
        to.full_name || to.company_name,
        [to.address, to.address2].filter(Boolean).join(", "),
        to.zipcode,
        to.city,
        to.country,
        o.shipping_name,
        o.tracking_number,
        l.sku,
        l.title,
        l.variant,
        l.qty,
        l.price,
        (Math.round(Number(l.price) * 100 * l.qty) / 100).toFixed(2),
        o.total_amount,
        o.tax_amount,
        o.currency,
        o.paymethod.method,
      ];
      lines.push(row.map(csvCell).join(","));
    }
  }
  return `${lines.join("\r\n")}\r\n`;
}

export function download(name: string, text: string) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}
