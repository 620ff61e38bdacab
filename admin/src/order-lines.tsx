// An order's lines on its page (docs/admin.md, "Orders"): as a table, and for an unpaid order as
// an editor whose quantities, removals and new lines go in one PUT.
import { useState } from "preact/hooks";
import type { OrderProps } from "./order-actions";
import type { Order } from "./types";
import { Heads, money, useDirty } from "./ui";

export function Lines({ order }: { order: Order }) {
  return (
    <div class="scroll" tabindex={0}>
      <table class="list">
        <Heads columns={["Item", "SKU", ["Qty", "num"], ["Price", "num"], ["Total", "num"]]} />
        <tbody>
          {order.products.map((l) => (
            <tr>
              <LineTitle line={l} />
              <td>{l.sku}</td>
              <td class="num">{l.qty}</td>
              <td class="num">{money(l.price)}</td>
              <td class="num">{money(l.total)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** An unpaid order's lines, editable: quantities, removals and new lines go in one PUT. */
export function LinesEditor({ order, busy, change }: OrderProps) {
  const [qty, setQty] = useState(() => order.products.map((l) => String(l.qty)));
  const [sku, setSku] = useState("");
  const [addQty, setAddQty] = useState("1");
  useDirty(sku.trim() !== "" || qty.some((q, i) => q !== String(order.products[i].qty)));
  const save = (e: Event) => {
    e.preventDefault();
    // Kept lines keep their unit price: only quantities change here.
    const kept = order.products.map((l, i) => ({ l, qty: Number(qty[i]) })).filter(({ qty }) => qty > 0);
    const products: Record<string, unknown>[] = kept.map(({ l, qty }) => ({
      ...(l.variant_id ? { variant_id: l.variant_id } : l.product_id ? { product_id: l.product_id } : { sku: l.sku }),
      qty,
      price: l.price,
    }));
    // A refusal names products[i]: the line on screen it came from.
    const names = kept.map(({ l }) => `Quantity of ${l.title}${l.sku ? ` (${l.sku})` : ""}`);
    if (sku.trim()) {
      products.push({ sku: sku.trim(), qty: Number(addQty) });
      names.push(`New line ${sku.trim()}`);
    }
    change({ products }, "Lines saved.", (path) => {
      const m = /^products\[(\d+)\](?:\.(\w+))?$/.exec(path);
      return m ? names[Number(m[1])] : undefined;
    });
  };
  return (
    <form onSubmit={save}>
      <div class="scroll" tabindex={0}>
        <table class="list">
          <Heads columns={["Item", "SKU", ["Qty (0 removes)", "num"], ["Price", "num"], ["Total", "num"]]} />
          <tbody>
            {order.products.map((l, i) => (
              <tr>
                <LineTitle line={l} />
                <td>{l.sku}</td>
                <td class="num">
                  <input
                    class="qty"
                    type="number"
                    min="0"
                    max="100000"
                    required
                    aria-label={`Quantity of ${l.title} ${l.sku ?? ""}`}
                    value={qty[i]}
                    onInput={(e) => setQty(qty.map((q, j) => (j === i ? e.currentTarget.value : q)))}
                  />
                </td>
                <td class="num">{money(l.price)}</td>
                <td class="num">{money(l.total)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <fieldset class="add-line">
        <legend>Add a line</legend>
        <div>
          <label for="add-sku">SKU</label>
          <input id="add-sku" value={sku} onInput={(e) => setSku(e.currentTarget.value)} />
        </div>
        <div>
          <label for="add-qty">Qty</label>
          <input
            id="add-qty"
            class="qty"
            type="number"
            min="1"
            max="100000"
            value={addQty}
            onInput={(e) => setAddQty(e.currentTarget.value)}
          />
        </div>
      </fieldset>
      <button type="submit" disabled={busy}>
        Save lines
      </button>
    </form>
  );
}

/** A line's cell: its title, and its option values after it. */
function LineTitle({ line }: { line: Order["products"][number] }) {
  return (
    <td>
      {line.title}
      {line.options.length > 0 && (
        <>
          {" "}
          <span class="muted">{line.options.map((o) => o.value).join(" / ")}</span>
        </>
      )}
    </td>
  );
}
