// The pieces of the product editor (./products.tsx): a field as its description says, the image
// list with previews, the options, and the variant table, which shows one page of the variants
// that match its filter so a product of 2,048 variants opens and types as fast as a small one.
import type { JSX } from "preact";
import { useMemo, useState } from "preact/hooks";
import type { Field, Image, Values } from "./product-fields";
import { LOW_STOCK } from "./products-list";
import { combinations, MAX_OPTIONS, MAX_VARIANTS, matches, type Option, type Row, rowName } from "./variant-grid";

/** Under a field: its refusal, or what changed since it was loaded, or its hint. */
function Under({ id, error, now, hint }: { id: string; error?: string; now?: string; hint?: string }) {
  if (error)
    return (
      <p id={`${id}-hint`} class="field-error">
        {error}
      </p>
    );
  if (now)
    return (
      <p id={`${id}-hint`} class="changed">
        {now}
      </p>
    );
  return hint ? (
    <p id={`${id}-hint`} class="hint">
      {hint}
    </p>
  ) : null;
}

export function FieldInput({
  f,
  value,
  error,
  now,
  hint,
  label,
  onChange,
}: {
  f: Field;
  value: Values[string];
  error?: string;
  now?: string;
  hint?: string;
  label?: string;
  onChange: (v: Values[string]) => void;
}) {
  const id = f.key;
  const described = error || now || hint || f.hint ? `${id}-hint` : undefined;
  if (f.kind === "flag")
    return (
      <div>
        <label class="check">
          <input
            id={id}
            type="checkbox"
            checked={value as boolean}
            aria-describedby={described}
            onChange={(e) => onChange(e.currentTarget.checked)}
          />{" "}
          {f.label}
        </label>
        <Under id={id} error={error} now={now} hint={hint ?? f.hint} />
      </div>
    );
  if (f.kind === "images") return <Images images={value as Image[]} error={error} now={now} onChange={onChange} />;
  const common = {
    id,
    value: value as string,
    "aria-invalid": error ? ("true" as const) : undefined,
    "aria-describedby": described,
    maxlength: f.max,
    onInput: (e: Event) => onChange((e.currentTarget as HTMLInputElement).value),
  };
  const big = f.kind === "area" || f.kind === "categories";
  return (
    <div class={big ? "wide" : ""}>
      <label for={id}>{label ?? f.label}</label>
      {big ? (
        <textarea rows={f.kind === "area" && f.max && f.max > 255 ? 5 : 3} {...common} />
      ) : (
        <input
          {...common}
          inputmode={f.kind === "money" ? "decimal" : f.kind === "int" ? "numeric" : undefined}
          autocomplete="off"
        />
      )}
      <Under id={id} error={error} now={now} hint={hint ?? f.hint} />
    </div>
  );
}

/** Image URLs with their alt texts, each previewed as the shop will load it. */
function Images({
  images,
  error,
  now,
  onChange,
}: {
  images: Image[];
  error?: string;
  now?: string;
  onChange: (v: Image[]) => void;
}) {
  const set = (i: number, part: Partial<Image>) => onChange(images.map((x, j) => (j === i ? { ...x, ...part } : x)));
  return (
    <fieldset class="images wide">
      <legend>Images</legend>
      {images.map((img, i) => (
        <div class="image">
          {/^https:\/\/\S+$/.test(img.url.trim()) ? (
            <img src={img.url.trim()} alt={img.alttext || `Image ${i + 1}`} />
          ) : (
            <span class="noimage">No preview</span>
          )}
          <div>
            <label for={`img-${i}`}>Image {i + 1} URL</label>
            <input
              id={`img-${i}`}
              type="url"
              value={img.url}
              placeholder="https://"
              onInput={(e) => set(i, { url: e.currentTarget.value })}
            />
            <label for={`alt-${i}`}>Image {i + 1} alt text</label>
            <input id={`alt-${i}`} value={img.alttext} onInput={(e) => set(i, { alttext: e.currentTarget.value })} />
            <button type="button" onClick={() => onChange(images.filter((_, j) => j !== i))}>
              Remove image {i + 1}
            </button>
          </div>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...images, { url: "", alttext: "" }])}>
        Add an image
      </button>
      <Under id="images" error={error} now={now} hint="An https URL each; the first is the main image." />
    </fieldset>
  );
}

/** Up to five options, each a name and its values; the variants are their combinations. */
export function Options({
  options,
  error,
  onChange,
}: {
  options: Option[];
  error?: string;
  onChange: (o: Option[]) => void;
}) {
  const set = (i: number, part: Partial<Option>) => onChange(options.map((o, j) => (j === i ? { ...o, ...part } : o)));
  const counts = options.map((o) => o.values.split(",").filter((v) => v.trim()).length).filter((n) => n > 0);
  const n = combinations(counts.map((c) => new Array(c).fill("")));
  return (
    <fieldset class="options">
      <legend>Options</legend>
      {options.map((o, i) => (
        <div class="option">
          <div>
            <label for={`opt-${i}`}>Option {i + 1} name</label>
            <input
              id={`opt-${i}`}
              value={o.name}
              maxlength={255}
              onInput={(e) => set(i, { name: e.currentTarget.value })}
            />
          </div>
          <div class="wide">
            <label for={`optv-${i}`}>Option {i + 1} values</label>
            <input
              id={`optv-${i}`}
              value={o.values}
              aria-describedby="opt-hint"
              onInput={(e) => set(i, { values: e.currentTarget.value })}
            />
          </div>
          <button type="button" onClick={() => onChange(options.filter((_, j) => j !== i))}>
            Remove option {i + 1}
          </button>
        </div>
      ))}
      {options.length < MAX_OPTIONS && (
        <button type="button" onClick={() => onChange([...options, { name: "", values: "" }])}>
          Add an option
        </button>
      )}
      <p id="opt-hint" class={error ? "field-error" : "hint"}>
        {error ||
          `Values separated by commas (S, M, L). The variants are every combination: ${counts.join(" × ") || 0} = ${n} (at most ${MAX_VARIANTS.toLocaleString("en")}).`}
      </p>
    </fieldset>
  );
}

const PAGE = 50;

/** One variant field's change. */
export type RowEdit = (i: number, part: Partial<Row>) => void;

/** The variants that match the filter, a page at a time, each row's fields and its refusal. */
export function VariantTable({
  rows,
  errors,
  nowQty,
  writable,
  stockInput,
  onEdit,
}: {
  rows: Row[];
  errors: Record<string, string>;
  nowQty: Record<number, number>;
  writable: boolean;
  stockInput: (props: {
    id: string;
    label: string;
    value: string;
    now?: number;
    onInput: (v: string) => void;
  }) => JSX.Element;
  onEdit: RowEdit;
}) {
  const [filter, setFilter] = useState("");
  const [page, setPage] = useState(0);
  const found = useMemo(() => {
    const out: number[] = [];
    rows.forEach((r, i) => {
      if (matches(r, filter)) out.push(i);
    });
    return out;
  }, [rows, filter]);
  const last = Math.max(0, Math.ceil(found.length / PAGE) - 1);
  const at = Math.min(page, last);
  const shown = found.slice(at * PAGE, at * PAGE + PAGE);
  const problems = Object.keys(errors).filter((k) => k.startsWith("row:")).length;
  return (
    <section class="variants" aria-labelledby="variants-h">
      <h2 id="variants-h">Variants</h2>
      <search class="filters">
        <div>
          <label for="vfilter">Find variants</label>
          <input
            id="vfilter"
            type="search"
            aria-describedby="vfilter-hint"
            value={filter}
            onInput={(e) => {
              setFilter(e.currentTarget.value);
              setPage(0);
            }}
          />
          <p id="vfilter-hint" class="hint">
            An option value (Red, M) or part of a SKU; more words narrow it.
          </p>
        </div>
      </search>
      <p class="hint" role="status">
        {found.length === rows.length
          ? `${rows.length.toLocaleString("en")} variants`
          : `${found.length.toLocaleString("en")} of ${rows.length.toLocaleString("en")} variants match`}
        {found.length > PAGE && `; showing ${at * PAGE + 1}–${at * PAGE + shown.length}`}
        {problems > 0 && `; ${problems} with a problem, named below`}
      </p>
      {writable && <p class="hint">Stock of each variant: a new count (16), or a change: +5 arrived, -2 broken.</p>}
      <div class="scroll" tabindex={0}>
        <table class="list">
          <caption class="sr-only">Variants</caption>
          <thead>
            <tr>
              <th scope="col">Variant</th>
              <th scope="col">SKU</th>
              <th scope="col" class="num">
                Stock
              </th>
              <th scope="col" class="num">
                Price
              </th>
              <th scope="col">Visible</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((i) => {
              const r = rows[i];
              const name = rowName(r);
              const low = Number(r.base?.qty ?? r.qty) <= LOW_STOCK;
              const error = errors[`row:${i}`];
              return (
                <tr key={i} class={error ? "row-error" : low ? "row-low" : ""}>
                  <td>
                    {name}
                    {!r.base && (
                      <>
                        {" "}
                        <span class="badge">new</span>
                      </>
                    )}
                    {low && r.base && (
                      <>
                        {" "}
                        <span class="badge low-badge">low</span>
                      </>
                    )}
                    {error && <p class="field-error">{error}</p>}
                  </td>
                  <td>
                    <input
                      class="sku"
                      aria-label={`SKU of ${name}`}
                      disabled={!writable}
                      value={r.sku}
                      maxlength={255}
                      onInput={(e) => onEdit(i, { sku: e.currentTarget.value })}
                    />
                  </td>
                  <td class="num">
                    {stockInput({
                      id: r.base ? `qty-${r.base.variant_id}` : `qty-new-${i}`,
                      label: `Stock of ${name}`,
                      value: r.qty,
                      now: r.base ? nowQty[r.base.variant_id] : undefined,
                      onInput: (v) => onEdit(i, { qty: v }),
                    })}
                  </td>
                  <td class="num">
                    <input
                      class="price"
                      inputmode="decimal"
                      required
                      disabled={!writable}
                      aria-label={`Price of ${name}`}
                      value={r.price}
                      onInput={(e) => onEdit(i, { price: e.currentTarget.value })}
                    />
                  </td>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`${name} visible`}
                      disabled={!writable}
                      checked={r.visible}
                      onChange={(e) => onEdit(i, { visible: e.currentTarget.checked })}
                    />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {found.length > PAGE && (
        <nav class="pager" aria-label="Variant pages">
          <button type="button" disabled={at === 0} onClick={() => setPage(at - 1)}>
            Previous variants
          </button>
          <span>
            {at + 1} of {last + 1}
          </span>
          <button type="button" disabled={at === last} onClick={() => setPage(at + 1)}>
            Next variants
          </button>
        </nav>
      )}
    </section>
  );
}
