import { describe, expect, it } from "vitest";
import { answerBytes, answerMemoryBytes } from "../src/platform/d1";
import { uncarried } from "./carried";

// The swap's memory (src/platform/d1.ts) only grows, so these tests have a file of their own:
// each test file runs with fresh modules, and what the memory holds here is what these texts took,
// whatever order the answers of other tests come in.

describe("answerBytes' memory", () => {
  const MB = 1 << 20;
  it("holds an ASCII answer in about its own size, not UTF-8's worst case", () => {
    const ascii = `[\`${"a".repeat(3 * MB)}\`]`;
    expect(uncarried(ascii)).toBe(`["${"a".repeat(3 * MB)}"]`);
    expect(answerMemoryBytes()).toBeLessThan(3.1 * MB);
  });

  it("grows only for the part that stops fitting, and keeps the bytes written before", () => {
    const tail = `[\`${"b".repeat(3 * MB)}é😀\`]`;
    const bytes = answerBytes(tail);
    expect(new TextDecoder().decode(bytes)).toBe(`["${"b".repeat(3 * MB)}é😀"]`);
    expect(answerMemoryBytes()).toBeLessThan(3.1 * MB);
    const head = `[\`é${"c".repeat(MB)}\`]`;
    expect(uncarried(head)).toBe(`["é${"c".repeat(MB)}"]`);
  });
});
