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
  onConfirm,
  onKeep,
}: {
  id: string;
  legend: string;
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
