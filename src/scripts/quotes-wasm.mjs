// Writes src/platform/quotes.wasm, the WebAssembly function src/platform/d1.ts uses: `swap`,
// every backtick of a byte range a double quote (an answer carried from D1), 16 bytes at a time
// (SIMD).
// Workers may not compile WebAssembly from bytes at run time, so the
// module ships as a file wrangler bundles; it is this script's output, committed. `--check` fails
// when the file differs from what it writes.
//
//   (func (export "swap") (param $len i32) (local $i i32) (local $v v128)
//     (block (loop
//       (br_if 1 (i32.ge_u (local.get $i) (local.get $len)))
//       (local.set $v (v128.load (local.get $i)))
//       (v128.store (local.get $i)
//         (v128.bitselect (v128.const i8x16 0x22 ...) (local.get $v)
//           (i8x16.eq (local.get $v) (v128.const i8x16 0x60 ...))))
//       (local.set $i (i32.add (local.get $i) (i32.const 16)))
//       (br 0))))
//   (memory (export "memory") 1)
//
// It reads and writes up to 15 bytes past $len: the caller's memory holds them.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const FILE = path.join(import.meta.dirname, "../platform/quotes.wasm");

/** @param {number} n */
function leb(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}
/** @param {number} id @param {number[]} bytes */
const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
/** @param {string} s */
const name = (s) => [s.length, ...Buffer.from(s)];
/** @param {number} b */
const splat = (b) => [0xfd, 0x0c, ...Array(16).fill(b)];

const I32 = 0x7f;
const V128 = 0x7b;
/** The function body that writes `to` over every byte `from` in [0, $len). @param {number} from @param {number} to */
const body = (from, to) => [
  ...[0x02, 0x01, I32, 0x01, V128], // locals: $i i32, $v v128 ($len is local 0)
  ...[0x02, 0x40, 0x03, 0x40], // block, loop
  ...[0x20, 0x01, 0x20, 0x00, 0x4f, 0x0d, 0x01], // br_if 1 (i >= len)
  ...[0x20, 0x01, 0xfd, 0x00, 0x04, 0x00, 0x21, 0x02], // v = v128.load align=16 (i)
  ...[0x20, 0x01], // the store's address
  ...splat(to),
  ...[0x20, 0x02],
  ...[0x20, 0x02, ...splat(from), 0xfd, 0x23], // i8x16.eq (v, from)
  ...[0xfd, 0x52], // v128.bitselect
  ...[0xfd, 0x0b, 0x04, 0x00], // v128.store align=16
  ...[0x20, 0x01, 0x41, 0x10, 0x6a, 0x21, 0x01], // i += 16
  ...[0x0c, 0x00, 0x0b, 0x0b, 0x0b], // br 0, end loop, end block, end func
];
const QUOTE = 0x22;
const BACKTICK = 0x60;
const swap = body(BACKTICK, QUOTE);

const [FUNC, MEMORY] = [0x00, 0x02];
/** An export entry: its name, its kind and the index of what it exports. @param {string} n @param {number} kind @param {number} index */
const exported = (n, kind, index) => [...name(n), kind, index];

const wasm = Uint8Array.from([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  // type 0: (i32) -> ()
  ...section(1, [0x01, 0x60, 0x01, I32, 0x00]),
  ...section(3, [0x01, 0x00]), // function 0: type 0
  ...section(5, [0x01, 0x00, 0x01]), // memory 0: 1 page, no maximum
  ...section(7, [0x02, ...exported("swap", FUNC, 0), ...exported("memory", MEMORY, 0)]),
  ...section(10, [0x01, ...leb(swap.length), ...swap]),
]);

new WebAssembly.Module(wasm); // throws, saying what is wrong, on an invalid module
if (process.argv.includes("--check")) {
  let committed;
  try {
    committed = readFileSync(FILE);
  } catch {}
  if (!committed || Buffer.compare(committed, Buffer.from(wasm)) !== 0) {
    console.error("src/platform/quotes.wasm differs from what src/scripts/quotes-wasm.mjs writes: run npm run wasm");
    process.exit(1);
  }
} else {
  writeFileSync(FILE, wasm);
  console.log(`wrote ${path.relative(process.cwd(), FILE)} (${wasm.length} bytes)`);
}
