// One CSV cell (RFC 4180), safe to open in a spreadsheet (docs/admin.md, "Orders"). Apart from
// the rest of the export so that the Worker's tests can hold it to the rules (it imports nothing).

// What a spreadsheet may read as a formula, after the OWASP guidance on CSV injection: a cell
// that starts with = + - @, also after leading spaces or tabs (" =HYPERLINK(...)",
// "\t=HYPERLINK(...)"), or that starts with a tab or a carriage return at all.
const FORMULA = /^(?:[\t\r]|[\s]*[=+\-@])/;
// A signed number, such as the phone number +46701234567 or -12: no formula can hide in it.
const SIGNED_NUMBER = /^[+-][\d ]+$/;

/** The cell of `v`: quoted when needed, and a possible formula made text by a leading `'`. */
export function csvCell(v: string | number): string {
  const s = String(v);
  const safe = FORMULA.test(s) && !SIGNED_NUMBER.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}
