import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { answerBytes } from "../src/platform/d1";
import { answerStream } from "../src/platform/stream";

// src/platform/stream.ts: a large answer's chunks are read one at a time, when its reader asks;
// src/platform/d1.ts, answerBytes: a read's chunk is its parts' UTF-8, backticks and all.

const decoder = new TextDecoder();

describe("answerBytes", () => {
  it("of texts not carried is the UTF-8 of the parts joined, whatever characters they hold", () => {
    // Big parts past ASCII make the buffer grow, mid-text and more than once.
    const part = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 20 }),
      fc.constantFrom("", "`a`", "a".repeat(5000), "é😀".repeat(3000)),
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 8 }), (parts) => {
        expect(answerBytes(parts, false)).toEqual(new TextEncoder().encode(parts.join("")));
      }),
      { numRuns: 300 },
    );
  });
});

describe("answerStream", () => {
  it("reads a chunk only once the reader has taken the one before, and writes its texts in order", async () => {
    const chunks = [['["a"'], [",", '"b"'], [',"c"]']];
    let reads = 0;
    const stream = answerStream({
      first: ['["first"'],
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
    const stream = answerStream({
      first: ["[1"],
      next: async () => {
        throw new Error("D1_ERROR: Network connection lost.");
      },
    });
    await expect(new Response(stream).text()).rejects.toThrow(/Network connection lost/);
  });
});
