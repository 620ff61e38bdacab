import { z } from "zod";
import { country, opt, str } from "../platform/fields";

// Validators of an order's customer block (docs/orders.md, "Creating orders"), used by the field
// descriptions of src/orders/fields.ts.

// Deliberately loose: one @, no spaces, a dot in the domain. Deliverability is the mailer's job.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const email = str(255)
  .transform((s) => s.trim())
  .refine((s) => EMAIL.test(s), { error: "must be an e-mail address" });

/** Whether a stored phone number is in the international format: + and 7 to 15 digits. */
export const isE164 = (s: string) => /^\+\d{7,15}$/.test(s);

/**
 * What a phone number may hold (docs/orders.md, "Creating orders"): digits, spaces and
 * `+ - ( ) / .`, at least one digit, then optionally an extension (`ext. 12`, `ext 12`, `x12`,
 * `#12`). Local formats vary too much to check more; letters other than an extension's are a
 * mistake (a name or an e-mail in the wrong field), never a number.
 */
const PHONE = /^[\d\s+\-()/.]*\d[\d\s+\-()/.]*(?:(?:ext\.?|x|#)\s*\d{1,10})?\s*$/i;
export const PHONE_ERROR = "must be a phone number: digits, spaces, + - ( ) / . and an extension (ext. 12, x12, #12)";

/**
 * A phone number (docs/orders.md, "Creating orders"): in the international format once spaces,
 * dashes, dots, slashes and brackets are removed, it is stored so (+46701234567); any other is
 * stored as written (070-765 43 21: real checkouts collect local numbers), and the order gets a notice.
 */
export const phone = str(64)
  .refine((s) => PHONE.test(s), { error: PHONE_ERROR })
  .transform((s) => {
    const compact = s.replace(/[\s\-./()]/g, "");
    return isE164(compact) ? compact : s.trim();
  });
export const PHONE_NOTICE =
  "customer.phone: stored as written; it is not in the international format (+ and 7 to 15 digits)";

export const address = z.object(
  {
    company_name: opt(str(255)),
    firstname: opt(str(255)),
    lastname: opt(str(255)),
    address: opt(str(255)),
    address2: opt(str(255)),
    city: opt(str(255)),
    zipcode: opt(str(255)),
    country: opt(country),
  },
  { error: "must be an address object" },
);
export type Address = z.output<typeof address>;
