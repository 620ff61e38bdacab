import { shippingMethods } from "../db/schema";
import type { Bindings, Credential } from "../env";
import { tokenMatches } from "../keys/public";
import { sqlNames } from "../platform/columns";
import { type DB, stmt } from "../platform/d1";
import { type MethodRow, toMethod } from "../shipping/service";
import { type Held, heldStatement, positiveOf, type StorefrontLimits, toHeld } from "./hold";
import type { StoredOrder } from "./read";
import type { OrderInput } from "./schema";
import type { Money } from "./totals";

// Orders made with a publishable key (docs/keys.md, "Storefront orders"): the key is public, so its
// body is a customer's wish and the store decides prices, shipping and what exists; no customer is
// linked, and the order's token reads it only with that key, for ORDER_TOKEN_DAYS.

export const NO_PRICES = "a publishable key cannot set prices";
export const NO_PAYMENT = "a publishable key cannot record a payment";
/** Why a storefront's line is refused past STOREFRONT_MAX_LINE_QTY, after the limit. */
export const STOREFRONT_LINE = "for a storefront order";
const PAYMENT_RECORDS = ["method", "transaction_id", "log"] as const;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * What a publishable key may not send in a raw order element, as errors: prices, and a payment
 * (docs/storefront.md, "Storefront orders"). A `payment.currency` is granted only when it is the
 * store's own (in any case; blank: none given; null is the schema's error, as for every key).
 */
export function refusedFields(value: unknown, currency: string): string[] {
  if (!isObject(value)) return [];
  const errors: string[] = [];
  for (const [i, l] of (Array.isArray(value.products) ? value.products : []).entries()) {
    if (isObject(l) && Object.hasOwn(l, "price")) errors.push(`products[${i}].price: ${NO_PRICES}`);
  }
  for (const k of ["discount_add", "discount"]) if (Object.hasOwn(value, k)) errors.push(`${k}: ${NO_PRICES}`);
  const s = value.shipping;
  if (isObject(s) && Object.hasOwn(s, "price")) errors.push(`shipping.price: ${NO_PRICES}`);
  const p = value.payment;
  if (!isObject(p)) return errors;
  const wish = p.currency;
  const blank = wish === undefined || wish === null || (typeof wish === "string" && wish.trim() === "");
  if (!blank && !(typeof wish === "string" && wish.trim().toUpperCase() === currency.toUpperCase())) {
    errors.push(`payment.currency: a publishable key's order is in the store's currency (${currency.toUpperCase()})`);
  }
  for (const k of PAYMENT_RECORDS) if (Object.hasOwn(p, k)) errors.push(`payment.${k}: ${NO_PAYMENT}`);
  return errors;
}

/** What the request tells about a storefront's order: where it came from, and the store's limits. */
export type StorefrontRequest = StorefrontLimits & {
  /** The client address (src/platform/client.ts) whose held units the order counts against. */
  address: string;
  keyName: string | null;
  /** Whether the key may see stock counts (its `stock` permission), in a refusal too. */
  showsStock: boolean;
  /** STOREFRONT_HOLD_MINUTES: when the address's oldest held order is released. */
  holdMinutes: number;
};

/** What a storefront's orders are planned with: the request, the store's visible shipping methods, and what the address holds. */
export type Storefront = StorefrontRequest & { methods: Map<number, MethodRow>; held: Held };

const M = sqlNames(shippingMethods);
/** The reads of the visible shipping methods (at most MAX_METHODS small rows) and of the address's held units. */
export const storefrontStatements = (db: DB, r: StorefrontRequest) => [
  stmt(db, `SELECT * FROM ${M.$} WHERE ${M.visible} = 1`),
  heldStatement(db, r.address),
];

export const toStorefront = (
  r: StorefrontRequest,
  [methods, held]: D1Result<Record<string, unknown>>[],
): Storefront => ({
  ...r,
  methods: new Map(methods.results.map((row) => [row.id as number, toMethod(row)])),
  held: toHeld(held),
});

export type Shipping = { id: number | null; name: string | null; price: Money };

/**
 * The shipping of a storefront's order: the method it names, at its price (free from free_over, by
 * the lines' subtotal), to a country it ships to; else an error pushed and undefined. A store with
 * no visible method has no shipping to charge.
 */
export function storefrontShipping(
  o: OrderInput,
  sf: Storefront,
  lines: { qty: number; unitPrice: Money }[],
  errors: string[],
  notices: string[],
): Shipping | undefined {
  const wanted = o.shipping?.id;
  if (wanted === undefined) {
    if (!sf.methods.size) return { id: null, name: null, price: 0 };
    errors.push("shipping.id: is required: name one of the store's shipping methods (GET /v1/shipping-methods)");
    return undefined;
  }
  const m = sf.methods.get(wanted);
  if (!m) {
    errors.push(`shipping.id: no shipping method ${wanted}`);
    return undefined;
  }
  const countries = JSON.parse(m.countries) as string[];
  if (countries.length) {
    const c = o.customer;
    const to = c?.shipping_details?.country ?? c?.billing_details?.country;
    if (to === undefined) {
      errors.push(
        `shipping.id: shipping method ${m.id} ships only to ${countries.join(", ")}: give customer.shipping_details.country`,
      );
      return undefined;
    }
    if (!countries.includes(to)) {
      errors.push(`shipping.id: shipping method ${m.id} does not ship to ${to}`);
      return undefined;
    }
  }
  if (o.shipping?.name !== undefined && o.shipping.name !== m.name) {
    notices.push(`shipping.name: the shipping method's own name "${m.name}" is stored`);
  }
  const free = m.freeOver !== null && lines.reduce((a, l) => a + l.qty * l.unitPrice, 0) >= m.freeOver;
  return { id: m.id, name: m.name, price: free ? 0 : m.price };
}

export const ORDER_TOKEN_DAYS = 30;
const DAY = 86_400_000;

/** How many days an order's token reads it: ORDER_TOKEN_DAYS, 30 unless set to a positive whole number. */
export const tokenDays = (env: Pick<Bindings, "ORDER_TOKEN_DAYS">) =>
  positiveOf(env.ORDER_TOKEN_DAYS) ?? ORDER_TOKEN_DAYS;

/** Whether a publishable key may read this order with the token it sent: its own, by this key, not too old. */
export async function tokenReads(
  order: StoredOrder,
  cred: Credential,
  sent: string | undefined,
  days: number,
  now: number,
): Promise<boolean> {
  const matches = await tokenMatches(order.token, sent);
  return matches && order.keyId === cred.keyId && order.createdAt + days * DAY > now;
}
