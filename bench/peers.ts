/**
 * htmcp against two peers, side by side in one run: the round trip of one
 * command that does nothing (`true`), over stdio, through the same raw
 * JSON-RPC client (`_line_client.ts`), interleaved in rounds so machine
 * noise lands on every server alike.
 *
 * - `htmcp, mode none` and `htmcp, bwrap`: the server under its generated
 *   permission flags, `run_command("true")`.
 * - `mcp-server-commands` 0.5.0 (no containment): `run_command("true")`.
 * - `codex-shell-tool-mcp` 0.97.0 (a patched Bash under `codex-linux-sandbox`:
 *   bubblewrap, seccomp), `shell("true")`, after the
 *   `codex/sandbox-state/update` its harness sends (workspace-write, no
 *   network), with the `codex-linux-sandbox` of the same codex release.
 * - the floor: a bare `Deno.Command` spawn of `/usr/bin/true` from this process.
 *
 * The peers are test tools, not dependencies: installed once with npm into
 * `$HTMCP_PEERS_DIR` (default `~/.cache/htmcp-bench-peers`), outside
 * deno.lock. A peer that cannot be installed or started is reported as such
 * and left out; the others are still measured.
 *
 * Run: deno run -A bench/peers.ts [rounds] [calls-per-round] [gap-ms]
 *
 * @module
 */
import { join } from "node:path";
import { serverUnderFlags, writePolicy } from "./_server.ts";
import { type LineClient, type LineServerLaunch, startLineClient } from "./_line_client.ts";
import { bareSpawn, percentiles } from "./stdio_roundtrip.ts";

const p50 = (samples: readonly number[]) => percentiles(samples).p50;

const PEERS = [
  "mcp-server-commands@0.5.0",
  "@openai/codex-shell-tool-mcp@0.97.0",
  "@openai/codex@0.97.0",
];
/** The peers run with a clean environment: no shell start-up files, no user PATH. */
const PEER_ENV = { PATH: "/usr/local/bin:/usr/bin:/bin" };

/** One server in the comparison. */
interface Contender {
  readonly name: string;
  readonly client: LineClient;
  /** One round trip of the do-nothing command; throws when it did not run. */
  readonly call: () => Promise<void>;
}

/** The p50 of one contender, or why it was left out. */
export type PeerFigure =
  | { readonly name: string; readonly p50Ms: number }
  | { readonly name: string; readonly skipped: string };

function peersDir(): string {
  return Deno.env.get("HTMCP_PEERS_DIR") ??
    join(Deno.env.get("HOME") ?? "/root", ".cache", "htmcp-bench-peers");
}

async function installPeers(dir: string): Promise<string | null> {
  const marker = join(dir, "installed.json");
  const wanted = JSON.stringify(PEERS);
  if ((await Deno.readTextFile(marker).catch(() => "")) === wanted) return null;
  await Deno.mkdir(dir, { recursive: true });
  const out = await new Deno.Command("npm", {
    args: ["install", "--no-audit", "--no-fund", "--prefix", dir, ...PEERS],
    stdout: "piped",
    stderr: "piped",
  }).output().catch((error) => error as Error);
  if (out instanceof Error) return `npm could not be run (${out.message})`;
  if (!out.success) {
    return `npm install failed: ${new TextDecoder().decode(out.stderr).slice(-300)}`;
  }
  await Deno.writeTextFile(marker, wanted);
  return null;
}

/**
 * A contender whose call is `tools/call` of `tool` with `args`, checked by
 * `ran` (a call that did not run the command fails the whole measurement).
 */
function contender(
  name: string,
  client: LineClient,
  tool: string,
  args: Record<string, unknown>,
  ran: (result: unknown) => boolean,
): Contender {
  return {
    name,
    client,
    call: async () => {
      const answer = await client.request("tools/call", { name: tool, arguments: args });
      if (!ran(answer.result)) {
        throw new Error(`${name}: ${tool} did not run: ${JSON.stringify(answer).slice(0, 300)}`);
      }
    },
  };
}

async function htmcp(dir: string, mode: "none" | "bwrap"): Promise<Contender> {
  const client = await startLineClient(await serverUnderFlags(await writePolicy(dir, mode)));
  return contender(
    `htmcp, mode ${mode}`,
    client,
    "run_command",
    { command: "true" },
    (result) =>
      (result as { structuredContent?: { code?: string } } | undefined)
        ?.structuredContent?.code === "OK",
  );
}

async function mcpServerCommands(peers: string, work: string): Promise<Contender> {
  const launch: LineServerLaunch = {
    command: join(peers, "node_modules", ".bin", "mcp-server-commands"),
    args: [],
    env: { ...PEER_ENV, HOME: work },
    cwd: work,
  };
  const client = await startLineClient(launch);
  return contender(
    "mcp-server-commands 0.5.0 (no containment)",
    client,
    "run_command",
    { command: "true" },
    (result) => result !== undefined && (result as { isError?: boolean }).isError !== true,
  );
}

async function codexShell(peers: string, work: string): Promise<Contender> {
  const sandbox = join(
    peers,
    "node_modules",
    "@openai",
    "codex",
    "vendor",
    "x86_64-unknown-linux-musl",
    "codex",
    "codex",
  );
  // The codex binary is codex-linux-sandbox when started under that name.
  const linked = join(peers, "codex-linux-sandbox");
  await Deno.remove(linked).catch(() => {});
  await Deno.symlink(sandbox, linked);
  const client = await startLineClient({
    command: join(peers, "node_modules", ".bin", "codex-shell-tool-mcp"),
    args: [],
    env: { ...PEER_ENV, HOME: work },
    cwd: work,
  });
  const updated = await client.request("codex/sandbox-state/update", {
    sandboxPolicy: {
      type: "workspace-write",
      writable_roots: [work],
      network_access: false,
      exclude_tmpdir_env_var: true,
      exclude_slash_tmp: true,
    },
    codexLinuxSandboxExe: linked,
    sandboxCwd: work,
  });
  if (updated.error !== undefined) {
    await client.close();
    throw new Error(`codex/sandbox-state/update: ${JSON.stringify(updated.error)}`);
  }
  return contender(
    "codex-shell-tool-mcp 0.97.0 (bwrap + seccomp)",
    client,
    "shell",
    { command: "true", workdir: work },
    (result) =>
      ((result as { content?: { text?: string }[] } | undefined)?.content?.[0]?.text ?? "")
        .includes('"exit_code":0'),
  );
}

/**
 * Measures every contender that starts: `rounds` rounds of `perRound` calls each, in turn.
 *
 * @param gapMs A pause after each call, outside its time: 0 sends calls back
 *   to back (a script's pace); a few tens of ms is a client that thinks
 *   between calls, as a model does (seconds, in fact), which leaves htmcp's
 *   bwrap mode the time to make the next call's sandbox ahead.
 * @returns One figure per contender, the bare-spawn floor first.
 */
export async function measurePeers(
  rounds = 10,
  perRound = 20,
  gapMs = 0,
): Promise<PeerFigure[]> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-bench-peers-" });
  await Deno.chmod(dir, 0o755); // the sandbox user must reach the jail below it
  const work = join(dir, "work");
  await Deno.mkdir(work);
  const peers = peersDir();
  const figures: PeerFigure[] = [];
  const contenders: Contender[] = [];
  const installed = await installPeers(peers);
  const starters: [string, () => Promise<Contender>][] = [
    ["htmcp, mode none", () => htmcp(dir, "none")],
    ["htmcp, mode bwrap", () => htmcp(dir, "bwrap")],
    ["mcp-server-commands", () => mcpServerCommands(peers, work)],
    ["codex-shell-tool-mcp", () => codexShell(peers, work)],
  ];
  for (const [name, start] of starters) {
    if (installed !== null && !name.startsWith("htmcp")) {
      figures.push({ name, skipped: installed });
      continue;
    }
    try {
      const contender = await start();
      for (let i = 0; i < 5; i++) await contender.call(); // warm-up, and proof it runs
      contenders.push(contender);
    } catch (error) {
      figures.push({ name, skipped: error instanceof Error ? error.message : String(error) });
    }
  }
  try {
    const samples = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
    const floor: number[] = [];
    for (let round = 0; round < rounds; round++) {
      floor.push(...await bareSpawn("/usr/bin/true", perRound));
      for (const contender of contenders) {
        const into = samples.get(contender.name)!;
        for (let i = 0; i < perRound; i++) {
          const t0 = performance.now();
          await contender.call();
          into.push(performance.now() - t0);
          if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
        }
      }
    }
    return [
      { name: "floor: bare Deno.Command spawn of /usr/bin/true", p50Ms: p50(floor) },
      ...contenders.map((c) => ({ name: c.name, p50Ms: p50(samples.get(c.name)!) })),
      ...figures,
    ];
  } finally {
    for (const contender of contenders) await contender.client.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const rounds = Number(Deno.args[0] ?? 10);
  const perRound = Number(Deno.args[1] ?? 20);
  const gapMs = Number(Deno.args[2] ?? 0);
  const figures = await measurePeers(rounds, perRound, gapMs);
  const pace = gapMs > 0 ? `${gapMs} ms apart` : "back to back";
  console.log(
    `round trip of a do-nothing command over stdio, raw JSON-RPC, calls ${pace}, p50 of ${
      rounds * perRound
    }:`,
  );
  for (const figure of figures) {
    console.log(
      "p50Ms" in figure
        ? `  ${figure.p50Ms.toFixed(2).padStart(7)} ms  ${figure.name}`
        : `  skipped     ${figure.name}: ${figure.skipped}`,
    );
  }
}
