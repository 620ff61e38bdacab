import { describe, expect, it } from "vitest";
import { carriedStream } from "../src/platform/stream";

// src/platform/stream.ts: a large answer's chunks are read one at a time, when its reader asks.

const decoder = new TextDecoder();

describe("carriedStream", () => {
  it("reads a chunk only once the reader has taken the one before, and writes carried quotes back", async () => {
    const chunks = [["[`a`"], [",`b`"], [",`c`]"]];
    let reads = 0;
    const stream = carriedStream({
      first: ["[`first`"],
      next: async () => {
        reads++;
        return chunks.shift();
      },
    });
    const reader = stream.getReader();
    await new Promise((r) => setTimeout(r, 10));
    expect(reads).toBe(0);
    const got: string[] = [];
    for (let i = 1; ; i++) {
      const { done, value } = await reader.read();
      if (done) break;
      got.push(decoder.decode(value));
      expect(reads).toBeLessThanOrEqual(i);
    }
    expect(got).toEqual(['["first"', '["a"', ',"b"', ',"c"]']);
    expect(reads).toBe(4);
  });

  it("ends with an error, not a short answer, when a chunk fails to arrive", async () => {
    const stream = carriedStream({
      first: ["[1"],
      next: async () => {
        throw new Error("D1_ERROR: Network connection lost.");
      },
    });
    await expect(new Response(stream).text()).rejects.toThrow(/Network connection lost/);
  });
});
