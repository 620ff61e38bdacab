import { z } from "zod";
import { clearable, country, flag, money, opt, precompile, req, str } from "../platform/fields";

// Wire schema of /v1/shipping-methods (docs/orders.md, "Shipping methods").

export const MAX_METHODS = 100;
export const MAX_COUNTRIES = 250;

const countries = z
  .array(country, { error: "must be an array of two-letter country codes" })
  .max(MAX_COUNTRIES, { error: `must list at most ${MAX_COUNTRIES} countries` })
  .refine((a) => new Set(a).size === a.length, { error: "must not repeat a country" });

const fields = {
  name: str(255),
  price: money,
  // null: the method never ships free.
  free_over: clearable(money),
  // [] or absent: ships anywhere.
  countries: opt(countries),
  visible: opt(flag),
};

export const methodCreate = z.object(
  { ...fields, name: req(fields.name), price: req(fields.price) },
  { error: "body must be a shipping method object" },
);
export type MethodInput = z.output<typeof methodCreate>;

/** PATCH: the fields given change, the others stay. */
export const methodUpdate = z.object(
  { ...fields, name: opt(fields.name), price: opt(fields.price) },
  { error: "body must be a shipping method object" },
);
export type MethodPatch = z.output<typeof methodUpdate>;

export const methodQuery = z.object({ country: opt(country) });

precompile(methodCreate);
precompile(methodUpdate);
