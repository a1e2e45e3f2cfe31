/**
 * `deno run --allow-read scripts/check_timers.ts` (part of `deno task
 * check`): no module of `src/` outside `src/timers/` uses the global
 * timers (`setTimeout`, `setInterval`, their `clear` functions) or
 * `Deno.refTimer`/`Deno.unrefTimer`. Every timer goes through
 * `src/timers/`: in Deno 2.9 the global timers are Node's, and one use
 * anywhere on the start path loads Node's timers module into every server
 * (`src/timers/schedule.ts` says what that costs).
 *
 * Prints each finding as `file:line: text` and exits 1 when there is one.
 *
 * @module
 */
import { relative } from "node:path";
import { listSources, SRC } from "./check_imports.ts";

/** A use of a global timer, as code (a call, a reference through `globalThis` or `Deno`). */
const GLOBAL_TIMER =
  /(?<![\w.$])(?:globalThis\.)?(?:setTimeout|setInterval|clearTimeout|clearInterval)\s*\(|\bglobalThis\.(?:setTimeout|setInterval|clearTimeout|clearInterval)\b|\bDeno\.(?:refTimer|unrefTimer)\b/;

/** One use found. */
export interface TimerFinding {
  readonly line: number;
  readonly text: string;
}

/**
 * The lines of `source` that use a global timer. Comments are skipped (line
 * comments, and lines inside or starting a block comment), so prose may name
 * them.
 */
export function findGlobalTimers(source: string): TimerFinding[] {
  const found: TimerFinding[] = [];
  let inBlock = false;
  source.split("\n").forEach((raw, index) => {
    let text = raw;
    if (inBlock) {
      const end = text.indexOf("*/");
      if (end === -1) return;
      text = text.slice(end + 2);
      inBlock = false;
    }
    const open = text.indexOf("/*");
    if (open !== -1) {
      const close = text.indexOf("*/", open + 2);
      if (close === -1) inBlock = true;
      text = text.slice(0, open) + (close === -1 ? "" : text.slice(close + 2));
    }
    const comment = text.indexOf("//");
    if (comment !== -1) text = text.slice(0, comment);
    if (GLOBAL_TIMER.test(text)) found.push({ line: index + 1, text: raw.trim() });
  });
  return found;
}

/** Every use of a global timer in `src/` outside `src/timers/`, as `file:line: text`. */
export async function checkTimers(): Promise<string[]> {
  const findings: string[] = [];
  for (const path of await listSources(SRC)) {
    const name = relative(SRC, path);
    if (name.startsWith("timers/")) continue;
    for (const { line, text } of findGlobalTimers(await Deno.readTextFile(path))) {
      findings.push(`src/${name}:${line}: ${text}`);
    }
  }
  return findings;
}

if (import.meta.main) {
  const findings = await checkTimers();
  for (const finding of findings) {
    console.log(`${finding} (use src/timers/mod.ts: after, every, sleep)`);
  }
  console.log(`check_timers: ${findings.length} finding(s)`);
  if (findings.length > 0) Deno.exit(1);
}
