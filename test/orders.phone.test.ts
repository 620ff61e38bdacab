import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isE164, orderCreate, PHONE_ERROR } from "../src/orders/schema";
import { parseItem } from "../src/platform/fields";

// customer.phone over its input space (docs/orders.md, "Creating orders"): digits, spaces,
// + - ( ) / . and an extension are accepted as written; any other letter is refused by name.

const order = (phone: string) => ({ order_id: "create", customer: { phone }, products: [{ sku: "A", qty: 1 }] });
const parsePhone = (phone: string) => parseItem(orderCreate, order(phone));

const SEPARATORS = [" ", "+", "-", "(", ")", "/", "."];
const digit = fc.constantFrom(..."0123456789");
const body = fc
  .tuple(fc.array(fc.oneof(digit, fc.constantFrom(...SEPARATORS)), { maxLength: 30 }), digit, fc.nat(31))
  .map(([chars, d, at]) => {
    chars.splice(Math.min(at, chars.length), 0, d); // at least one digit
    return chars.join("");
  });
const extension = fc
  .tuple(fc.constantFrom("ext. ", "ext.", "ext ", "EXT ", "x", "X", "#", " x", " # "), fc.stringMatching(/^\d{1,6}$/))
  .map(([mark, n]) => mark + n);
// Letters that cannot spell an extension's mark (x, ext) wherever they land.
const letter = fc.constantFrom(..."abcdfghijklmnopqrsuvwyzABCDFGHIJKLMNOPQRSUVWYZåÄé");

describe("customer.phone", () => {
  it("accepts digits, spaces, + - ( ) / . and an extension, stored as written or in the international format", () => {
    fc.assert(
      fc.property(body, fc.option(extension, { nil: "" }), (b, ext) => {
        const phone = `${b}${ext}`.slice(0, 64);
        fc.pre(/\d/.test(b.slice(0, 64)) && phone === `${b}${ext}`);
        const p = parsePhone(phone);
        expect(p.ok, phone).toBe(true);
        if (!p.ok) return;
        const stored = p.data.customer?.phone as string;
        const compact = phone.replace(/[\s\-./()]/g, "");
        expect(stored).toBe(isE164(compact) ? compact : phone.trim());
      }),
      { numRuns: 500 },
    );
  });

  it("refuses a letter anywhere outside an extension, naming customer.phone", () => {
    fc.assert(
      fc.property(body, fc.option(extension, { nil: "" }), letter, fc.nat(80), (b, ext, l, at) => {
        const valid = `${b}${ext}`;
        const i = Math.min(at, valid.length);
        const phone = `${valid.slice(0, i)}${l}${valid.slice(i)}`;
        fc.pre(phone.length <= 64);
        const p = parsePhone(phone);
        expect(p.ok, phone).toBe(false);
        if (!p.ok) expect(p.errors).toEqual([`customer.phone: ${PHONE_ERROR}`]);
      }),
      { numRuns: 500 },
    );
  });
});
