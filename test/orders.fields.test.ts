import { getTableColumns } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { customers, orderLines, orders } from "../src/db/schema";
import {
  CUSTOMER_FIELDS,
  isText,
  LINE_FIELDS,
  MODELLED_LINE_LAYOUT,
  MODELLED_ORDER_LAYOUT,
  ORDER_FIELDS,
  PLAIN_LINE,
  PLAIN_ORDER,
  SETTABLE,
} from "../src/orders/fields";
import { estimateSql } from "../src/orders/modelled-json";
import { createProduct, get, post, put, uid } from "./helpers";

// The field descriptions (src/orders/fields.ts) are where an order, line or customer field is
// added (CONTRIBUTING.md, "Adding an order field"). Everything else is derived from them; these
// tests fail when a column is left undescribed, or a described field does not reach a place the
// type system cannot check: the answers of both dialects, the PUT, the size estimate.

// Columns no answer shows, each for its reason (a new column is described, or added here).
const UNANSWERED = {
  // The token reads a storefront's order back (docs/keys.md); key_id is answered as `key` (read.ts);
  // storefront and version drive the hold and the write guards; tax is answered per rate (SPECIAL).
  orders: ["token", "keyId", "storefront", "version", "tax"],
  orderLines: ["orderId", "position"],
  // A customer is answered only as the order's customer_id; email_key is lower(email).
  customers: ["id", "emailKey", "createdAt", "updatedAt"],
};

const keysAt = (value: unknown, prefix = ""): string[] =>
  Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
    v !== null &&
    typeof v === "object" &&
    !Array.isArray(v) &&
    prefix === "" &&
    k !== "shipping_details" &&
    k !== "billing_details"
      ? keysAt(v, `${k}.`)
      : [`${prefix}${k}`],
  );
const at = (value: unknown, path: string) =>
  path.split(".").reduce<unknown>((v, k) => (v as Record<string, unknown>)?.[k], value);

describe("order field descriptions", () => {
  it.each([
    ["orders", orders, Object.values(ORDER_FIELDS).flatMap((f) => ("column" in f ? [f.column] : []))],
    ["orderLines", orderLines, Object.values(LINE_FIELDS).flatMap((f) => ("column" in f ? [f.column] : []))],
    ["customers", customers, Object.values(CUSTOMER_FIELDS).map((f) => f.column as string)],
  ] as const)("every column of %s is described or unanswered for a reason", (name, table, described) => {
    const unanswered: readonly string[] = UNANSWERED[name];
    const known: readonly string[] = described;
    const missing = Object.keys(getTableColumns(table)).filter((c) => !known.includes(c) && !unanswered.includes(c));
    expect(missing).toEqual([]);
  });

  it("the size estimate counts every text the modelled answer carries", () => {
    for (const [fields, alias, table] of [
      [PLAIN_ORDER, "o", orders],
      [PLAIN_LINE, "l", orderLines],
    ] as const) {
      for (const f of fields as readonly {
        column: string;
        kind: Parameters<typeof isText>[0];
        modelled?: unknown[];
      }[]) {
        if (!isText(f.kind) || !f.modelled?.length) continue;
        const column = (getTableColumns(table) as Record<string, { name: string }>)[f.column].name;
        expect(estimateSql(true)).toContain(`length(${alias}.${column})`);
      }
    }
  });

  it("every text field a create or a PUT sets is stored and answered at its paths, in both dialects", async () => {
    const sku = uid();
    await createProduct({ sku, title: "Described", price: "10", stock: 100 });
    const texts = PLAIN_ORDER.filter((f) => f.kind === "text" && f.create);
    const values = new Map(
      texts.map((f, i) => [f.path, f.path.endsWith("email") ? `${uid("f")}@example.com` : `v${i}`]),
    );
    // Fields with their own format: a phone number, a currency code.
    values.set("customer.phone", "+46701234567");
    values.set("payment.currency", "EUR");
    const body: Record<string, Record<string, unknown>> = { products: { 0: { sku, qty: 1 } } };
    for (const [path, v] of values) {
      const [group, key] = path.split(".");
      if (key === undefined) body[group] = v as never;
      else body[group] = { ...body[group], [key]: v };
    }
    const created = await post("/v1/orders", [{ order_id: "create", ...body, products: [{ sku, qty: 1 }] }]);
    const id = created.json.results.create_1.order_id as number;
    expect(id, JSON.stringify(created.json)).toBeGreaterThan(0);
    const sets = SETTABLE.map((f, i) => [f, `set${i}`] as const);
    const change: Record<string, Record<string, unknown>> = {};
    for (const [f, v] of sets) {
      const [group, key] = f.path.split(".");
      change[group] = { ...change[group], [key]: v };
    }
    expect((await put("/v1/orders", { order_id: id, ...change })).status).toBe(200);

    const own = (await get(`/v1/orders/${id}`)).json;
    const modelled = (await get(`/v1/orders?order_id=${id}`)).json[0];
    for (const f of [...texts, ...SETTABLE]) {
      const v = values.get(f.path) ?? sets.find(([s]) => s === f)?.[1];
      expect(at(own, f.path), f.path).toBe(v);
      for (const slot of f.modelled ?? []) expect(at(modelled, slot.at), `${f.path} as ${slot.at}`).toBe(v);
    }
  });

  it("the modelled answer has every described slot and layout key, in the layout's order", async () => {
    const sku = uid();
    await createProduct({ sku, title: "Layout", price: "10", stock: 100 });
    const created = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }]);
    const id = created.json.results.create_1.order_id as number;
    const [order] = (await get(`/v1/orders?order_id=${id}`)).json;
    // A slot the layout does not place comes last in its object.
    for (const [keys, layout, fields] of [
      [keysAt(order), MODELLED_ORDER_LAYOUT, PLAIN_ORDER],
      [Object.keys(order.products[0]), MODELLED_LINE_LAYOUT, PLAIN_LINE],
    ] as const) {
      const slots = (fields as readonly { modelled?: readonly { at: string }[] }[]).flatMap((f) =>
        (f.modelled ?? []).map((sl) => sl.at),
      );
      const placed: readonly string[] = layout;
      expect(keys.filter((k) => placed.includes(k))).toEqual(layout);
      expect([...keys].sort()).toEqual([...new Set([...layout, ...slots])].sort());
    }
    const own = (await get(`/v1/orders/${id}`)).json;
    const ownKeys = keysAt(own).filter((k) => k !== "key" && k !== "history");
    expect(ownKeys).toEqual(Object.keys(ORDER_FIELDS));
    expect(Object.keys(own.products[0])).toEqual(Object.keys(LINE_FIELDS));
  });
});
