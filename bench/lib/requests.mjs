// The HTTP call the seeding and the cases make, and the variant lists both send.

/** @typedef {{ base: string, authorization: string }} Target */

/** @param {Target} t @param {string} method @param {string} path @param {unknown} [body] */
export async function request(t, method, path, body) {
  const res = await fetch(`${t.base}${path}`, {
    method,
    headers: { authorization: t.authorization, "content-type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  /** @type {any} */
  let json;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text };
}

/** @param {string} prefix @param {number} n @param {number} qty */
export const variantEntries = (prefix, n, qty) =>
  n > 256
    ? fiveOptions(prefix, n, qty)
    : Array.from({ length: n }, (_, i) => ({
        sku: `${prefix}-${i}`,
        variant_option1_name: "Size",
        variant_option1_value: `v${i}`,
        price: 100,
        qty,
      }));

// A large product as shops have them: five options (8 sizes x 8 colours x 8 materials x 4 x 1).
const FIVE = ["Size", "Colour", "Material", "Fit", "Edition"];
/** @param {string} prefix @param {number} n @param {number} qty */
const fiveOptions = (prefix, n, qty) =>
  Array.from({ length: n }, (_, i) => {
    const digits = [i % 8, (i >> 3) % 8, (i >> 6) % 8, (i >> 9) % 4, i >> 11];
    /** @type {Record<string, unknown>} */
    const e = { sku: `${prefix}-${i}` };
    FIVE.forEach((name, k) => {
      e[`variant_option${k + 1}_name`] = name;
      e[`variant_option${k + 1}_value`] = `${name[0]}${digits[k]}`;
    });
    e.price = 100;
    e.qty = qty;
    return e;
  });
