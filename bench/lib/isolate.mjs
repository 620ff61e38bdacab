// Cores of their own for the profiled Worker's thread and for the profiler's sampler, while the
// CPU cases run (bench/README.md, Method, "Isolated cores"). Without it, on a machine of few
// cores, the sampler thread waits for a core while JavaScript runs and then takes its samples in
// clumps, and any other thread that takes the Worker's core is read as the Worker's time: one
// request's figure then ranges from nothing to several times what it costs.
//
// Linux only, and it needs the right to give threads real-time priority (root, or CAP_SYS_NICE):
// `chrt` and `taskset` (util-linux) on workerd's threads. Where it cannot, the run says so in its
// first line and measures as before.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";

/** The thread V8's CPU profiler takes its samples from: a new one for every Profiler.start. */
const SAMPLER = "v8:ProfEvntProc";
// SCHED_FIFO priorities: the sampler above the Worker's thread, so a sample is never late because
// the thread it samples is running; both above every ordinary thread of the machine.
const WORKER_PRIO = 40;
const SAMPLER_PRIO = 50;

/** @param {string} cmd @param {string[]} args */
const run = (cmd, args) => execFileSync(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });

/** @param {number} pid @returns {{ tid: number, comm: string }[]} */
function threads(pid) {
  /** @type {{ tid: number, comm: string }[]} */
  const out = [];
  let tids = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out; // the process is gone
  }
  for (const t of tids) {
    try {
      out.push({ tid: Number(t), comm: readFileSync(`/proc/${pid}/task/${t}/comm`, "utf8").trim() });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** A thread's id and start time (clock ticks since boot): ids are reused, the pair is not. */
function startOf(/** @type {number} */ pid, /** @type {number} */ tid) {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    // Fields after the parenthesised name; the start time is field 22 of the whole line.
    return `${tid}:${stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]}`;
  } catch {
    return undefined;
  }
}

/** workerd processes whose profiler is running right now. */
function profiledWorkerd() {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "workerd";
      } catch {
        return false;
      }
    })
    .filter((pid) => threads(pid).some((t) => t.comm === SAMPLER));
}

/** @typedef {{ on: boolean, text: string, afterStart: () => Promise<void>, restore: () => void }} Isolation */

/**
 * Puts the thread of the workerd that runs the profiled isolate on the last core at real-time
 * priority; `afterStart` (called after every Profiler.start) moves that profile's sampler thread to
 * the core before it, at a higher priority. `restore` gives every thread of the process its
 * ordinary policy and all cores back (the load phase measures throughput, not one request).
 * @param {(method: string) => Promise<unknown>} send the CDP session's send
 * @returns {Promise<Isolation>}
 */
export async function isolate(send) {
  const noop = async () => {};
  /** @param {string} why @returns {Isolation} */
  const off = (why) => ({ on: false, text: `not isolated (${why})`, afterStart: noop, restore: () => {} });
  if (process.env.BENCH_ISOLATE === "0") return off("BENCH_ISOLATE=0");
  if (process.platform !== "linux") return off("Linux only");
  const cores = os.availableParallelism();
  if (cores < 2) return off("one core");
  await send("Profiler.start");
  const pids = profiledWorkerd();
  await send("Profiler.stop");
  if (pids.length !== 1) return off(`${pids.length} workerd processes with a running profiler, 1 expected`);
  const pid = pids[0];
  const workerCore = cores - 1;
  const samplerCore = cores - 2;
  const all = `0-${cores - 1}`;
  try {
    run("taskset", ["-p", "-c", String(workerCore), String(pid)]);
    run("chrt", ["-f", "-p", String(WORKER_PRIO), String(pid)]);
  } catch (e) {
    try {
      run("taskset", ["-p", "-c", all, String(pid)]);
    } catch {}
    const err = String(/** @type {any} */ (e).stderr ?? e).trim();
    return off(`chrt/taskset refused: ${err.split("\n")[0].slice(0, 120)}; it needs root or CAP_SYS_NICE`);
  }
  /** @type {Set<string>} */
  const moved = new Set();
  return {
    on: true,
    text:
      `isolated: workerd's thread on core ${workerCore} at SCHED_FIFO ${WORKER_PRIO}, ` +
      `the profiler's sampler on core ${samplerCore} at ${SAMPLER_PRIO}`,
    async afterStart() {
      // The sampler starts on the Worker's core at the Worker's priority (a new thread inherits
      // both), where it could sample nothing while the Worker runs: move it before the request.
      // An earlier profile's sampler may still be listed while it exits: each thread is known by
      // its id and start time, and one that is gone is passed over.
      // Up to 2 s: on a loaded machine (other processes' tests) the thread can take that long.
      for (const until = Date.now() + 2000; Date.now() < until; ) {
        for (const { tid, comm } of threads(pid)) {
          const key = comm === SAMPLER && startOf(pid, tid);
          if (!key || moved.has(key)) continue;
          moved.add(key);
          try {
            run("taskset", ["-p", "-c", String(samplerCore), String(tid)]);
            run("chrt", ["-f", "-p", String(SAMPLER_PRIO), String(tid)]);
            return;
          } catch {
            // it ended between the listing and the move
          }
        }
        await new Promise((r) => setTimeout(r, 1));
      }
      throw new Error(`no new ${SAMPLER} thread in workerd ${pid} after Profiler.start`);
    },
    restore() {
      for (const { tid } of threads(pid)) {
        try {
          run("chrt", ["-o", "-p", "0", String(tid)]);
          run("taskset", ["-p", "-c", all, String(tid)]);
        } catch {
          // the thread ended meanwhile
        }
      }
    },
  };
}
