import { beforeAll, describe, expect, it } from "vitest";
import { refusedPosts, title } from "./fixtures/product-categories";
import { createProduct, get, put, subscribeAll } from "./helpers";

// A product's images (docs/products.md, "Categories, URLs and images"): the modelled API's object
// keyed by position or a list of URLs, written by POST and PUT /v1/products.

beforeAll(subscribeAll);

describe("images", () => {
  it("takes the modelled object keyed by position, and a list of URLs", async () => {
    const a = await createProduct({
      title: title("ImgA"),
      images: {
        "2": { image: "https://img.example/2.jpg" },
        "1": { image: "https://img.example/1.jpg", alttext: "Front" },
      },
    });
    expect(a.images).toEqual([
      { url: "https://img.example/1.jpg", alttext: "Front" },
      { url: "https://img.example/2.jpg" },
    ]);
    const b = await createProduct({ title: title("ImgB"), images: ["https://img.example/b.jpg"] });
    expect(b.images).toEqual([{ url: "https://img.example/b.jpg" }]);
    const m = (await get(`/v1/products?product_id=${a.product_id}&include_details=true`)).json;
    expect(m.images["1"].image).toBe("https://img.example/1.jpg");
    expect(m.images).toEqual({
      "1": { image: "https://img.example/1.jpg", alttext: "Front" },
      "2": { image: "https://img.example/2.jpg", alttext: "" },
    });
    const r = await put("/v1/products", {
      product_id: b.product_id,
      images: { "1": { image: "https://img.example/c.jpg" } },
    });
    expect(r.json.products[0].images).toEqual([{ url: "https://img.example/c.jpg" }]);
  });
});

describe("validation: 400 naming the field, nothing written", () => {
  refusedPosts([
    ["an http image", { images: ["http://img.example/a.jpg"] }, "images[0].url: must be an https URL"],
    ["an image {image} not a URL", { images: { "1": { image: "a.jpg" } } }, "images.1.image: must be an https URL"],
    ["an image without url", { images: [{ alttext: "x" }] }, "images[0].url: is required"],
  ]);
});
