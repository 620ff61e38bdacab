// Example bodies of the OpenAPI document (./document.ts); test/openapi.test.ts holds them valid
// against the request validators and the response schemas. The modelled API describes its fields
// in tables and gives no literal JSON, so these are made from its field tables (2.1-2.8) with the
// placeholders it uses for personal data.
export const EXAMPLES = {
  productCreate: {
    title: "T-shirt",
    sku: "TS-1",
    price: 199,
    tax_rate: 25,
    description: "Organic cotton",
    variants: {
      add: [
        {
          variant_option1_name: "Colour",
          variant_option1_value: "Black",
          variant_option2_name: "Size",
          variant_option2_value: "M",
          sku: "TS-1-BLK-M",
          qty: 10,
        },
      ],
    },
  },
  productUpdate: {
    product_id: 1,
    title: "T-shirt, organic",
    price: "179.50",
    visible: 1,
    disable_minusqty: "1",
    variants: {
      add: [{ variant_option1_value: "White", variant_option2_value: "L", sku: "TS-1-WHT-L", qty: 4 }],
      update: [{ variant_id: 1, qty: 8, price: 189 }],
    },
  },
  orderCreate: [
    {
      order_id: "create",
      customer: {
        type: "consumer",
        email: "alex@example.com",
        phone: "+46 70 123 45 67",
        login_create: false,
        newsletter_subscribe: true,
        note: "Leave at the door",
        billing_details: {
          firstname: "Alex",
          lastname: "Doe",
          address: "Storgatan 1",
          city: "Stockholm",
          zipcode: "111 22",
          country: "SE",
        },
      },
      payment: { method: "invoice", transaction_id: "tx-1001", currency: "SEK" },
      shipping: { id: 1, name: "Postal service", price: 49 },
      products: [{ sku: "TS-1-BLK-M", qty: 2 }],
      discount_add: { amount: 20 },
      metadata: { channel: "webshop" },
    },
  ],
  productWriteResult: {
    success: 1,
    errors: [],
    notices: [],
    products: ["<the product as GET /v1/products/{product_id} returns it>"],
  },
  orderResults: {
    results: {
      create_1: {
        success: true,
        order_id: 1001,
        status: "unpaid",
        currency: "SEK",
        subtotal: 398,
        shipping: 49,
        discount: 20,
        total: 427,
        tax: [{ rate: 25, amount: 85.4 }],
        errors: [],
        notices: [],
      },
    },
  },
  error: { code: 400, error: "invalid body", errors: ["[1].variants.add[0].sku: must be a string"] },
  unauthorized: { code: 401, error: "missing or invalid credentials" },
};
