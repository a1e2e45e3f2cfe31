/**
 * The facts a launcher run looked at, recorded so that its start can be
 * reused (`_start_cache.ts`): every file it read, every path it looked up
 * (and which of the answer's fields it read), every environment variable it
 * asked for and its working folder.
 *
 * The launcher is a function of its arguments, its code and these facts, so
 * a later start whose facts are all still the same would print the same
 * start. That holds only if nothing the launcher consults escapes the record,
 * so the record is exhaustive by construction, not by care: while recording,
 * every function of the `Deno` namespace and of `Deno.env` is wrapped. A
 * lookup (`stat`, `lstat`, `realPath`, `readLink`, a file read, `cwd`,
 * `env.get`/`has`) becomes a fact; a function known to consult nothing
 * outside the process passes through; anything else (spawning, listing a
 * folder, writing, the whole environment, ...) taints the run, and a tainted
 * run is never reused. A new kind of lookup added to the loader later makes
 * the start uncached, never wrong.
 *
 * Imported first by the launcher (`launch.ts`): ES modules run in import
 * order, so the wrappers are in place before any other module of the
 * launcher evaluates. It records only when the installed command's script
 * asks for it (`HTMCP_START_CACHE`); the variables that say so are read
 * here, before recording, since they are the run's mode, not its input.
 *
 * @module
 */

/** One fact a launcher run looked at. */
export type StartFact =
  | { readonly kind: "cwd" }
  | { readonly kind: "env"; readonly name: string }
  | { readonly kind: "realpath" | "readlink" | "content"; readonly path: string }
  | {
    readonly kind: "stat" | "lstat";
    readonly path: string;
    /** The fields of the answer the run read (`Deno.FileInfo`'s names), sorted. */
    readonly fields: readonly string[];
  };

/** `HTMCP_LAUNCH_EXEC=1`: print the start as a shell fragment (the installed command). */
export const LAUNCH_EXEC: boolean = Deno.env.get("HTMCP_LAUNCH_EXEC") === "1";

/**
 * What the installed script passes when this start may be cached: where to
 * write its entry (`HTMCP_START_CACHE`, as `htmcp-start check` named it),
 * the salt the entry is for (`HTMCP_START_SALT`, the launcher's hash) and
 * the tool that reads facts (`HTMCP_START_TOOL`); null otherwise.
 */
export const START_CACHE:
  | { readonly entry: string; readonly salt: string; readonly tool: string }
  | null = cacheRequest();

function cacheRequest() {
  if (!LAUNCH_EXEC) return null;
  const entry = Deno.env.get("HTMCP_START_CACHE") || "";
  const salt = Deno.env.get("HTMCP_START_SALT") || "";
  const tool = Deno.env.get("HTMCP_START_TOOL") || "";
  return entry !== "" && salt !== "" && tool.startsWith("/") ? { entry, salt, tool } : null;
}

/**
 * Functions of `Deno` that consult nothing outside the process (or only what
 * the installed script fixes: `execPath` is the `deno` it names), or that
 * only end the run.
 */
const PASS_THROUGH: ReadonlySet<string> = new Set([
  "addSignalListener",
  "execPath",
  "exit",
  "inspect",
  "removeSignalListener",
]);

type PathKind = "stat" | "lstat" | "realpath" | "readlink" | "content";

/** The lookup functions, each with the fact its first argument names. */
const LOOKUPS: ReadonlyMap<string, PathKind> = new Map([
  ["stat", "stat"],
  ["statSync", "stat"],
  ["lstat", "lstat"],
  ["lstatSync", "lstat"],
  ["realPath", "realpath"],
  ["realPathSync", "realpath"],
  ["readLink", "readlink"],
  ["readLinkSync", "readlink"],
  ["readFile", "content"],
  ["readFileSync", "content"],
  ["readTextFile", "content"],
  ["readTextFileSync", "content"],
]);

/** `Deno.FileInfo`'s fields the witness can print (`_start_cache.ts`); reading another taints. */
export const FILE_INFO_FIELDS: ReadonlySet<string> = new Set([
  "isFile",
  "isDirectory",
  "isSymlink",
  "isBlockDevice",
  "isCharDevice",
  "isFifo",
  "isSocket",
  "size",
  "mtime",
  "atime",
  "birthtime",
  "ctime",
  "dev",
  "ino",
  "mode",
  "nlink",
  "uid",
  "gid",
  "rdev",
  "blksize",
  "blocks",
]);

type AnyFunction = (...args: unknown[]) => unknown;

interface Recorded {
  readonly fact: StartFact;
  /** For a stat: the fields read so far. */
  readonly fields: Set<string>;
}

/** A recording in progress: the facts so far, and what tainted it. */
export class StartRecorder {
  readonly #facts = new Map<string, Recorded>();
  readonly #taints = new Set<string>();
  readonly #restore: (() => void)[] = [];
  #on = false;

  /** Wraps the `Deno` namespace; every call from now on is recorded or taints. */
  start(): void {
    if (this.#on) throw new TypeError("The start recorder is already recording.");
    this.#on = true;
    for (const name of Object.getOwnPropertyNames(Deno)) {
      if (PASS_THROUGH.has(name)) continue;
      const kind = LOOKUPS.get(name);
      this.#wrapProperty(Deno, name, (original) => {
        if (name === "cwd") return this.#recording(original, () => void this.#add({ kind: "cwd" }));
        if (kind === undefined) return this.#tainting(original, `Deno.${name}`);
        return this.#recording(original, (args) => this.#addPath(kind, args[0]));
      });
    }
    for (const name of Object.getOwnPropertyNames(Deno.env)) {
      this.#wrapProperty(
        Deno.env,
        name,
        (original) =>
          name === "get" || name === "has"
            ? this.#recording(original, (args) => this.#addEnv(args[0]))
            : this.#tainting(original, `Deno.env.${name}`),
      );
    }
  }

  /** Unwraps the namespace and returns what was recorded. */
  stop(): { readonly facts: readonly StartFact[]; readonly taints: readonly string[] } {
    for (const restore of this.#restore.splice(0).reverse()) restore();
    this.#on = false;
    const facts = [...this.#facts.values()].map(({ fact, fields }) =>
      fact.kind === "stat" || fact.kind === "lstat" ? { ...fact, fields: [...fields].sort() } : fact
    );
    const taints = [...this.#taints];
    this.#facts.clear();
    this.#taints.clear();
    return { facts, taints };
  }

  /**
   * Replaces the function at `owner[name]` (a value, or what a getter returns:
   * the runtime loads some, such as `Command`, on first use) with `wrap` of it,
   * and keeps what undoes that. Properties that hold no function stay.
   */
  #wrapProperty(owner: object, name: string, wrap: (original: AnyFunction) => AnyFunction): void {
    const descriptor = Object.getOwnPropertyDescriptor(owner, name);
    if (descriptor === undefined) return;
    if (!descriptor.configurable) {
      // What cannot be replaced cannot be recorded: a function there would
      // be a way around the record, so the run is not reusable at all.
      if (typeof peek(owner, descriptor) === "function") {
        this.#taints.add(`${name}, which cannot be wrapped`);
      }
      return;
    }
    const replaced = new WeakMap<AnyFunction, AnyFunction>();
    const wrapped = (value: unknown) => {
      if (typeof value !== "function") return value;
      const fn = value as AnyFunction;
      if (!replaced.has(fn)) replaced.set(fn, wrap(fn));
      return replaced.get(fn);
    };
    if ("value" in descriptor) {
      if (typeof descriptor.value !== "function") return;
      Object.defineProperty(owner, name, { ...descriptor, value: wrapped(descriptor.value) });
    } else {
      const get = descriptor.get;
      if (get === undefined) return;
      Object.defineProperty(owner, name, { ...descriptor, get: () => wrapped(get.call(owner)) });
    }
    this.#restore.push(() => Object.defineProperty(owner, name, descriptor));
  }

  /** `original`, noting each call's arguments, and passing each answer through `answer`. */
  #recording(
    original: AnyFunction,
    note: (args: unknown[]) => ((result: unknown) => unknown) | void,
  ): AnyFunction {
    return new Proxy(original, {
      apply(target, self, args) {
        const answer = note(args);
        const result = Reflect.apply(target, self, args);
        if (answer === undefined) return result;
        return result instanceof Promise ? result.then(answer) : answer(result);
      },
    });
  }

  /** Kept callable (a class stays constructible), but the run is no longer reusable. */
  #tainting(original: AnyFunction, label: string): AnyFunction {
    const taints = this.#taints;
    return new Proxy(original, {
      apply(target, self, args) {
        taints.add(label);
        return Reflect.apply(target, self, args);
      },
      construct(target, args, newTarget) {
        taints.add(label);
        return Reflect.construct(target, args, newTarget === undefined ? target : newTarget);
      },
    });
  }

  #add(fact: StartFact): Recorded {
    const key = JSON.stringify(fact);
    const known = this.#facts.get(key);
    if (known !== undefined) return known;
    const recorded = { fact, fields: new Set<string>() };
    this.#facts.set(key, recorded);
    return recorded;
  }

  /** Records a lookup of `target`; for a stat, the answer reports which of its fields are read. */
  #addPath(kind: PathKind, target: unknown): ((info: unknown) => unknown) | void {
    const text = target instanceof URL
      ? (target.protocol === "file:" ? decodeURIComponent(target.pathname) : null)
      : typeof target === "string"
      ? target
      : null;
    if (text === null || text === "" || text.includes("\0")) {
      this.#taints.add(`a ${kind} of ${String(target)}`);
      return;
    }
    // A relative lookup depends on the working folder too.
    if (!text.startsWith("/")) this.#add({ kind: "cwd" });
    if (kind !== "stat" && kind !== "lstat") {
      this.#add({ kind, path: text });
      return;
    }
    const { fields } = this.#add({ kind, path: text, fields: [] });
    const taints = this.#taints;
    return (info) =>
      new Proxy(info as object, {
        get(target, field, receiver) {
          // A promise resolved with the answer asks it for `then`: not a field.
          if (typeof field === "string" && field !== "then") {
            if (FILE_INFO_FIELDS.has(field)) fields.add(field);
            else taints.add(`the field ${field} of a ${kind}`);
          }
          return Reflect.get(target, field, receiver);
        },
      });
  }

  #addEnv(name: unknown): void {
    if (typeof name !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      this.#taints.add(`the variable ${String(name)}`);
      return;
    }
    this.#add({ kind: "env", name });
  }
}

/** What a property holds; a getter that throws (`Deno.jupyter` outside Jupyter) holds nothing usable. */
function peek(owner: object, descriptor: PropertyDescriptor): unknown {
  if ("value" in descriptor) return descriptor.value;
  try {
    return descriptor.get?.call(owner);
  } catch {
    return undefined;
  }
}

/** The launcher's recorder: recording from this module's evaluation when a cache entry is wanted. */
export const START_RECORDER: StartRecorder | null = START_CACHE === null
  ? null
  : new StartRecorder();
START_RECORDER?.start();
