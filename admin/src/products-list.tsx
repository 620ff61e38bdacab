// The product list (docs/admin.md, "Products"): search, stock at a glance, and low stock marked
// per variant at a threshold the merchant sets. One product's form is ./products.tsx.
import { useState } from "preact/hooks";
import { can, currentSession } from "./api";
import { Pager, SearchForm, usePagedList } from "./list";
import type { ProductRow } from "./types";
import { Heads, Message, money, Title } from "./ui";

const PAGE = 50;
const LOW_KEY = "edge-store-admin-low-stock";
/**
 * At or below this many in stock, a product or variant is marked low (docs/admin.md,
 * "Products"): 5 unless the merchant set another figure in this browser.
 */
export let LOW_STOCK = (() => {
  const n = Number(localStorage.getItem(LOW_KEY) ?? "5");
  return Number.isInteger(n) && n >= 0 ? n : 5;
})();

export const currency = () => currentSession()?.currency ?? "";

/** A stock figure, marked low at or below LOW_STOCK. */
export const Stock = ({ n }: { n: number | string }) => (
  <span class={Number(n) <= LOW_STOCK ? "low" : ""}>
    {n}
    {Number(n) <= LOW_STOCK && (
      <>
        {" "}
        <span class="badge low-badge">low</span>
      </>
    )}
  </span>
);

export function ProductsPage() {
  const list = usePagedList<ProductRow>("/v1/products", PAGE, { include_details: "true" });
  const [low, setLow] = useState(String(LOW_STOCK));
  const { data, error, loading } = list;
  const lowOf = (p: ProductRow) => (p.variants ?? []).filter((v) => Number(v.qty) <= LOW_STOCK);
  return (
    <>
      <Title>Products</Title>
      {can("products:write") && (
        <p>
          <a class="button" href="#/products/new">
            New product
          </a>
        </p>
      )}
      <SearchForm list={list} id="psearch" label="Title, SKU or GTIN">
        <div>
          <label for="low">Low stock at or below</label>
          <input
            id="low"
            class="qty"
            type="number"
            min={0}
            value={low}
            onInput={(e) => {
              const v = e.currentTarget.value;
              setLow(v);
              if (/^\d+$/.test(v)) {
                LOW_STOCK = Number(v);
                localStorage.setItem(LOW_KEY, v);
              }
            }}
          />
        </div>
      </SearchForm>
      <Message error={error} />
      {loading && <p role="status">Loading…</p>}
      {data && (
        <>
          <div class="scroll" tabindex={0}>
            <table class="list">
              <caption class="sr-only">Products; stock of {LOW_STOCK} or less is marked low</caption>
              <Heads columns={["Product", "SKU", ["Price", "num"], ["Stock", "num"], "Visible"]} />
              <tbody>
                {data.rows.map((p) => (
                  <tr class={Number(p.stock) <= LOW_STOCK || lowOf(p).length ? "row-low" : ""}>
                    <td>
                      <a href={`#/products/${p.id}`}>{p.title}</a>
                      {p.hasVariants === "1" && (
                        <>
                          {" "}
                          <span class="muted">(variants)</span>
                        </>
                      )}
                    </td>
                    <td>{p.sku}</td>
                    <td class="num">{priceOf(p)}</td>
                    <td class="num">
                      <Stock n={p.stock} />
                      <LowVariants low={lowOf(p)} />
                    </td>
                    <td>{p.visible === "1" ? "yes" : "hidden"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {data.rows.length === 0 && <p>No products match.</p>}
          <Pager list={list} />
        </>
      )}
    </>
  );
}

type Listed = NonNullable<ProductRow["variants"]>[number];

/**
 * What orders charge: the product's price, or for a product with variants theirs (its own price
 * is only what a new variant starts at), as a range when they differ.
 */
function priceOf(p: ProductRow) {
  const prices = (p.variants ?? []).map((v) => Number(v.price));
  if (!prices.length) return money(p.price, currency());
  const [low, high] = [Math.min(...prices), Math.max(...prices)];
  return low === high ? money(low, currency()) : `${money(low)}–${money(high, currency())}`;
}

/** Low variants folded into their count; the count opens the list of them. */
function LowVariants({ low }: { low: Listed[] }) {
  // Listed only once opened: a large product's low variants would otherwise all be in the page.
  const [open, setOpen] = useState(false);
  if (!low.length) return null;
  return (
    <details class="low-variant" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        {low.length} {low.length === 1 ? "variant" : "variants"} low
      </summary>
      <ul>
        {(open ? low : []).map((v) => (
          <li>
            {variantName(v)}: <Stock n={v.qty} />
          </li>
        ))}
      </ul>
    </details>
  );
}

/** A listed variant's name: its option values, else its SKU. */
const variantName = (v: Listed) => v.values?.map((x) => x.val).join(" / ") || v.sku || `#${v.id}`;
