/**
 * Approval records in the state store (kind `approvals`), shared by the
 * server that waits and the `htmcp approvals` CLI that answers.
 *
 * Threats and answers:
 * - The model approving its own command: no MCP tool reaches `answer`; only
 *   the CLI (the operator on the server's host, with the state directory's
 *   owner-only permissions) does.
 * - One approval run twice (a replay): `consume` turns `allowed` into `used`
 *   in one atomic update, so of two racing calls exactly one wins.
 * - An approval reused for something else: `consume` checks the owner, the
 *   run digest and the policy hash inside the same update.
 * - An old approval: an answer or a use past `expires_ms` is refused and the
 *   record turned `expired`.
 *
 * @module
 */
import { isRecordName, type StateStore } from "../state/mod.ts";
import { type ApprovalRecord, type ApprovalState, isApprovalRecord } from "./records.ts";

/** The state store kind the approval records are kept under. */
export const APPROVALS = "approvals";

/** What binds an approval: it is used only by this owner, for this run, under this policy. */
export interface ApprovalBinding {
  /** The caller's owner key (`local`, or `client:ID`). */
  readonly owner: string;
  /** The run digest (`runDigest` of the run specification). */
  readonly digest: string;
  /** The identity of the policy in force (`sha256:...`). */
  readonly policyHash: string;
}

/**
 * The result of answering or using an approval: the record as changed, or
 * why not (the state it was in, or `missing` for an absent, malformed or
 * non-binding one) with the record as it now is, when there is one.
 */
export type Transition =
  | { readonly ok: true; readonly record: ApprovalRecord }
  | {
    readonly ok: false;
    readonly state: ApprovalState | "missing";
    readonly record: ApprovalRecord | null;
  };

/**
 * The approval records in a state store, with every change of state as one
 * atomic update, so the server that waits, the CLI and the approval page
 * that answer, and other replicas never act on a stale record.
 *
 * @example
 * ```ts
 * import { ApprovalStore, newApprovalId } from "./mod.ts";
 * import { LocalStateStore } from "../state/mod.ts";
 * const state = new LocalStateStore(await Deno.makeTempDir());
 * const approvals = new ApprovalStore(state);
 * const id = newApprovalId();
 * const binding = { owner: "local", digest: "d1", policyHash: "sha256:p1" };
 * await approvals.create({
 *   id,
 *   owner: binding.owner,
 *   digest: binding.digest,
 *   argv: ["/usr/bin/git", "push"],
 *   command_raw: "git push",
 *   cwd: ".",
 *   policy_hash: binding.policyHash,
 *   rule: "git push",
 *   justification: "a push publishes commits",
 *   created_ms: Date.now(),
 *   expires_ms: Date.now() + 60_000,
 *   state: "pending",
 *   answered_by: null,
 *   answered_ms: null,
 * });
 * await approvals.answer(id, true, "cli:alice"); // { ok: true, record: { state: "allowed", ... } }
 * await approvals.consume(id, binding); // { ok: true, record: { state: "used", ... } }
 * await approvals.consume(id, binding); // { ok: false, state: "used", ... }: once only
 * await state.close();
 * ```
 */
export class ApprovalStore {
  readonly #store: StateStore;
  readonly #now: () => number;

  /**
   * An approval store over `store`.
   *
   * @param store The policy's state store (the state dir, or the fleet's PostgreSQL database).
   * @param now The clock expiry is judged by (a test's fake clock).
   */
  constructor(store: StateStore, now: () => number = Date.now) {
    this.#store = store;
    this.#now = now;
  }

  /**
   * Stores a new pending record.
   *
   * @throws Error when a record with its id exists (ids are random: a bug or a forgery).
   */
  async create(record: ApprovalRecord): Promise<void> {
    const made = await this.#store.compareAndSwap(APPROVALS, record.id, null, { ...record });
    if (!made) throw new Error("approval id collision");
  }

  /** The record, or null when absent or malformed. */
  async get(id: string): Promise<ApprovalRecord | null> {
    if (!isRecordName(id)) return null;
    const value = await this.#store.read(APPROVALS, id);
    return isApprovalRecord(value) && value.id === id ? value : null;
  }

  /** Every record, oldest first. */
  async list(): Promise<ApprovalRecord[]> {
    const all = await this.#store.readAll(APPROVALS);
    return [...all.values()].filter(isApprovalRecord).sort((a, b) => a.created_ms - b.created_ms);
  }

  /**
   * Answers a pending approval (the operator's CLI). Refused unless pending
   * and unexpired; a pending one past its time becomes `expired`.
   */
  answer(id: string, allow: boolean, by: string): Promise<Transition> {
    const now = this.#now();
    return this.#transition(id, (record) => {
      if (record.state === "pending" && now >= record.expires_ms) {
        return { next: { ...record, state: "expired" }, refuse: "expired" };
      }
      if (record.state !== "pending") return { refuse: record.state };
      return {
        next: { ...record, state: allow ? "allowed" : "denied", answered_by: by, answered_ms: now },
      };
    });
  }

  /**
   * Uses an allowed approval once: `allowed -> used` in one atomic step, and
   * only for the binding it was made for and before it expires.
   */
  consume(id: string, binding: ApprovalBinding): Promise<Transition> {
    const now = this.#now();
    return this.#transition(id, (record) => {
      if (!bindsTo(record, binding)) return { refuse: "missing" };
      if ((record.state === "pending" || record.state === "allowed") && now >= record.expires_ms) {
        return { next: { ...record, state: "expired" }, refuse: "expired" };
      }
      if (record.state !== "allowed") return { refuse: record.state };
      return { next: { ...record, state: "used", answer_audited: true } };
    });
  }

  /** Turns a pending or allowed record past its time into `expired`; returns it. */
  expire(id: string): Promise<Transition> {
    const now = this.#now();
    return this.#transition(id, (record) => {
      if ((record.state === "pending" || record.state === "allowed") && now >= record.expires_ms) {
        return { next: { ...record, state: "expired" } };
      }
      return { refuse: record.state };
    });
  }

  /**
   * Names the job that waits for this approval, once: of two identical calls
   * that both outlived `approval.wait_ms`, one makes the job and the other
   * is told its id. Refused unless the record binds, is open (pending or
   * allowed, unexpired) and has no job yet; the record is returned either way.
   */
  attachJob(id: string, jobId: string, binding: ApprovalBinding): Promise<Transition> {
    const now = this.#now();
    return this.#transition(id, (record) => {
      if (!bindsTo(record, binding)) return { refuse: "missing" };
      if (record.state !== "pending" && record.state !== "allowed") return { refuse: record.state };
      if (now >= record.expires_ms) return { refuse: "expired" };
      if (record.job_id !== undefined) return { refuse: record.state };
      return { next: { ...record, job_id: jobId } };
    });
  }

  /**
   * Ends an open approval that will never be used: `withdrawn` when its job
   * was cancelled or its server stopped, `expired` when it no longer binds
   * (the policy changed). Answered-and-ended records are left as they are.
   */
  retire(id: string, state: "withdrawn" | "expired"): Promise<Transition> {
    return this.#transition(id, (record) => {
      if (record.state !== "pending" && record.state !== "allowed") return { refuse: record.state };
      return { next: { ...record, state } };
    });
  }

  /** Marks that the server audited the answer, so it is audited once. */
  markAnswerAudited(id: string): Promise<Transition> {
    return this.#transition(id, (record) => ({ next: { ...record, answer_audited: true } }));
  }

  /**
   * The caller's newest record for this binding that may still serve it:
   * allowed or pending, unexpired. A later identical call uses (or waits on)
   * it instead of asking again.
   */
  async findOpen(binding: ApprovalBinding): Promise<ApprovalRecord | null> {
    const now = this.#now();
    const open = (await this.list()).filter((record) =>
      bindsTo(record, binding) && now < record.expires_ms &&
      (record.state === "allowed" || record.state === "pending")
    );
    return open.at(-1) ?? null;
  }

  /** Deletes records that ended (or expired) more than `keepMs` ago. */
  async sweep(keepMs: number): Promise<void> {
    const now = this.#now();
    for (const record of await this.list()) {
      if (now - record.expires_ms > keepMs) await this.#store.remove(APPROVALS, record.id);
    }
  }

  async #transition(
    id: string,
    decide: (
      record: ApprovalRecord,
    ) => { next?: ApprovalRecord; refuse?: ApprovalState | "missing" },
  ): Promise<Transition> {
    if (!isRecordName(id)) return { ok: false, state: "missing", record: null };
    return await this.#store.update(APPROVALS, id, (current) => {
      if (!isApprovalRecord(current) || current.id !== id) {
        return { result: { ok: false, state: "missing", record: null } as Transition };
      }
      const step = decide(current);
      const next = step.next;
      const record = next ?? current;
      const result: Transition = step.refuse === undefined
        ? { ok: true, record }
        : { ok: false, state: step.refuse, record };
      return next === undefined ? { result } : { next: { ...next }, result };
    });
  }
}

/** Whether `record` was made for exactly this owner, run and policy. */
function bindsTo(record: ApprovalRecord, binding: ApprovalBinding): boolean {
  return record.owner === binding.owner && record.digest === binding.digest &&
    record.policy_hash === binding.policyHash;
}
