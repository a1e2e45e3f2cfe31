/**
 * Audit records for refusals before authentication, at a bounded cost.
 *
 * Threat: anyone who can reach the port sends forged tokens or foreign
 * Origins as fast as they can. One fdatasync'd record each filled the log at
 * megabytes per second, and a full log refuses every authorized command
 * (fail closed): a lock-out by anyone. Here, per interval (one minute):
 *
 * - the first refusal of each (source address, reason) is written as usual,
 *   so an operator sees every new source and reason at once;
 * - the rest of that pair's refusals are only counted, and one
 *   `refusals_aggregated` record with the count is written when the interval
 *   ends (one record per source and reason per interval);
 * - at most `maxPairs` pairs are written per interval: that budget is the
 *   reserve that keeps room (and disk bandwidth) for authorized calls, which
 *   are never counted against it. Refusals beyond it are counted only, and
 *   one `refusals_suppressed` marker with their count closes the interval.
 *
 * Memory is bounded the same way: at most `maxPairs` pairs are tracked.
 *
 * @module
 */
import type {
  AuditEventFields,
  AuditEventName,
  AuditLog,
  AuditWriteResult,
} from "../../audit/mod.ts";
import { every, type Timer } from "../../timers/mod.ts";
import "./_audit_events.ts";

/** Limits of the ledger. */
export interface RefusalLedgerLimits {
  /**
   * One interval in ms: a pair's first refusal in it is written, the rest
   * are counted and written as one summary when it ends.
   */
  readonly intervalMs: number;
  /** Distinct (source, reason) pairs written per interval. */
  readonly maxPairs: number;
}

export const DEFAULT_REFUSAL_LIMITS: RefusalLedgerLimits = Object.freeze({
  intervalMs: 60_000,
  maxPairs: 64,
});

/** What the ledger writes at the end of an interval. */
export interface RefusalSummarySink {
  aggregated(fields: {
    source: string;
    reason: string;
    refused_event: string;
    count: number;
    since: string;
    until: string;
  }): Promise<unknown>;
  suppressed(fields: { count: number; since: string; until: string }): Promise<unknown>;
}

interface Pair {
  readonly source: string;
  readonly reason: string;
  readonly event: string;
  /** Refusals after the first, in this interval. */
  extra: number;
}

/** Counts refusals and decides which are written. */
export class RefusalLedger {
  readonly #limits: RefusalLedgerLimits;
  readonly #sink: RefusalSummarySink;
  readonly #now: () => number;
  #pairs = new Map<string, Pair>();
  #suppressed = 0;
  #since: number;
  #timer: Timer | null = null;

  constructor(sink: RefusalSummarySink, limits = DEFAULT_REFUSAL_LIMITS, now = Date.now) {
    this.#sink = sink;
    this.#limits = limits;
    this.#now = now;
    this.#since = now();
  }

  /** Starts the interval timer. */
  start(): void {
    if (this.#timer !== null) return;
    this.#timer = every(this.#limits.intervalMs, () => void this.flush(), { keepAlive: false });
  }

  /**
   * Notes one refusal; `write` (its full record) runs only for the first of
   * its pair in the interval, within the budget.
   */
  async note(
    source: string | null,
    reason: string,
    event: string,
    write: () => Promise<unknown>,
  ): Promise<void> {
    const from = source ?? "unknown";
    const key = `${event}\u0000${from}\u0000${reason}`;
    const pair = this.#pairs.get(key);
    if (pair !== undefined) {
      pair.extra++;
      return;
    }
    if (this.#pairs.size >= this.#limits.maxPairs) {
      this.#suppressed++;
      return;
    }
    this.#pairs.set(key, { source: from, reason, event, extra: 0 });
    await write();
  }

  /** Writes the interval's summaries and starts a new interval. */
  async flush(): Promise<void> {
    const pairs = this.#pairs;
    const suppressed = this.#suppressed;
    const since = new Date(this.#since).toISOString();
    const until = new Date(this.#now()).toISOString();
    this.#pairs = new Map();
    this.#suppressed = 0;
    this.#since = this.#now();
    for (const pair of pairs.values()) {
      if (pair.extra === 0) continue;
      await this.#sink.aggregated({
        source: pair.source,
        reason: pair.reason,
        refused_event: pair.event,
        count: pair.extra,
        since,
        until,
      });
    }
    if (suppressed > 0) await this.#sink.suppressed({ count: suppressed, since, until });
  }

  /** Stops the timer and writes what is pending. */
  async close(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = null;
    await this.flush();
  }
}

/** The audit writer the transport and the authorization server share. */
type EventWriter = Pick<AuditLog, "writeEvent">;

/** The events that are refusals before authentication, with their source and reason. */
const PRE_AUTH_REFUSALS: ReadonlyMap<
  string,
  (fields: Record<string, unknown>) => { source: string | null; reason: string }
> = new Map([
  ["bearer_invalid", (f) => ({ source: asText(f.remote_addr), reason: String(f.reason) })],
  [
    "http_forbidden",
    (f) => ({ source: asText(f.remote_addr), reason: `${String(f.header)}: ${String(f.reason)}` }),
  ],
  // Anyone can send guessed download tokens: bounded like forged bearer tokens.
  ["link_download_refused", (f) => ({ source: asText(f.remote_addr), reason: String(f.reason) })],
]);

/**
 * `audit` with pre-authentication refusals (`bearer_invalid`,
 * `http_forbidden`) routed through `ledger`; every other event, and every
 * authorized call's record, is written as before.
 */
export function withRefusalLedger(audit: EventWriter, ledger: RefusalLedger): EventWriter {
  const writeEvent = async <K extends AuditEventName>(
    event: K,
    fields: AuditEventFields[K],
  ): Promise<AuditWriteResult> => {
    const classify = PRE_AUTH_REFUSALS.get(event);
    if (classify === undefined) return await audit.writeEvent(event, fields);
    const { source, reason } = classify(fields as unknown as Record<string, unknown>);
    let result: AuditWriteResult = { ok: false, reason: "counted in an aggregate record" };
    await ledger.note(source, reason, event, async () => {
      result = await audit.writeEvent(event, fields);
    });
    return result;
  };
  return { writeEvent };
}

/** The summary records, written to `audit`. */
export function ledgerSummaries(audit: EventWriter): RefusalSummarySink {
  return {
    aggregated: (fields) => audit.writeEvent("refusals_aggregated", fields),
    suppressed: (fields) => audit.writeEvent("refusals_suppressed", fields),
  };
}

function asText(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}
