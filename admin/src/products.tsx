// A product's edit form (the list is ./products-list.tsx): title, price, stock, visibility, and
// its variants' stock and prices, saved in one PUT. Prices take a decimal comma or point. A stock
// field takes a change ("+5", "-2") or a new count; both go to the API as an `adjust`, a count
// with the figure it was typed against as `expected_qty` (docs/stock.md), so a sale made
// meanwhile is never overwritten: the page says the figure changed and keeps what was typed
// (docs/admin.md).
import { useState } from "preact/hooks";
import { api, can } from "./api";
import { currency, LOW_STOCK, Stock } from "./products-list";
import type { Product, Variant } from "./types";
import { Heads, Message, moneyInput, parseMoney, placeErrors, Title, useAction, useDirty, useLoad } from "./ui";

const optionText = (v: Variant) =>
  ([1, 2, 3, 4, 5] as const)
    .map((i) => v[`variant_option${i}_value`])
    .filter(Boolean)
    .join(" / ");

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
const CONFLICT = /^(?:variants\.update\[(\d+)\]\.)?expected_(?:qty|stock): .* has (?:qty|stock) (-?\d+), not -?\d+$/;

const STOCK_HINT = "A new count (16), or a change: +5 arrived, -2 broken.";

/** A stock field: a count or a change, with what it means and, after a refusal, the figure now. */
function StockInput({
  id,
  label,
  value,
  now,
  disabled,
  shown,
  onInput,
}: {
  id: string;
  label?: string;
  /** The hint on screen under the field, not only read out (one field alone; a table says it once). */
  shown?: boolean;
  value: string;
  now?: number;
  disabled?: boolean;
  onInput: (v: string) => void;
}) {
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
      <span id={`${id}-hint`} class={now !== undefined ? "changed" : shown ? "hint" : "sr-only"}>
        {now === undefined ? STOCK_HINT : `Changed since you opened it: now ${now}`}
      </span>
    </>
  );
}

export function ProductPage({ id }: { id: string }) {
  const { data: p, error, reload } = useLoad(() => api<Product>("GET", `/v1/products/${id}`).then((r) => r.body), [id]);
  // Kept here: the form below starts afresh from each saved version, the message stays.
  const action = useAction();
  if (error)
    return (
      <>
        <Title>Product {id}</Title>
        <Message error={error} />
        <p>
          <a href="#/products">Back to products</a>
        </p>
      </>
    );
  if (!p) return <p role="status">Loading…</p>;
  return (
    <>
      <p class="back">
        <a href="#/products">← Products</a>
      </p>
      <ProductForm key={p.updated_at} product={p} reload={reload} action={action} />
    </>
  );
}

function ProductForm({
  product: p,
  reload,
  action,
}: {
  product: Product;
  reload: () => Promise<void>;
  action: ReturnType<typeof useAction>;
}) {
  const [title, setTitle] = useState(p.title);
  const [price, setPrice] = useState(moneyInput(p.price));
  const [stock, setStock] = useState(String(p.stock));
  const [visible, setVisible] = useState(p.visible === 1);
  const [variants, setVariants] = useState(() =>
    p.variants.map((v) => ({ qty: String(v.qty), price: moneyInput(v.price) })),
  );
  const [invalid, setInvalid] = useState("");
  // The counts the stock fields are typed against: as loaded, then as a refusal said they are.
  const [base, setBase] = useState(() => ({ stock: p.stock, qty: p.variants.map((v) => v.qty) }));
  const [now, setNow] = useState<{ stock?: number; qty: (number | undefined)[] }>({ qty: [] });
  useDirty(
    title !== p.title ||
      parseMoney(price) !== p.price.toFixed(2) ||
      stock !== String(p.stock) ||
      visible !== (p.visible === 1) ||
      variants.some(
        (v, i) => v.qty !== String(p.variants[i].qty) || parseMoney(v.price) !== p.variants[i].price.toFixed(2),
      ),
  );
  /** The form's labels for the API's field paths, so a refusal names what is on screen. */
  const label = (path: string) => {
    const top: Record<string, string> = {
      title: "Title",
      price: "Price",
      stock: "Stock",
      adjust: "Stock",
      expected_stock: "Stock",
      visible: "Visible",
    };
    if (top[path]) return top[path];
    const m = /^variants\.update\[(\d+)\]\.(qty|adjust|expected_qty|price)$/.exec(path);
    const v = m && sentVariants[Number(m[1])];
    return v ? `${m[2] === "price" ? "Price" : "Stock"} of ${optionText(v) || v.sku}` : undefined;
  };
  let sentVariants: Variant[] = [];
  const writable = can("products:write");
  const edit = (i: number, field: "qty" | "price", value: string) =>
    setVariants(variants.map((v, j) => (j === i ? { ...v, [field]: value } : v)));
  const save = (e: Event) => {
    e.preventDefault();
    // Only what changed is sent: one PUT for the product and all its variants.
    const body: Record<string, unknown> = { product_id: p.product_id };
    const prices = [price, ...variants.map((v) => v.price)].map(parseMoney);
    const bad = prices.indexOf(undefined);
    if (bad >= 0) {
      const where = bad === 0 ? "Price" : `Price of ${optionText(p.variants[bad - 1]) || p.variants[bad - 1].sku}`;
      setInvalid(`${where}: write an amount such as 399.50 or 399,50`);
      return;
    }
    const own = p.variants.length === 0 ? stockChange(stock, base.stock) : null;
    const changes = p.variants.map((_, i) => stockChange(variants[i].qty, base.qty[i]));
    const badStock = own === undefined ? "Stock" : changes.indexOf(undefined);
    if (badStock !== -1) {
      const where =
        typeof badStock === "string"
          ? badStock
          : `Stock of ${optionText(p.variants[badStock]) || p.variants[badStock].sku}`;
      setInvalid(`${where}: write a count such as 16, or a change such as +5 or -2`);
      return;
    }
    setInvalid("");
    if (title !== p.title) body.title = title;
    if (prices[0] !== p.price.toFixed(2)) body.price = prices[0];
    if (own) {
      body.adjust = own.adjust;
      if (own.expected !== undefined) body.expected_stock = own.expected;
    }
    if (visible !== (p.visible === 1)) body.visible = visible ? 1 : 0;
    const update = p.variants
      .map((v, i) => {
        const u: Record<string, unknown> = { variant_id: v.variant_id };
        const c = changes[i];
        if (c) {
          u.adjust = c.adjust;
          if (c.expected !== undefined) u.expected_qty = c.expected;
        }
        if (prices[i + 1] !== v.price.toFixed(2)) u.price = prices[i + 1];
        return u;
      })
      .filter((u) => Object.keys(u).length > 1);
    sentVariants = update.map((u) => p.variants.find((v) => v.variant_id === u.variant_id) as Variant);
    if (update.length) body.variants = { update };
    if (Object.keys(body).length === 1) return action.run(async () => {}, "Nothing changed.");
    return action.run(
      async () => {
        try {
          await api("PUT", "/v1/products", body);
        } catch (e) {
          throw changed(e);
        }
        await reload();
      },
      "Saved.",
      label,
    );
  };
  /**
   * A count typed against a figure that changed since: nothing was saved. The fields keep what
   * was typed and are from now on typed against the figure the refusal gives, which the page
   * shows; saving again then means that count, knowingly.
   */
  const changed = (e: unknown) => {
    const errors = (e as { errors?: string[] }).errors ?? [];
    const next = { stock: base.stock, qty: [...base.qty] };
    const shown = { ...now, qty: [...now.qty] };
    const words: string[] = [];
    const others: string[] = [];
    for (const err of errors) {
      const m = CONFLICT.exec(err);
      if (!m) {
        others.push(err);
        continue;
      }
      const current = Number(m[2]);
      const v = m[1] === undefined ? undefined : sentVariants[Number(m[1])];
      const i = v ? p.variants.indexOf(v) : -1;
      if (i >= 0) {
        words.push(`Stock of ${optionText(v as Variant) || v?.sku} is ${current} now, not ${next.qty[i]}`);
        next.qty[i] = shown.qty[i] = current;
      } else {
        words.push(`Stock is ${current} now, not ${next.stock}`);
        next.stock = shown.stock = current;
      }
    }
    if (!words.length) return e;
    setBase(next);
    setNow(shown);
    return new Error(
      `Changed since you opened it: ${words.join("; ")} (an order or another person moved it). Nothing was saved; what you typed is kept. Save again to set it as typed, or write a change such as +5.${others.length ? ` Also: ${placeErrors(others, label)}` : ""}`,
    );
  };
  return (
    <>
      <Title>{p.title}</Title>
      <Message error={invalid || action.error} ok={invalid ? "" : action.ok} />
      <form class="product" onSubmit={save}>
        <fieldset disabled={!writable}>
          <legend>Product {p.sku && <span class="muted">{p.sku}</span>}</legend>
          <div>
            <label for="title">Title</label>
            <input id="title" required maxlength={255} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
          </div>
          <div>
            <label for="price">Price</label>
            <input
              id="price"
              inputmode="decimal"
              required
              aria-describedby="price-hint"
              value={price}
              onInput={(e) => setPrice(e.currentTarget.value)}
            />
            <p id="price-hint" class="hint">
              In {currency() || "the store's currency"}; a decimal comma or point (399,50 or 399.50).
            </p>
          </div>
          {p.variants.length === 0 ? (
            <div>
              <label for="stock">Stock</label>
              <StockInput id="stock" value={stock} now={now.stock} shown onInput={setStock} />
            </div>
          ) : (
            <p class="hint">
              Stock: <Stock n={p.stock} /> in all, set per variant below.
            </p>
          )}
          <label class="check">
            <input type="checkbox" checked={visible} onChange={(e) => setVisible(e.currentTarget.checked)} /> Visible in
            the shop
          </label>
        </fieldset>
        {p.variants.length > 0 && writable && (
          <p class="hint">Stock of each variant: a new count (16), or a change: +5 arrived, -2 broken.</p>
        )}
        {p.variants.length > 0 && (
          <div class="scroll" tabindex={0}>
            <table class="list">
              <caption>Variants</caption>
              <Heads columns={["Variant", "SKU", ["Stock", "num"], ["Price", "num"]]} />
              <tbody>
                {p.variants.map((v, i) => (
                  <tr class={v.qty <= LOW_STOCK ? "row-low" : ""}>
                    <td>
                      {optionText(v) || `#${v.variant_id}`}
                      {v.qty <= LOW_STOCK && (
                        <>
                          {" "}
                          <span class="badge low-badge">low</span>
                        </>
                      )}
                    </td>
                    <td>{v.sku}</td>
                    <td class="num">
                      <StockInput
                        id={`qty-${v.variant_id}`}
                        label={`Stock of ${optionText(v) || v.sku}`}
                        value={variants[i].qty}
                        now={now.qty[i]}
                        disabled={!writable}
                        onInput={(value) => edit(i, "qty", value)}
                      />
                    </td>
                    <td class="num">
                      <input
                        class="price"
                        inputmode="decimal"
                        required
                        disabled={!writable}
                        aria-label={`Price of ${optionText(v) || v.sku}`}
                        value={variants[i].price}
                        onInput={(e) => edit(i, "price", e.currentTarget.value)}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {writable && (
          <button type="submit" disabled={action.busy}>
            Save
          </button>
        )}
      </form>
    </>
  );
}
