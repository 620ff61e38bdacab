// A product's editor (the list is ./products-list.tsx), also for a new one (#/products/new):
// its fields (./product-fields.ts), options and variants (./variant-grid.ts), saved through the
// public API in one request, deleted after a confirmation naming it. A stock field takes a change
// ("+5", "-2") or a new count, sent as an `adjust` with, for a count, the figure it was typed
// against as `expected_qty` (docs/stock.md); product fields are sent with If-Match, so another
// tab's save is shown, not overwritten (docs/admin.md, "No lost work").
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, can } from "./api";
import { conflictOf, GUARDED, type Guarded, type Seen } from "./product-conflict";
import { FIELDS, type Field, fieldOf, same, stored, toApi, toValues, type Values } from "./product-fields";
import { FieldInput, Options, VariantTable } from "./product-parts";
import { CONFLICT, COUNT, StockInput, stockChange } from "./product-stock";
import { currency, Stock } from "./products-list";
import type { Product } from "./types";
import { ConfirmButton, Message, parseMoney, placeErrors, Title, useAction, useDirty, useLoad } from "./ui";
import {
  combinations,
  MAX_VARIANTS,
  makeGrid,
  type Option,
  optionFields,
  optionsOf,
  type Row,
  rowName,
  rowOf,
  usedOptions,
} from "./variant-grid";

type Loaded = { product: Product; etag: string };

export function ProductPage({ id }: { id: string }) {
  const isNew = id === "new";
  const load = useLoad<Loaded | null>(
    () =>
      isNew
        ? Promise.resolve(null)
        : api<Product>("GET", `/v1/products/${id}`).then((r) => ({
            product: r.body,
            etag: r.headers.get("ETag") ?? "",
          })),
    [id],
  );
  // Kept here: the form below starts afresh from each saved version, the message stays.
  const action = useAction();
  if (load.error)
    return (
      <>
        <Title>Product {id}</Title>
        <Message error={load.error} />
        <p>
          <a href="#/products">Back to products</a>
        </p>
      </>
    );
  if (!isNew && !load.data) return <p role="status">Loading…</p>;
  return (
    <>
      <p class="back">
        <a href="#/products">← Products</a>
      </p>
      <ProductForm
        key={load.data?.product.updated_at ?? "new"}
        loaded={load.data ?? undefined}
        reload={load.reload}
        action={action}
      />
    </>
  );
}

function ProductForm({
  loaded,
  reload,
  action,
}: {
  loaded?: Loaded;
  reload: () => Promise<void>;
  action: ReturnType<typeof useAction>;
}) {
  const p = loaded?.product;
  const [values, setValues] = useState(() => toValues(p ?? { tax_rate: 25 }));
  const [stock, setStock] = useState(String(p?.stock ?? 0));
  const original = p?.variants ?? [];
  const [options, setOptions] = useState<Option[]>(() => optionsOf(original));
  const [rows, setRows] = useState<Row[]>(() => original.map(rowOf));
  // The counts the stock fields are typed against: as loaded, then as a refusal said they are.
  const [counts, setCounts] = useState(() => ({
    stock: p?.stock ?? 0,
    qty: Object.fromEntries(original.map((v) => [v.variant_id, v.qty])) as Record<number, number>,
  }));
  const [nowQty, setNowQty] = useState<{ stock?: number; qty: Record<number, number> }>({ qty: {} });
  // What the product fields were when last seen (loaded, or as a 412 answered), and its ETag.
  const [seen, setSeen] = useState<Seen>(() => ({
    fields: p ?? {},
    variants: {},
    ids: original.map((v) => v.variant_id),
  }));
  const [etag, setEtag] = useState(loaded?.etag ?? "");
  const [nowField, setNowField] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [leaving, setLeaving] = useState("");
  const writable = can("products:write");
  const names = usedOptions(options);
  const structure =
    "error" in names
      ? false
      : rows.length !== original.length ||
        rows.some((r, i) => r.base !== original[i]) ||
        !same(
          names.names,
          optionsOf(original).map((o) => o.name),
        );
  const rowChanged = (r: Row) =>
    !r.base ||
    r.sku !== (r.base.sku ?? "") ||
    parseMoney(r.price) !== r.base.price.toFixed(2) ||
    r.qty !== String(r.base.qty) ||
    r.visible !== (r.base.visible === 1);
  const dirty =
    !leaving &&
    (FIELDS.some((f) => !same(values[f.key], toValues(p ?? { tax_rate: 25 })[f.key])) ||
      stock !== String(p?.stock ?? 0) ||
      structure ||
      rows.some(rowChanged));
  useDirty(dirty);
  useEffect(() => {
    if (leaving) location.hash = leaving;
  }, [leaving]);

  const setOptionsAndGrid = (next: Option[]) => {
    setOptions(next);
    const used = usedOptions(next);
    if ("error" in used) return;
    const n = combinations(used.values);
    if (n > MAX_VARIANTS) return;
    // Combinations typed away and back keep what was typed, or else what is stored.
    const known = [...original.map(rowOf).filter((r) => !rows.some((x) => x.base === r.base)), ...rows];
    const price = String(values.price);
    setRows(makeGrid(used.values, known, { sku: String(values.sku).trim(), price }));
  };
  const optionError =
    "error" in names
      ? names.error
      : combinations(names.values) > MAX_VARIANTS
        ? `Options: ${combinations(names.values).toLocaleString("en")} combinations; a product has at most 2,048 variants`
        : errors.options;
  const edit = (i: number, part: Partial<Row>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...part } : r)));

  /** Builds the request; {problems} when the form itself is not one. */
  const build = () => {
    const problems: Record<string, string> = {};
    const body: Record<string, unknown> = p ? { product_id: p.product_id } : {};
    const sent: Field[] = [];
    /** Variant fields written as typed (not stock, which its own guard keeps): If-Match covers them. */
    const guarded: Guarded[] = [];
    for (const f of FIELDS) {
      const r = toApi(f, values[f.key]);
      if ("error" in r) problems[f.key] = r.error;
      else if (p ? !same(r.value, stored(f, seen.fields)) : r.value !== null && !same(r.value, [])) {
        body[f.key] = r.value;
        sent.push(f);
      }
    }
    if (optionError) problems.options = optionError;
    const list = "error" in names ? { names: [], values: [] } : names;
    const price = (r: Row, i: number) => {
      const m = parseMoney(r.price);
      if (m === undefined) problems[`row:${i}`] = `Price of ${rowName(r)}: write an amount such as 399.50 or 399,50`;
      return m;
    };
    const count = (r: Row, i: number) => {
      if (!COUNT.test(r.qty.trim()))
        problems[`row:${i}`] = `Stock of ${rowName(r)}: a new variant starts at a count such as 16`;
      return Number(r.qty.trim());
    };
    const fresh = (r: Row, i: number) => ({
      ...optionFields(list.names, r.values),
      ...(r.sku.trim() ? { sku: r.sku.trim() } : {}),
      price: price(r, i),
      qty: count(r, i),
      visible: r.visible ? 1 : 0,
    });
    /** Where each entry of the lists sent came from: variants.add[2] is rows[5]. */
    const from: Record<string, number[]> = { add: [], sync: [], update: [] };
    if (!p) {
      if (rows.length) {
        body.variants = { add: rows.map(fresh) };
        from.add = rows.map((_, i) => i);
      } else if (COUNT.test(stock.trim())) body.stock = Number(stock.trim());
      else problems.stock = "Stock: write a count such as 16";
      return { body, sent, guarded, problems, from };
    }
    if (!rows.length && !original.length) {
      const own = stockChange(stock, counts.stock);
      if (own === undefined) problems.stock = "Stock: write a count such as 16, or a change such as +5 or -2";
      else if (own) {
        body.adjust = own.adjust;
        if (own.expected !== undefined) body.expected_stock = own.expected;
      }
    }
    const update: Record<string, unknown>[] = [];
    rows.forEach((r, i) => {
      const v = r.base;
      if (!v) return;
      const u: Record<string, unknown> = { variant_id: v.variant_id };
      const c = stockChange(r.qty, counts.qty[v.variant_id]);
      if (c === undefined)
        problems[`row:${i}`] = `Stock of ${rowName(r)}: write a count such as 16, or a change such as +5 or -2`;
      else if (c) {
        u.adjust = c.adjust;
        if (c.expected !== undefined) u.expected_qty = c.expected;
      }
      const m = price(r, i);
      if (m !== undefined && m !== v.price.toFixed(2)) u.price = m;
      if (r.sku.trim() !== (v.sku ?? "")) u.sku = r.sku.trim() || null;
      if (r.visible !== (v.visible === 1)) u.visible = r.visible ? 1 : 0;
      if (Object.keys(u).length > 1) {
        update.push(u);
        from.update.push(i);
      }
      const keys = GUARDED.filter((k) => k in u);
      if (keys.length) guarded.push({ i, id: v.variant_id, keys });
    });
    const variants: Record<string, unknown> = {};
    if (structure) {
      // Kept variants are matched by their stored SKU (else their values) and keep their stock;
      // their own changes go in `update`, which applies after the sync.
      variants.sync = rows.map((r, i) =>
        r.base ? { ...optionFields(list.names, r.values), ...(r.base.sku ? { sku: r.base.sku } : {}) } : fresh(r, i),
      );
      from.sync = rows.map((_, i) => i);
    }
    if (update.length) variants.update = update;
    if (Object.keys(variants).length) body.variants = variants;
    return { body, sent, guarded, problems, from };
  };

  /** The page's words for an API path, and the field or row it belongs to. */
  const place = (path: string, from: Record<string, number[]>): { label: string; at: string } | undefined => {
    const f = fieldOf(path);
    if (f) return { label: f.label, at: f.key };
    if (["stock", "adjust", "expected_stock"].includes(path)) return { label: "Stock", at: "stock" };
    const m = /^variants\.(add|sync|update)\[(\d+)\]\.(\w+)/.exec(path);
    const i = m ? from[m[1]][Number(m[2])] : undefined;
    if (m && i !== undefined && rows[i]) {
      const what = m[3] === "sku" ? "SKU" : m[3] === "price" ? "Price" : /qty|adjust/.test(m[3]) ? "Stock" : m[3];
      return { label: `${what} of ${rowName(rows[i])}`, at: `row:${i}` };
    }
    if (/^variants|^variant_option/.test(path)) return { label: "Options", at: "options" };
    return undefined;
  };

  const save = (e: Event) => {
    e.preventDefault();
    const { body, sent, guarded, problems, from } = build();
    setErrors(problems);
    if (Object.keys(problems).length) {
      return action.run(async () => {
        throw new Error(`Nothing was saved: ${Object.values(problems).join(" · ")}`);
      }, "");
    }
    if (p && Object.keys(body).length === 1) return action.run(async () => {}, "Nothing changed.");
    const guard = p && (sent.length || guarded.length || structure);
    const send = async (tag: string, again: boolean): Promise<unknown> => {
      try {
        return await api(p ? "PUT" : "POST", "/v1/products", body, guard ? { "If-Match": tag } : undefined);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 412 || !p) throw err;
        const current = (err.body as { products?: Product[] } | undefined)?.products?.[0];
        const next = err.headers?.get("ETag") ?? "";
        if (!current) throw err;
        setEtag(next);
        const c = conflictOf(current, { sent, guarded, structure }, seen, rows);
        if (!c) {
          if (again) return send(next, false);
          throw new Error("The product kept changing while this was saved; nothing was saved. Save again.");
        }
        setSeen(c.seen);
        setNowField(c.fields);
        setErrors(c.rows);
        throw new Error(c.message);
      }
    };
    return action.run(
      async () => {
        try {
          const out = (await send(etag, true)) as { body: { products: Product[] } };
          if (!p) {
            setLeaving(`#/products/${out.body.products[0].product_id}`);
            return;
          }
        } catch (err) {
          throw refusal(err, from);
        }
        await reload();
      },
      p ? "Saved." : "Created.",
    );
  };

  /**
   * A refusal placed beside the fields it names; a count typed against a figure that changed
   * since keeps what was typed and is from now on typed against the figure the refusal gives.
   */
  const refusal = (err: unknown, from: Record<string, number[]>) => {
    const list = (err as { errors?: string[] }).errors ?? [];
    if (!list.length) return err;
    const at: Record<string, string> = {};
    const next = { stock: counts.stock, qty: { ...counts.qty } };
    const now = { ...nowQty, qty: { ...nowQty.qty } };
    const moved: string[] = [];
    for (const e of list) {
      const m = CONFLICT.exec(e);
      if (m) {
        const current = Number(m[2]);
        const i = m[1] === undefined ? undefined : from.update[Number(m[1])];
        const v = i === undefined ? undefined : rows[i]?.base;
        if (v) {
          moved.push(`Stock of ${rowName(rows[i as number])} is ${current} now, not ${next.qty[v.variant_id]}`);
          next.qty[v.variant_id] = now.qty[v.variant_id] = current;
        } else {
          moved.push(`Stock is ${current} now, not ${next.stock}`);
          next.stock = now.stock = current;
        }
        continue;
      }
      const path = /^([\w.[\]]+): (.*)$/s.exec(e);
      const where = path ? place(path[1], from) : undefined;
      if (where && path)
        at[where.at] = at[where.at] ? `${at[where.at]} · ${where.label}: ${path[2]}` : `${where.label}: ${path[2]}`;
    }
    setErrors(at);
    const others = list.filter((e) => !CONFLICT.test(e));
    const placed = placeErrors(others, (path) => place(path, from)?.label);
    if (!moved.length) return new Error(placed);
    setCounts(next);
    setNowQty(now);
    return new Error(
      `Changed since you opened it: ${moved.join("; ")} (an order or another person moved it). Nothing was saved; what you typed is kept. Save again to set it as typed, or write a change such as +5.${others.length ? ` Also: ${placed}` : ""}`,
    );
  };

  const remove = () =>
    action.run(async () => {
      await api("DELETE", "/v1/products", { product_id: p?.product_id });
      setLeaving("#/products");
    }, "Deleted.");

  const input = (f: Field, extra: { label?: string; hint?: string } = {}) => (
    <FieldInput
      f={f}
      value={values[f.key]}
      error={errors[f.key]}
      now={nowField[f.key]}
      {...extra}
      onChange={(v) => setValues({ ...values, [f.key]: v } as Values)}
    />
  );
  const hasVariants = rows.length > 0;
  const title = p ? p.title : "New product";
  return (
    <>
      <Title>{title}</Title>
      <form class="product" onSubmit={save} noValidate>
        <fieldset disabled={!writable}>
          <legend>Product {p?.sku && <span class="muted">{p.sku}</span>}</legend>
          {FIELDS.map((f) =>
            f.key === "price" && hasVariants
              ? input(f, {
                  label: "Price of new variants",
                  hint: `Orders use each variant's own price (below); a variant you add starts at this one. In ${currency() || "the store's currency"}.`,
                })
              : f.key === "price"
                ? input(f, {
                    hint: `In ${currency() || "the store's currency"}; a decimal comma or point (399,50 or 399.50).`,
                  })
                : input(f),
          )}
          {hasVariants && original.length ? (
            <p class="hint">Stock: {p && <Stock n={p.stock} />} in all, set per variant below.</p>
          ) : hasVariants ? (
            <p class="hint">Stock: set per variant below.</p>
          ) : original.length ? (
            <p class="hint">Saving removes every variant; the product's own stock can be set after.</p>
          ) : (
            <div>
              <label for="stock">Stock</label>
              <StockInput id="stock" value={stock} now={nowQty.stock} shown onInput={setStock} />
              {errors.stock && <p class="field-error">{errors.stock}</p>}
            </div>
          )}
          <Options options={options} error={optionError} onChange={setOptionsAndGrid} />
        </fieldset>
        {hasVariants && (
          <VariantTable
            rows={rows}
            errors={errors}
            nowQty={nowQty.qty}
            writable={writable}
            stockInput={(s) => <StockInput {...s} disabled={!writable} />}
            onEdit={edit}
          />
        )}
        {writable && (
          <div class="savebar">
            <button type="submit" disabled={action.busy}>
              {p ? "Save" : "Create product"}
            </button>
            {p && (
              <ConfirmButton
                label="Delete product"
                action={`Delete “${p.title}”`}
                question={`Delete “${p.title}”${original.length ? ` and its ${original.length} variants` : ""}? Past orders keep their lines; this cannot be undone.`}
                busy={action.busy}
                onConfirm={remove}
              />
            )}
            <Message error={action.error} ok={action.ok} />
          </div>
        )}
      </form>
      {!writable && <p class="hint">This key cannot change products (products:write).</p>}
    </>
  );
}
