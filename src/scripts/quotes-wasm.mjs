// Writes src/platform/quotes.wasm, the three WebAssembly functions src/platform/quotes.ts uses,
// each over a byte range, 16 bytes at a time (SIMD): `swap`, every backtick a double quote (an
// answer carried from D1), `carry`, every double quote a backtick (a list carried to D1), and
// `expand`, which swaps as `swap` does while writing a carried answer whose objects came without
// their keys (src/platform/quotes.ts, "Keys written by the Worker") into a second range, keys
// put back. Workers may not compile WebAssembly from bytes at run time, so the
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
//   (func (export "carry") ...the same, 0x60 for 0x22 where the byte is 0x22)
//   (func (export "expand") (param $n i32) (param $out i32) (param $table i32) (result i32)
//     ...bytes [0, $n) to [$out, ...), 16 at a time, each backtick a double quote, up to a `~`:
//     `~A`..`~Z` opens an object of that template (its state pushed below $table) and writes
//     its first key, `~,` writes the next key, `~}` writes `}` and pops; the output's length)
//   (memory (export "memory") 1)
//
// Each reads and writes up to 15 bytes past $len (expand: 31 past its output): the caller's
// memory holds them.
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
const carry = body(QUOTE, BACKTICK);

// The instructions expand uses, by name.
/** @param {number} n signed LEB128 */
function sleb(n) {
  const out = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) return [...out, b];
    out.push(b | 0x80);
  }
}
const get = (/** @type {number} */ i) => [0x20, i];
const set = (/** @type {number} */ i) => [0x21, i];
const i32 = (/** @type {number} */ n) => [0x41, ...sleb(n)];
const [add, sub, shl, eqz, eq, geU, ctz] = [[0x6a], [0x6b], [0x74], [0x45], [0x46], [0x4f], [0x68]];
const load = (/** @type {number} */ offset) => [0x28, 0x02, ...leb(offset)];
const load8 = (/** @type {number} */ offset) => [0x2d, 0x00, ...leb(offset)];
const store = (/** @type {number} */ offset) => [0x36, 0x02, ...leb(offset)];
const store8 = [0x3a, 0x00, 0x00];
const vload = (/** @type {number} */ offset) => [0xfd, 0x00, 0x00, ...leb(offset)];
const vstore = (/** @type {number} */ offset) => [0xfd, 0x0b, 0x00, ...leb(offset)];
const [i8eq, bitselect, bitmask] = [
  [0xfd, 0x23],
  [0xfd, 0x52],
  [0xfd, 0x64],
];
const [block, loop, iff, els, end] = [[0x02, 0x40], [0x03, 0x40], [0x04, 0x40], [0x05], [0x0b]];
const br = (/** @type {number} */ depth) => [0x0c, depth];
const brIf = (/** @type {number} */ depth) => [0x0d, depth];

// Locals of expand: the three parameters, then the rest.
const [N, OUT, TABLE, I, O, V, M, OFF, C, SP, T, F, SLOT] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
const TILDE = 0x7e;
/** `$x += n`, a constant. @param {number} x @param {number} n */
const incBy = (x, n) => [...get(x), ...i32(n), ...add, ...set(x)];
/** `$x += $y`, a local. @param {number} x @param {number} y */
const incByLocal = (x, y) => [...get(x), ...get(y), ...add, ...set(x)];
/** `$o += $n - $i`, then leave the loop ($done is `depth` out): the input ended in this block. @param {number} depth */
const finish = (depth) => [...get(O), ...get(N), ...get(I), ...sub, ...add, ...set(O), ...br(depth)];
// One statement a line (the formatter keeps a short array on one line).
const expand = [
  [0x03, 0x02, I32, 0x01, V128, 0x07, I32], // locals: $i $o i32, $v v128, $m $off $c $sp $t $f $slot i32
  [...get(OUT), ...set(O)],
  [...get(TABLE), ...i32(64), ...sub, ...set(SP)], // the template stack: 8 entries below the table
  [...block, ...loop], // $done, $scan
  [...get(I), ...get(N), ...geU, ...brIf(1)],
  [...get(I), ...vload(0), ...set(V)],
  [...get(O), ...splat(QUOTE), ...get(V), ...get(V), ...splat(BACKTICK), ...i8eq, ...bitselect, ...vstore(0)],
  [...get(V), ...splat(TILDE), ...i8eq, ...bitmask, ...set(M)],
  [...get(M), ...eqz, ...iff], // no marker in these 16 bytes: on to the next, unless the input ends
  [...get(I), ...i32(16), ...add, ...get(N), ...geU, ...iff, ...finish(3), ...end],
  [...incBy(I, 16), ...incBy(O, 16), ...br(1), ...end],
  [...get(M), ...ctz, ...set(OFF)],
  [...get(I), ...get(OFF), ...add, ...get(N), ...geU, ...iff, ...finish(2), ...end], // a stray byte past the end
  [...incByLocal(I, OFF), ...incByLocal(O, OFF)],
  [...get(I), ...load8(1), ...set(C), ...incBy(I, 2)],
  [...get(C), ...i32(0x2c), ...eq, ...iff, ...incBy(F, 1)], // `~,`: the next key
  [...els, ...get(C), ...i32(0x7d), ...eq, ...iff], // `~}`: close, pop, go on scanning
  [...get(O), ...i32(0x7d), ...store8, ...incBy(O, 1), ...incBy(SP, -8)],
  [...get(SP), ...load(0), ...set(T), ...get(SP), ...load(4), ...set(F), ...br(2)],
  [...els, ...get(SP), ...get(T), ...store(0), ...get(SP), ...get(F), ...store(4)], // `~A`..: push,
  [...incBy(SP, 8), ...get(C), ...i32(0x41), ...sub, ...set(T), ...i32(0), ...set(F)], // open template $c - 'A'
  [...end, ...end],
  // The key's slot: 32 bytes at $table + ($t * 64 + $f) * 32, its length then its text.
  [...get(TABLE), ...get(T), ...i32(6), ...shl, ...get(F), ...add, ...i32(5), ...shl, ...add, ...set(SLOT)],
  [...get(O), ...get(SLOT), ...vload(1), ...vstore(0), ...get(O), ...get(SLOT), ...vload(17), ...vstore(16)],
  [...get(O), ...get(SLOT), ...load8(0), ...add, ...set(O), ...br(0)],
  [...end, ...end], // $scan, $done
  [...get(O), ...get(OUT), ...sub, ...end],
].flat();

const [FUNC, MEMORY] = [0x00, 0x02];
/** An export entry: its name, its kind and the index of what it exports. @param {string} n @param {number} kind @param {number} index */
const exported = (n, kind, index) => [...name(n), kind, index];

const wasm = Uint8Array.from([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  // type 0: (i32) -> (); type 1: (i32, i32, i32) -> i32
  ...section(1, [0x02, 0x60, 0x01, I32, 0x00, 0x60, 0x03, I32, I32, I32, 0x01, I32]),
  ...section(3, [0x03, 0x00, 0x00, 0x01]), // functions 0 and 1: type 0; 2: type 1
  ...section(5, [0x01, 0x00, 0x01]), // memory 0: 1 page, no maximum
  ...section(7, [
    0x04,
    ...exported("swap", FUNC, 0),
    ...exported("carry", FUNC, 1),
    ...exported("expand", FUNC, 2),
    ...exported("memory", MEMORY, 0),
  ]),
  ...section(10, [
    0x03,
    ...leb(swap.length),
    ...swap,
    ...leb(carry.length),
    ...carry,
    ...leb(expand.length),
    ...expand,
  ]),
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
