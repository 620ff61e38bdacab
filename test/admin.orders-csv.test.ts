import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { csvCell } from "../admin/src/csv";

// The admin's orders CSV (admin/src/orders-csv.ts, docs/admin.md "Orders") is opened in
// spreadsheets: a cell a spreadsheet could run as a formula is made text with a leading `'`,
// after the OWASP guidance on CSV injection. The export itself is driven in a browser by
// test/node/admin-orders.test.mjs.

/** The cell's value as a spreadsheet reads it back (RFC 4180 quoting undone). */
const unquote = (cell: string) => (cell.startsWith('"') ? cell.slice(1, -1).replaceAll('""', '"') : cell);

describe("a cell of the orders CSV", () => {
  it.each([
    ['=HYPERLINK("http://x.example","pay")', '\'=HYPERLINK("http://x.example","pay")'],
    ["+SUM(A1)", "'+SUM(A1)"],
    ["-2+3", "'-2+3"],
    ["@SUM(A1)", "'@SUM(A1)"],
    ['\t=HYPERLINK("http://x.example")', '\'\t=HYPERLINK("http://x.example")'],
    ["   =1+1", "'   =1+1"],
    [" \t @cmd", "' \t @cmd"],
    ["\tAnna", "'\tAnna"],
    ["\rAnna", "'\rAnna"],
  ])("makes %j text", (value, read) => {
    expect(unquote(csvCell(value))).toBe(read);
  });

  it.each([
    ["+46701234567", "+46701234567"],
    ["-12", "-12"],
    ["Anna Svensson", "Anna Svensson"],
    ["a = b", "a = b"],
    ["", ""],
    [199.5, "199.5"],
  ])("keeps %j as it is", (value, read) => {
    expect(unquote(csvCell(value))).toBe(read);
  });

  it("quotes a comma, a quote and a line break (RFC 4180)", () => {
    expect(csvCell('Storgatan 1, "B"')).toBe('"Storgatan 1, ""B"""');
    expect(csvCell("line\nbreak")).toBe('"line\nbreak"');
  });

  it("never lets a spreadsheet read a formula from any text", () => {
    const risky = fc.constantFrom("=", "+", "-", "@", "\t", "\r", " ", "\n", "a", "1", '"', ",");
    fc.assert(
      fc.property(fc.string({ unit: risky, maxLength: 12 }), fc.string(), (head, tail) => {
        const read = unquote(csvCell(head + tail));
        const formula = /^(?:[\t\r]|\s*[=+\-@])/.test(read) && !/^[+-][\d ]+$/.test(read);
        expect(formula).toBe(false);
        // Nothing else changes: the value is the input, or the input after one `'`.
        expect([head + tail, `'${head}${tail}`]).toContain(read);
      }),
    );
  });
});
