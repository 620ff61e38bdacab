import type { DB } from "../db/client";
import { shippingMethods } from "../db/schema";
import type { Bindings, Credential } from "../env";
import { tokenMatches } from "../keys/public";
import { sqlNames } from "../platform/columns";
import { rowMapper, stmt } from "../platform/d1";
import type { MethodRow } from "../shipping/service";
import type { StoredOrder } from "./read";
import type { OrderInput } from "./schema";
import type { Money } from "./totals";

// Orders made with a publishable key (docs/keys.md, "Storefront orders"). The key is public:
// what its body says is a customer's wish, and the store decides the rest. Prices come from the
// catalogue and the store's shipping methods, hidden items do not exist, no customer is linked,
// and the order's token reads it only with that key, for ORDER_TOKEN_DAYS.

export const NO_PRICES = "a publishable key cannot set prices";

/** The price fields of a raw order element that a publishable key may not send, as errors. */
export function priceFields(value: unknown): string[] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  const o = value as Record<string, unknown>;
  const errors: string[] = [];
  if (Array.isArray(o.products)) {
    o.products.forEach((l, i) => {
      if (l !== null && typeof l === "object" && Object.hasOwn(l, "price")) {
        errors.push(`products[${i}].price: ${NO_PRICES}`);
      }
    });
  }
  for (const k of ["discount_add", "discount"]) if (Object.hasOwn(o, k)) errors.push(`${k}: ${NO_PRICES}`);
  const s = o.shipping;
  if (s !== null && typeof s === "object" && Object.hasOwn(s, "price")) errors.push(`shipping.price: ${NO_PRICES}`);
  return errors;
}

/** What a storefront's orders are planned with: the store's visible shipping methods. */
export type Storefront = { methods: Map<number, MethodRow> };

const toMethod = rowMapper(shippingMethods);

/** The read of the visible shipping methods (at most MAX_METHODS small rows), for a batch. */
const M = sqlNames(shippingMethods);
export const storefrontStatement = (db: DB) => stmt(db, `SELECT * FROM ${M.$} WHERE ${M.visible} = 1`);

/** What storefrontStatement read. */
export const toStorefront = (r: D1Result<Record<string, unknown>>): Storefront => ({
  methods: new Map(r.results.map((row) => [row.id as number, toMethod(row)])),
});

export async function readStorefront(db: DB): Promise<Storefront> {
  return toStorefront(await storefrontStatement(db).all());
}

export type Shipping = { id: number | null; name: string | null; price: Money };

/**
 * The shipping of a storefront's order: the method it names, at the method's price (free from
 * free_over), to a country the method ships to. Pushes an error and answers undefined otherwise;
 * a store with no visible method has no shipping to charge.
 */
export function storefrontShipping(
  o: OrderInput,
  sf: Storefront,
  subtotal: Money,
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
  const free = m.freeOver !== null && subtotal >= m.freeOver;
  return { id: m.id, name: m.name, price: free ? 0 : m.price };
}

export const ORDER_TOKEN_DAYS = 30;
const DAY = 86_400_000;

/** How many days an order's token reads it: ORDER_TOKEN_DAYS, 30 unless set to a positive whole number. */
export function tokenDays(env: Pick<Bindings, "ORDER_TOKEN_DAYS">): number {
  const raw = env.ORDER_TOKEN_DAYS?.trim();
  const n = raw && /^\d+$/.test(raw) ? Number(raw) : 0;
  return n > 0 ? n : ORDER_TOKEN_DAYS;
}

/**
 * Whether a publishable key may read this order with the token it sent: the order's own token,
 * made by this very key, not older than the token's days.
 */
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
