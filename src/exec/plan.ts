/**
 * A command plan: what the helper runs inside one containment when a call is
 * more than one command (`a | b | c`, `cd dir && make > log 2>&1`). The plan
 * parser builds it from text and the policy judges every part; this module
 * only defines it, encodes it for the helper, and reads the helper's report of
 * every stage's exit status. Pure.
 *
 * The wire form is NUL-terminated tokens on the helper's stdin (never on
 * argv, which every local user can read in `/proc/PID/cmdline`):
 * `htmcp-plan 1 NONCE JAIL`, then steps separated by `;`, `&&` or `||`, each
 * `cd DIR` or `pipeline K` followed by K times
 * `stage PATH ARGC ARG... NREDIR (KIND [FILE])...`, then `end`.
 *
 * @module
 */

/** How a step is joined to the one before it, with a shell's meaning. */
export type Connector = ";" | "&&" | "||";

/** One redirection, applied in order as a shell does. Files are jail paths or `/dev/null`. */
export type Redirect =
  | { readonly kind: "<" | ">" | ">>" | "2>" | "2>>"; readonly path: string }
  | { readonly kind: "2>&1" | "1>&2" };

/** One process of a pipeline: the policy-resolved absolute path and its argv. */
export interface PlanStage {
  /** The absolute path the policy resolved the command word to; executed as is. */
  readonly path: string;
  /** argv after the command word, passed verbatim. */
  readonly args: readonly string[];
  /** The stage's redirections, in order; none when absent. */
  readonly redirects?: readonly Redirect[];
}

/** One step of a sequence. */
export type PlanStep =
  | { readonly kind: "cd"; readonly dir: string }
  | { readonly kind: "pipeline"; readonly stages: readonly PlanStage[] };

/** A whole plan: the starting cwd and the steps, each after its connector (none for the first). */
export interface CommandPlan {
  /** The jail-confined directory the plan starts in; a `cd` step moves it. */
  readonly cwd: string;
  /** The steps in order, each joined to the one before by its connector. */
  readonly steps: readonly { readonly connector?: Connector; readonly step: PlanStep }[];
}

/** The helper's limit on stages (cd steps included) per plan. */
export const MAX_PLAN_STAGES = 64;

/** The helper's limit on the encoded plan. */
export const MAX_PLAN_BYTES = 1 << 20;

/** How many status entries the helper reports for `plan` (a cd is one, a pipeline one per stage). */
export function planStageCount(plan: CommandPlan): number {
  let n = 0;
  for (const { step } of plan.steps) n += step.kind === "cd" ? 1 : step.stages.length;
  return n;
}

function token(value: string): string {
  if (value.includes("\0")) {
    throw new RangeError(`A plan token cannot contain NUL: ${JSON.stringify(value)}.`);
  }
  return value;
}

/**
 * Encodes `plan` for the helper's stdin.
 *
 * @throws {RangeError} On a malformed plan (no steps, a connector on the
 *   first step or none on a later one, an empty pipeline, too many stages, a
 *   relative path, a NUL byte): the parser's bug, never user input.
 */
export function encodePlan(plan: CommandPlan, jailRoot: string, nonce: string): Uint8Array {
  if (!/^[0-9a-f]{32,}$/.test(nonce)) throw new RangeError("The plan nonce must be hex.");
  if (plan.steps.length === 0) throw new RangeError("A plan needs at least one step.");
  if (planStageCount(plan) > MAX_PLAN_STAGES) {
    throw new RangeError(`A plan may have at most ${MAX_PLAN_STAGES} stages.`);
  }
  const out: string[] = ["htmcp-plan", "1", nonce, token(jailRoot)];
  plan.steps.forEach(({ connector, step }, i) => {
    if ((i === 0) !== (connector === undefined)) {
      throw new RangeError("Every step but the first is joined by a connector.");
    }
    if (connector !== undefined) out.push(connector);
    if (step.kind === "cd") {
      out.push("cd", absolute(step.dir));
      return;
    }
    if (step.stages.length === 0) throw new RangeError("A pipeline needs at least one stage.");
    out.push("pipeline", String(step.stages.length));
    for (const stage of step.stages) {
      out.push("stage", absolute(stage.path), String(stage.args.length), ...stage.args.map(token));
      const redirects = stage.redirects ?? [];
      out.push(String(redirects.length));
      for (const r of redirects) {
        out.push(r.kind);
        if ("path" in r) out.push(absolute(r.path));
      }
    }
  });
  out.push("end");
  const bytes = new TextEncoder().encode(out.join("\0") + "\0");
  if (bytes.byteLength >= MAX_PLAN_BYTES) throw new RangeError("The encoded plan is too large.");
  return bytes;
}

function absolute(path: string): string {
  if (!path.startsWith("/")) throw new RangeError(`A plan path must be absolute: "${path}".`);
  return token(path);
}

/** A fresh random nonce for one plan run. */
export function planNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * One stage's end: its exit status (128+N when killed by signal N, as a
 * shell reports it), or null when a sequence skipped it.
 */
export type StageStatus = number | null;

/**
 * Splits the helper's status record off the end of a plan's stderr. The
 * record counts only when it is the very last bytes and carries this run's
 * nonce: a stage can print a look-alike, but not one the server accepts.
 *
 * @param tail The last bytes of stderr.
 * @param nonce This run's nonce.
 * @param stages How many statuses the plan must report.
 * @returns The statuses and the record's length in bytes, or null when absent or malformed.
 */
export function readStatusRecord(
  tail: Uint8Array,
  nonce: string,
  stages: number,
): { statuses: StageStatus[]; recordBytes: number } | null {
  const marker = new TextEncoder().encode(`\0htmcp-status ${nonce}`);
  if (tail.byteLength === 0 || tail[tail.byteLength - 1] !== 0x0a) return null;
  let start = -1;
  for (let i = tail.byteLength - marker.byteLength; i >= 0; i--) {
    if (tail[i] === 0 && marker.every((b, j) => tail[i + j] === b)) {
      start = i;
      break;
    }
  }
  if (start < 0) return null;
  const text = new TextDecoder().decode(
    tail.subarray(start + marker.byteLength, tail.byteLength - 1),
  );
  if (!/^(?: (?:-|\d{1,3}))*$/.test(text)) return null;
  const statuses = text.split(" ").slice(1).map((s) => (s === "-" ? null : Number(s)));
  if (statuses.length !== stages) return null;
  return { statuses, recordBytes: tail.byteLength - start };
}
