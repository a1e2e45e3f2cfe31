/**
 * `deno run --allow-read --allow-write=/tmp --allow-run=deno scripts/check_imports.ts`
 * (part of `deno task check`): the import graph of `src/` has no cycles and
 * no upward arrows.
 *
 * - A cycle between files, or between folders (`config` -> `policy` ->
 *   `config`), makes module order depend on who imports first and ties
 *   concerns together that the layout says are apart.
 * - An upward arrow is a folder importing from a folder of a higher layer
 *   (`LAYERS` below: pure data at the bottom, transports and the CLI on
 *   top), such as a storage module reaching into the OAuth server.
 * - The vocabulary (`VOCABULARY`: the policy's types, the result codes, the
 *   scopes) is declarations every layer shares; it may be imported from
 *   anywhere and itself imports nothing but vocabulary, which the check
 *   enforces, so it cannot carry a cycle in.
 * - `KNOWN` names the arrows still to remove, each with why it is still
 *   there: they are printed, not failed, and any other arrow fails.
 * - A sealed folder (`SEALED`) is entered from other folders through its
 *   `mod.ts`, or through one of its declared light entries (`LIGHT_ENTRIES`,
 *   each with its reason); an import naming another of its files fails.
 *
 * The graph comes from `deno info --json` over every module under `src/`,
 * type-only imports included (a type cycle is still a design cycle). Prints
 * each finding and exits 1 when there is one, 0 otherwise. It also counts
 * the imports between folders that do not go through the folder's `mod.ts`
 * (reported; enforced for the sealed folders only: `docs/ARCHITECTURE.md`
 * says what holds).
 *
 * @module
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import { join, relative } from "node:path";

const REPO = fileURLToPath(new URL("..", import.meta.url));
/** The source tree both checks read (this one and `check_timers.ts`). */
export const SRC = join(REPO, "src");

/**
 * The layers, lowest first: a folder may import from its own layer's other
 * folders only when that makes no cycle, and from any lower layer freely.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ["version.ts", "result", "timers", "streams", "_sdk_types", "net", "path", "encoding"],
  ["redact", "state", "sandbox", "concurrency"],
  ["policy", "audit"],
  ["jail", "egress", "full_control"],
  ["config", "plan"],
  ["exec", "context", "session", "permissions", "auth", "links", "jobs", "approvals"],
  ["tools"],
  ["policy_tools", "server", "telemetry", "health"],
  ["transport", "protocol"],
  ["cli"],
  ["main.ts"],
];

/** Pure declarations any module may import; they import only each other. */
export const VOCABULARY: ReadonlySet<string> = new Set([
  "config/types.ts",
  "result/codes.ts",
  "auth/scopes.ts",
]);

/**
 * Folders whose `mod.ts` is their only way in from the rest of `src/`: every
 * folder that no other folder enters past its `mod.ts` (what is sealed stays
 * sealed). A folder joins when its last direct import goes through `mod.ts`.
 */
export const SEALED: ReadonlySet<string> = new Set([
  "concurrency",
  "context",
  "encoding",
  "exec",
  "health",
  "jobs",
  "links",
  "path",
  "permissions",
  "plan",
  "protocol",
  "session",
  "streams",
  "telemetry",
  "timers",
]);

/**
 * Files of sealed folders that other folders may import beside the folder's
 * `mod.ts`, each with the reason. A light entry is a part of the folder that
 * a start path needs without the rest: importing the `mod.ts` would load what
 * the stdio start or the launcher never uses (the OpenTelemetry SDK, the
 * executor, the egress proxy), and a cold start pays for every module it
 * loads. The surface stays declared and checked; it is just not one file.
 */
export const LIGHT_ENTRIES: ReadonlyMap<string, string> = new Map([
  ["telemetry/log.ts", "the operator log, which every start writes, without the OpenTelemetry SDK"],
  [
    "telemetry/sink.ts",
    "the export switch, which imports the OpenTelemetry SDK only when telemetry is on",
  ],
  [
    "telemetry/call_scope.ts",
    "the call's context carried through its awaits, which the audit log reads",
  ],
  [
    "permissions/confine.ts",
    "the server's own confinement check at start, without the flag renderer's CLI forms",
  ],
  [
    "exec/launcher.ts",
    "the launcher helper's argv and path, which the permission set names, without the executor",
  ],
]);

/**
 * Arrows not removed yet (`from -> to`; `*` in `from` stands for one file
 * name), each with the reason it stays for now. Empty: every arrow there was
 * is gone. An entry is for an arrow that cannot be removed in the change
 * that finds it, never for a new one.
 */
export const KNOWN: ReadonlyMap<string, string> = new Map();

/** One import from a module of `src/` to another. */
export interface ImportEdge {
  readonly from: string;
  readonly to: string;
  /** True when only types are imported (`import type`). */
  readonly typeOnly: boolean;
}

/** What the check found. */
export interface ImportReport {
  readonly fileCycles: readonly (readonly string[])[];
  readonly folderCycles: readonly (readonly string[])[];
  readonly upward: readonly ImportEdge[];
  /** Vocabulary modules importing something other than vocabulary. */
  readonly impureVocabulary: readonly ImportEdge[];
  /** Arrows of `KNOWN` that were found (printed, not failed). */
  readonly known: readonly ImportEdge[];
  /** Imports from another folder into a sealed folder that name neither its `mod.ts` nor a light entry. */
  readonly pastSealed: readonly ImportEdge[];
  /** Cross-folder imports that name a file other than the folder's `mod.ts`. */
  readonly pastModTs: number;
  readonly crossFolder: number;
}

/** The top folder (or top-level file) of a path relative to `src/`. */
export function folderOf(path: string): string {
  const slash = path.indexOf("/");
  return slash === -1 ? path : path.slice(0, slash);
}

/** Every `.ts` file under `dir`, sorted. */
export async function listSources(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) found.push(...await listSources(path));
    else if (entry.isFile && entry.name.endsWith(".ts")) found.push(path);
  }
  return found.sort();
}

interface InfoModule {
  readonly specifier?: string;
  readonly dependencies?: readonly {
    readonly code?: { readonly specifier?: string };
    readonly type?: { readonly specifier?: string };
  }[];
}

/** Every import between modules of `src/`, from one `deno info --json` over all of them. */
export async function readImportGraph(): Promise<ImportEdge[]> {
  const sources = await listSources(SRC);
  // deno info takes one root: a scratch module importing every source file.
  const scratch = await Deno.makeTempDir({ prefix: "htmcp-imports-" });
  try {
    const root = join(scratch, "all.ts");
    await Deno.writeTextFile(
      root,
      sources.map((path) => `import ${JSON.stringify(pathToFileURL(path).href)};\n`).join(""),
    );
    const output = await new Deno.Command("deno", {
      args: ["info", "--json", "--config", join(REPO, "deno.json"), root],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!output.success) {
      throw new Error(`deno info failed: ${new TextDecoder().decode(output.stderr)}`);
    }
    const info = JSON.parse(new TextDecoder().decode(output.stdout)) as {
      modules: readonly InfoModule[];
    };
    const prefix = pathToFileURL(SRC).href + "/";
    const inSrc = (url: string | undefined) =>
      url !== undefined && url.startsWith(prefix) ? url.slice(prefix.length) : null;
    const edges: ImportEdge[] = [];
    for (const module of info.modules) {
      const from = inSrc(module.specifier);
      if (from === null) continue;
      for (const dependency of module.dependencies ?? []) {
        const code = inSrc(dependency.code?.specifier);
        const type = inSrc(dependency.type?.specifier);
        const to = code ?? type;
        if (to !== null) edges.push({ from, to, typeOnly: code === null });
      }
    }
    return edges;
  } finally {
    await Deno.remove(scratch, { recursive: true });
  }
}

/** Strongly connected components with more than one member (Tarjan), each sorted. */
export function cyclesOf(edges: readonly { from: string; to: string }[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (from === to) continue;
    next.set(from, [...(next.get(from) ?? []), to]);
    if (!next.has(to)) next.set(to, []);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of [...next.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}

/** The reason `edge` is one of the `known` arrows, or null when it is not one. */
export function knownReason(
  edge: ImportEdge,
  known: ReadonlyMap<string, string> = KNOWN,
): string | null {
  for (const [arrow, reason] of known) {
    const [from = "", to = ""] = arrow.split(" -> ");
    const star = from.indexOf("*");
    const fromMatches = star === -1
      ? edge.from === from
      : edge.from.startsWith(from.slice(0, star)) &&
        edge.from.endsWith(from.slice(star + 1)) &&
        !edge.from.slice(star, edge.from.length - (from.length - star - 1)).includes("/");
    // Only type imports may be known: a runtime arrow of this shape is new, and fails.
    if (fromMatches && edge.to === to && edge.typeOnly) return reason;
  }
  return null;
}

/**
 * Judges `edges` against the layers and the sealed folders, `knownArrows`
 * (default `KNOWN`) printed, not failed.
 */
export function checkImports(
  all: readonly ImportEdge[],
  knownArrows: ReadonlyMap<string, string> = KNOWN,
  sealed: ReadonlySet<string> = SEALED,
  lightEntries: ReadonlyMap<string, string> = LIGHT_ENTRIES,
): ImportReport {
  const known = all.filter((edge) => knownReason(edge, knownArrows) !== null);
  const edges = all.filter((edge) => knownReason(edge, knownArrows) === null);
  const impureVocabulary = edges.filter((edge) =>
    VOCABULARY.has(edge.from) && !VOCABULARY.has(edge.to)
  );
  const layerOf = new Map<string, number>();
  LAYERS.forEach((folders, layer) => folders.forEach((folder) => layerOf.set(folder, layer)));
  const folderEdges: { from: string; to: string }[] = [];
  const upward: ImportEdge[] = [];
  const pastSealed: ImportEdge[] = [];
  let crossFolder = 0;
  let pastModTs = 0;
  for (const edge of edges) {
    const from = folderOf(edge.from);
    const to = folderOf(edge.to);
    if (from === to) continue;
    if (edge.to.includes("/")) {
      crossFolder++;
      if (!edge.to.endsWith("/mod.ts")) pastModTs++;
    }
    if (sealed.has(to) && edge.to !== `${to}/mod.ts` && !lightEntries.has(edge.to)) {
      pastSealed.push(edge);
    }
    // The vocabulary sits below every layer and joins no folder's cycle.
    if (VOCABULARY.has(edge.to)) continue;
    folderEdges.push({ from, to });
    const fromLayer = layerOf.get(from);
    const toLayer = layerOf.get(to);
    // A folder missing from LAYERS is a finding too: the table must name every concern.
    if (fromLayer === undefined || toLayer === undefined || toLayer > fromLayer) upward.push(edge);
  }
  return {
    fileCycles: cyclesOf(edges),
    folderCycles: cyclesOf(folderEdges),
    upward,
    impureVocabulary,
    known,
    pastSealed,
    pastModTs,
    crossFolder,
  };
}

if (import.meta.main) {
  const report = checkImports(await readImportGraph());
  for (const cycle of report.fileCycles) console.log(`file cycle: ${cycle.join(" <-> ")}`);
  for (const cycle of report.folderCycles) console.log(`folder cycle: ${cycle.join(" <-> ")}`);
  for (const edge of report.upward) {
    console.log(
      `upward import: ${edge.from} -> ${edge.to}${edge.typeOnly ? " (types only)" : ""}`,
    );
  }
  for (const edge of report.impureVocabulary) {
    console.log(`vocabulary imports beyond the vocabulary: ${edge.from} -> ${edge.to}`);
  }
  for (const edge of report.pastSealed) {
    console.log(
      `import past a sealed folder's mod.ts: ${edge.from} -> ${edge.to} (use ${
        folderOf(edge.to)
      }/mod.ts)`,
    );
  }
  const knownCounts = new Map<string, number>();
  for (const edge of report.known) {
    const reason = knownReason(edge) ?? "";
    knownCounts.set(reason, (knownCounts.get(reason) ?? 0) + 1);
  }
  for (const [reason, count] of knownCounts) {
    console.log(`known, still to remove (${count} import(s)): ${reason}`);
  }
  const findings = report.fileCycles.length + report.folderCycles.length +
    report.upward.length + report.impureVocabulary.length + report.pastSealed.length;
  console.log(
    `check_imports: ${findings} finding(s); ${report.pastModTs} of ${report.crossFolder} ` +
      `imports between folders name a file other than the folder's mod.ts (${
        relative(REPO, SRC)
      }/)`,
  );
  Deno.exit(findings === 0 ? 0 : 1);
}
