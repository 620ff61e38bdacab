export const SERVICE = { name: "edge-store", version: "0.1.0" };
