// A stock field and what it sends (docs/stock.md): a change ("+5", "-2") or a new count, both as
// an `adjust`, a count with the figure it was typed against as `expected_qty`, so a sale made
// while the page is open is never overwritten (docs/admin.md, "No lost work").

/**
 * What a stock field asks for: "+5" / "-2" a change; "16" a new count, turned into the change
 * from `base` (the count it was typed against) that holds only while the count is still `base`.
 * null: no change; undefined: not a count nor a change.
 */
export function stockChange(typed: string, base: number): { adjust: number; expected?: number } | null | undefined {
  const m = /^([+\-\u2212])?\s*(\d{1,9})$/.exec(typed.trim());
  if (!m) return undefined;
  const n = Number(m[2]);
  if (m[1]) return n === 0 ? null : { adjust: m[1] === "+" ? n : -n };
  return n === base ? null : { adjust: n - base, expected: base };
}

/** An expected count refused: "variants.update[1].expected_qty: variant 7 has qty 9, not 11". */
export const CONFLICT =
  /^(?:variants\.update\[(\d+)\]\.)?expected_(?:qty|stock): .* has (?:qty|stock) (-?\d+), not -?\d+$/;
const STOCK_HINT = "A new count (16), or a change: +5 arrived, -2 broken.";
export const COUNT = /^\d{1,9}$/;
/** A stock field: a count or a change, with what it means and, after a refusal, the figure now. */
export function StockInput(props: {
  id: string;
  label?: string;
  value: string;
  now?: number;
  disabled?: boolean;
  /** The hint on screen under the field (one field alone; a table says it once). */
  shown?: boolean;
  onInput: (v: string) => void;
}) {
  const { id, label, value, now, disabled, onInput } = props;
  return (
    <>
      <input
        id={id}
        class="qty"
        autocomplete="off"
        required
        disabled={disabled}
        aria-label={label}
        aria-describedby={`${id}-hint`}
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      <span id={`${id}-hint`} class={now !== undefined ? "changed" : props.shown ? "hint" : "sr-only"}>
        {now === undefined ? STOCK_HINT : `Changed since you opened it: now ${now}`}
      </span>
    </>
  );
}
