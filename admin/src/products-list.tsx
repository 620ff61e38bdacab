// The product list (docs/admin.md, "Products"): search, stock at a glance, and low stock marked
// per variant at a threshold the merchant sets. One product's form is ./products.tsx.
import { useState } from "preact/hooks";
import { currentSession } from "./api";
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
                    <td class="num">{money(p.price, currency())}</td>
                    <td class="num">
                      <Stock n={p.stock} />
                      {lowOf(p).map((v) => (
                        <div class="low-variant">
                          {variantName(v)}: <Stock n={v.qty} />
                        </div>
                      ))}
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

/** A listed variant's name: its option values, else its SKU. */
const variantName = (v: NonNullable<ProductRow["variants"]>[number]) =>
  v.values?.map((x) => x.val).join(" / ") || v.sku || `#${v.id}`;
