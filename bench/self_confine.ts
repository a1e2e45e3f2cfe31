/**
 * What self-confinement costs, measured against the same core run under the
 * generated flags: startup (spawn to the first answered line) and a
 * line round trip over stdio. The core is `tests/permissions/fixtures/
 * confined_echo.ts`: the real loader and the real `serveConfined`, with an
 * echo core, so the figures isolate the Worker (module graph loaded twice,
 * grants revoked, one postMessage handshake) from MCP and command costs.
 *
 * `measureSelfConfinement()` is a plain function for the project's bench
 * script; run this file directly to print the figures.
 *
 * @module
 */
import { loadPolicy } from "../src/config/mod.ts";
import { buildPermissionSet, renderDenoFlags } from "../src/permissions/mod.ts";

const FIXTURE = new URL("../tests/permissions/fixtures/confined_echo.ts", import.meta.url).pathname;
const CONFIG = new URL("../deno.json", import.meta.url).pathname;

/** Medians in milliseconds. */
export interface SelfConfineFigures {
  readonly startupMs: { readonly flags: number; readonly selfConfined: number };
  readonly roundTripMs: { readonly flags: number; readonly selfConfined: number };
  readonly runs: number;
  readonly calls: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

async function session(
  denoFlags: readonly string[],
  policyFile: string,
  calls: number,
): Promise<{ startup: number; roundTrips: number[] }> {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...denoFlags, "--config", CONFIG, FIXTURE, policyFile],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const nextLine = async () => {
    while (!buffered.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the core ended early");
      buffered += value;
    }
    const at = buffered.indexOf("\n");
    buffered = buffered.slice(at + 1);
  };
  const encoder = new TextEncoder();
  await writer.write(encoder.encode("first\n"));
  await nextLine();
  const startup = performance.now() - started;
  const roundTrips: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await writer.write(encoder.encode(`call ${i}\n`));
    await nextLine();
    roundTrips.push(performance.now() - t);
  }
  await writer.close();
  await reader.cancel();
  await child.status;
  return { startup, roundTrips };
}

/**
 * Measures both modes, alternating runs so machine noise hits both alike.
 *
 * @param options.policyFile A policy to load (default: a throwaway one).
 * @param options.runs Process starts per mode (default 7).
 * @param options.calls Round trips per start (default 200).
 */
export async function measureSelfConfinement(
  options: { policyFile?: string; runs?: number; calls?: number } = {},
): Promise<SelfConfineFigures> {
  const runs = options.runs ?? 7;
  const calls = options.calls ?? 200;
  const dir = await Deno.makeTempDir({ prefix: "htmcp-bench-confine-" });
  try {
    let policyFile = options.policyFile;
    if (policyFile === undefined) {
      await Deno.mkdir(`${dir}/jail`);
      await Deno.mkdir(`${dir}/log`);
      policyFile = `${dir}/policy.toml`;
      await Deno.writeTextFile(
        policyFile,
        `jail_root = "jail"\naudit_log = "log/audit.jsonl"\n[allowlist]\ncommands = ["true", "ls"]\n[sandbox]\nmode = "none"\naccept_path_check_only = true\n`,
      );
    }
    const loaded = await loadPolicy({ policyFile, env: {} });
    if (!loaded.ok) throw new Error(loaded.message);
    const built = await buildPermissionSet(loaded.policy);
    if (!built.ok) throw new Error(built.reason);
    const flags = renderDenoFlags(built.set);
    const broad = ["--allow-all", "--unstable-worker-options"];
    const startup = { flags: [] as number[], selfConfined: [] as number[] };
    const trips = { flags: [] as number[], selfConfined: [] as number[] };
    for (let i = 0; i < runs; i++) {
      const a = await session(flags, policyFile, calls);
      startup.flags.push(a.startup);
      trips.flags.push(...a.roundTrips);
      const b = await session(broad, policyFile, calls);
      startup.selfConfined.push(b.startup);
      trips.selfConfined.push(...b.roundTrips);
    }
    return {
      startupMs: { flags: median(startup.flags), selfConfined: median(startup.selfConfined) },
      roundTripMs: { flags: median(trips.flags), selfConfined: median(trips.selfConfined) },
      runs,
      calls,
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const figures = await measureSelfConfinement();
  const f = (ms: number) => `${ms.toFixed(2)} ms`;
  console.log(`self-confinement (${figures.runs} starts x ${figures.calls} round trips, medians)`);
  console.log(
    `  startup:    flags ${f(figures.startupMs.flags)}   self-confined ${
      f(figures.startupMs.selfConfined)
    }   (+${f(figures.startupMs.selfConfined - figures.startupMs.flags)})`,
  );
  console.log(
    `  round trip: flags ${f(figures.roundTripMs.flags)}   self-confined ${
      f(figures.roundTripMs.selfConfined)
    }   (+${f(figures.roundTripMs.selfConfined - figures.roundTripMs.flags)})`,
  );
}
