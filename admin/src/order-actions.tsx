// What the order page and the order list's bulk bar share (docs/admin.md, "Orders"): which
// actions an order's state allows, and the cancel form, so one order and several are cancelled
// the same way: a reason required once shipped, restock not pre-ticked for goods that left. Also
// what the order page's parts that change the order take (orders.tsx, order-lines.tsx).
import { useState } from "preact/hooks";
import type { Order } from "./types";
import { statusName, useDirty } from "./ui";

/** Sends a PUT /v1/orders element for the order, says `ok` when it went through, labels refused fields. */
export type Change = (
  body: Record<string, unknown>,
  ok: string,
  label?: (path: string) => string | undefined,
) => Promise<boolean | undefined>;
export type OrderProps = { order: Order; busy: boolean; change: Change };

/** The actions an order's status allows ("unpaid", "paid", "done", "cancelled" or their codes). */
export function actionsFor(status: string) {
  const name = statusName(status);
  return {
    pay: name === "unpaid",
    // An unpaid order ships only with the explicit "ship unpaid (invoice)" choice (orders.tsx).
    ship: name === "unpaid" || name === "paid",
    cancel: name !== "cancelled",
    shipped: name === "done",
  };
}

/**
 * What cancelling paid orders leaves to do (docs/admin.md, "Orders"): the store takes no money
 * back itself, so the merchant refunds with the payment provider. "" when none was paid.
 */
export function refundNote(paid: { total: string; method?: string | null }[], currency: string): string {
  if (!paid.length) return "";
  const sum = paid.reduce((n, o) => n + Math.round(Number(o.total) * 100), 0) / 100;
  const total = `${sum.toFixed(2)} ${currency}`;
  const methods = [...new Set(paid.map((o) => o.method).filter(Boolean))].join(", ");
  const what =
    paid.length === 1 ? `This order was paid (${total})` : `${paid.length} of them were paid (${total} in all)`;
  return `${what}. Cancelling refunds nothing: make any refund with the payment provider${methods ? ` (${methods})` : ""}. A cancellation cannot be undone.`;
}

/**
 * Asks before cancelling: the reason (required when `shipped`), whether to put the items back in
 * stock (not pre-ticked when `shipped`: only goods that came back return), confirm or keep.
 */
export function CancelForm({
  id,
  legend,
  shipped,
  shippedNote,
  confirm,
  keep,
  busy,
  note,
  onConfirm,
  onKeep,
}: {
  id: string;
  legend: string;
  /** What cancelling leaves to the merchant (a paid order's refund), said before they confirm. */
  note?: string;
  shipped: boolean;
  shippedNote: string;
  confirm: string;
  keep: string;
  busy: boolean;
  onConfirm: (restock: boolean, reason: string | undefined) => void;
  onKeep: () => void;
}) {
  const [reason, setReason] = useState("");
  const [restock, setRestock] = useState(!shipped);
  useDirty(reason !== "");
  return (
    <fieldset>
      <legend>{legend}</legend>
      {note && <p class="msg warn">{note}</p>}
      <div>
        <label for={id}>Reason{shipped ? "" : " (optional)"}</label>
        <input
          id={id}
          maxlength={255}
          required={shipped}
          value={reason}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      </div>
      <label class="check">
        <input type="checkbox" checked={restock} onChange={(e) => setRestock(e.currentTarget.checked)} /> Put the items
        back in stock{shipped ? ` (${shippedNote})` : ""}
      </label>
      <button
        type="button"
        class="danger"
        disabled={busy || (shipped && !reason.trim())}
        onClick={() => onConfirm(restock, reason.trim() || undefined)}
      >
        {confirm}
      </button>
      <button type="button" onClick={onKeep}>
        {keep}
      </button>
    </fieldset>
  );
}
