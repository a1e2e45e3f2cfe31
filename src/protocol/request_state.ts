/**
 * Sealed `requestState` for 2026-07-28 multi round-trip requests (MRTR).
 *
 * The spec: the state "round-trips through the client" and servers whose
 * state influences authorization "MUST integrity-protect it". A state that
 * carries an approval must not be usable by another caller, for other
 * arguments, under another policy, after its expiry, or twice; so each
 * sealed state names all of these and is checked against all of them.
 *
 * Form: `v1.<payload>.<mac>`, both base64url; the MAC is HMAC-SHA256 over
 * `v1.<payload>` with a key derived (HKDF) from the state directory's
 * owner-only secret, so a restart keeps states valid and no second secret
 * file is needed. Single use is remembered in memory, per process, until
 * the state's expiry.
 *
 * Deny on failure: anything that is not exactly a state we sealed, for this
 * binding, unexpired and unused, is refused with a reason code.
 *
 * @module
 */
import { ensureStateDir } from "../state/state_dir.ts";
import { loadOrCreateSecret } from "../auth/state/secret.ts";
import { loadOrCreateSharedSecret } from "../auth/state/shared_secret.ts";
import type { StateStore } from "../state/mod.ts";
import {
  decodeBase64Url as fromBase64Url,
  encodeBase64Url as toBase64Url,
} from "../encoding/mod.ts";
import { MAX_STATE_TTL_MS } from "../approvals/round_trip.ts";

/** What a state is bound to; all of it must match when it comes back. */
export interface StateBinding {
  /** Who asked: the OAuth client id, or the transport for the operator's own client. */
  readonly caller: string;
  readonly tool: string;
  /** {@linkcode argumentsDigest} of the tool call's arguments. */
  readonly argumentsDigest: string;
  readonly policyHash: string;
}

/** Why a state was refused. */
export type StateRefusal =
  | "malformed"
  | "forged"
  | "expired"
  | "replayed"
  | "other_caller"
  | "other_tool"
  | "other_arguments"
  | "other_policy";

export type OpenedState =
  | { readonly ok: true; readonly payload: unknown }
  | { readonly ok: false; readonly reason: StateRefusal };

export { MAX_STATE_TTL_MS } from "../approvals/round_trip.ts";
/** Bound on remembered used states, so a flood cannot grow memory without end. */
const MAX_REMEMBERED = 100_000;
const VERSION = "v1";
const HKDF_INFO = new TextEncoder().encode("htmcp mrtr requestState v1");

interface Sealed {
  readonly n: string;
  readonly c: string;
  readonly t: string;
  readonly a: string;
  readonly p: string;
  readonly e: number;
  readonly s: unknown;
}

/** The state-store kind that records states already accepted once (fleet-wide single use). */
const USED_KIND = "request_states_used";
/** Opens between two sweeps of expired used-state records in the store. */
const SWEEP_EVERY = 256;

/** Seals and opens request states with one key. */
export class RequestStateSealer {
  readonly #key: CryptoKey;
  readonly #now: () => number;
  /** Nonce -> expiry of states already accepted once (this process). */
  readonly #used = new Map<string, number>();
  /** Where single use is recorded for every process sharing the store, or null. */
  readonly #store: StateStore | null;
  #opens = 0;

  constructor(key: CryptoKey, now: () => number = Date.now, store: StateStore | null = null) {
    this.#key = key;
    this.#now = now;
    this.#store = store;
  }

  /**
   * The sealer of a policy's state store: keyed from the fleet's shared
   * secret on PostgreSQL (every replica opens what any replica sealed), else
   * from the state dir's secret; single use is recorded in the store, so a
   * state accepted by one process or replica is a replay on every other.
   * Without any store: a random key in memory, single use per process.
   */
  static async forStore(
    store: StateStore | null,
    stateDir: string | null,
  ): Promise<
    | { readonly ok: true; readonly sealer: RequestStateSealer }
    | { readonly ok: false; readonly message: string }
  > {
    if (store !== null && store.backend === "postgres") {
      const loaded = await loadOrCreateSharedSecret(store);
      if (!loaded.ok) return loaded;
      return {
        ok: true,
        sealer: new RequestStateSealer(await deriveKey(loaded.key), Date.now, store),
      };
    }
    const keyed = await RequestStateSealer.fromStateDir(stateDir);
    if (!keyed.ok || store === null) return keyed;
    return { ok: true, sealer: new RequestStateSealer(keyed.sealer.#key, Date.now, store) };
  }

  /**
   * The sealer keyed from `stateDir`'s secret, or from a random key held in
   * memory only when the policy has no state directory (states then die
   * with the process).
   */
  static async fromStateDir(
    stateDir: string | null,
  ): Promise<
    | { readonly ok: true; readonly sealer: RequestStateSealer }
    | { readonly ok: false; readonly message: string }
  > {
    let secret: Uint8Array;
    if (stateDir === null) {
      secret = crypto.getRandomValues(new Uint8Array(32));
    } else {
      const dir = await ensureStateDir(stateDir);
      if (!dir.ok) return dir;
      const loaded = await loadOrCreateSecret(stateDir);
      if (!loaded.ok) return loaded;
      secret = loaded.key;
    }
    return { ok: true, sealer: new RequestStateSealer(await deriveKey(secret)) };
  }

  /** Seals `payload` for `binding`, valid for `ttlMs`. */
  async seal(binding: StateBinding, payload: unknown, ttlMs: number): Promise<string> {
    if (!Number.isInteger(ttlMs) || ttlMs <= 0 || ttlMs > MAX_STATE_TTL_MS) {
      throw new RangeError(`A request state lives 1 to ${MAX_STATE_TTL_MS} ms, not ${ttlMs}.`);
    }
    const sealed: Sealed = {
      n: toBase64Url(crypto.getRandomValues(new Uint8Array(16))),
      c: binding.caller,
      t: binding.tool,
      a: binding.argumentsDigest,
      p: binding.policyHash,
      e: this.#now() + ttlMs,
      s: payload,
    };
    const body = `${VERSION}.${toBase64Url(new TextEncoder().encode(JSON.stringify(sealed)))}`;
    const mac = await crypto.subtle.sign("HMAC", this.#key, new TextEncoder().encode(body));
    return `${body}.${toBase64Url(new Uint8Array(mac))}`;
  }

  /** Opens `state` for `binding`, consuming it: a second open is "replayed". */
  async open(state: string, binding: StateBinding): Promise<OpenedState> {
    const parts = state.split(".");
    if (parts.length !== 3 || parts[0] !== VERSION || state.length > 64 * 1024) {
      return { ok: false, reason: "malformed" };
    }
    const mac = fromBase64Url(parts[2] as string);
    const payloadBytes = fromBase64Url(parts[1] as string);
    if (mac === null || payloadBytes === null) return { ok: false, reason: "malformed" };
    // The MAC first: nothing of an unauthenticated payload is looked at.
    const genuine = await crypto.subtle.verify(
      "HMAC",
      this.#key,
      bytes(mac),
      new TextEncoder().encode(`${parts[0]}.${parts[1]}`),
    );
    if (!genuine) return { ok: false, reason: "forged" };
    let sealed: Sealed;
    try {
      sealed = JSON.parse(new TextDecoder().decode(payloadBytes)) as Sealed;
    } catch {
      return { ok: false, reason: "malformed" };
    }
    const now = this.#now();
    if (typeof sealed.e !== "number" || sealed.e <= now) return { ok: false, reason: "expired" };
    if (sealed.c !== binding.caller) return { ok: false, reason: "other_caller" };
    if (sealed.t !== binding.tool) return { ok: false, reason: "other_tool" };
    if (sealed.a !== binding.argumentsDigest) return { ok: false, reason: "other_arguments" };
    if (sealed.p !== binding.policyHash) return { ok: false, reason: "other_policy" };
    this.#forgetExpired(now);
    if (this.#used.has(sealed.n)) return { ok: false, reason: "replayed" };
    if (this.#used.size >= MAX_REMEMBERED) {
      // Full of unexpired states: refusing is safe, forgetting one is not.
      return { ok: false, reason: "replayed" };
    }
    if (this.#store !== null && !(await this.#claimInStore(sealed.n, sealed.e, now))) {
      return { ok: false, reason: "replayed" };
    }
    this.#used.set(sealed.n, sealed.e);
    return { ok: true, payload: sealed.s };
  }

  /**
   * Records `nonce` as used in the shared store: create-if-absent, so of two
   * processes opening the same state at once exactly one wins. A store that
   * cannot be reached refuses (fail closed: a replay must never pass).
   */
  async #claimInStore(nonce: string, expiry: number, now: number): Promise<boolean> {
    const store = this.#store!;
    try {
      if (++this.#opens % SWEEP_EVERY === 0) {
        for (const id of await store.list(USED_KIND)) {
          const record = await store.read(USED_KIND, id) as { e?: unknown } | null;
          if (typeof record?.e === "number" && record.e <= now) await store.remove(USED_KIND, id);
        }
      }
      return await store.compareAndSwap(USED_KIND, nonce, null, { e: expiry });
    } catch {
      return false;
    }
  }

  #forgetExpired(now: number): void {
    for (const [nonce, expiry] of this.#used) {
      if (expiry <= now) this.#used.delete(nonce);
    }
  }
}

/**
 * SHA-256 of the arguments as canonical JSON (keys sorted at every depth),
 * so the same arguments in another key order bind the same.
 */
/**
 * A key of its own, derived from `secret`, so a MAC over a request state can
 * never double as a token signature made with the same secret.
 */
async function deriveKey(secret: Uint8Array): Promise<CryptoKey> {
  const base = await crypto.subtle.importKey("raw", bytes(secret), "HKDF", false, ["deriveKey"]);
  return await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: HKDF_INFO },
    base,
    { name: "HMAC", hash: "SHA-256", length: 256 },
    false,
    ["sign", "verify"],
  );
}

export async function argumentsDigest(args: unknown): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(canonicalJson(args ?? {})),
  );
  return `sha256:${
    Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("")
  }`;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.keys(value).sort().map((key) =>
      `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`
    );
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function bytes(view: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(view);
}
