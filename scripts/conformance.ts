/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`)
 * against `htmcp serve --http` with authentication off on loopback: the
 * scenarios htmcp must pass. It starts the real CLI as a child process (under
 * the generated permission set, through `scripts/launch.ts`), waits for the
 * "serving MCP at" line on stderr, runs each scenario, stops the server with
 * SIGTERM and exits non-zero if any check failed.
 *
 * The suite is not a project dependency (the lock file stays frozen): it runs
 * with `--no-lock --no-config`. Pass `--cached-only` to forbid any download
 * (it then needs a DENO_DIR where the package was fetched once).
 *
 * Usage: deno run -A scripts/conformance.ts [--cached-only] [SCENARIO...]
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { prepareJail } from "./_jail.ts";

/** The suite version the issue pins. */
export const CONFORMANCE_PACKAGE = "npm:@modelcontextprotocol/conformance@0.1.16";

/** `scripts/launch.ts`: runs `src/main.ts` under the generated permission set. */
export const LAUNCH = fileURLToPath(new URL("./launch.ts", import.meta.url));

/** The scenarios htmcp must pass. */
export const SCENARIOS: readonly string[] = Object.freeze([
  "server-initialize",
  "ping",
  "tools-list",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
]);

const DENO = Deno.execPath();

/** One scenario's outcome as the suite printed it. */
export interface ScenarioResult {
  readonly scenario: string;
  readonly passed: number;
  readonly failed: number;
  readonly warnings: number;
  readonly ok: boolean;
  readonly output: string;
}

/** Writes a throwaway policy into `dir`: loopback only, auth off, an empty jail. */
export async function writeLoopbackPolicy(dir: string): Promise<string> {
  await Deno.mkdir(join(dir, "jail"));
  await prepareJail(join(dir, "jail"));
  const path = join(dir, "policy.toml");
  await Deno.writeTextFile(
    path,
    `jail_root = "jail"
audit_log = "audit.jsonl"
state_dir = "state"

[allowlist]
commands = ["echo", "true", "sleep"]

[auth]
mode = "none"
`,
  );
  return path;
}

/** A CLI server child process. */
export interface CliServer {
  /** The MCP URL the server printed. */
  readonly url: string;
  readonly child: Deno.ChildProcess;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
}

/**
 * Starts `htmcp serve --policy POLICY --http 127.0.0.1:0` through
 * `scripts/launch.ts` (the generated permission set) and resolves once it
 * prints the MCP URL.
 */
export async function startCliServer(
  policy: string,
  env: Readonly<Record<string, string>> = {},
): Promise<CliServer> {
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", LAUNCH, "serve", "--policy", policy, "--http", "127.0.0.1:0"],
    env: { ...env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const { url, stderr } = await readServingUrl(child);
  return { url, child, stderr };
}

/**
 * Reads a starting server's stderr until it prints the MCP URL it serves,
 * then keeps draining it (so the child never blocks on a full pipe).
 *
 * @param child A server spawned with `stderr: "piped"`.
 * @param timeoutMs How long startup may take.
 * @returns The URL (the base URL's, which a balancer may own), the address the
 *   server itself listens on, and everything it wrote to stderr so far (live).
 */
export async function readServingUrl(
  child: Deno.ChildProcess,
  timeoutMs = 30_000,
): Promise<{ url: string; listening: string; stderr: () => string }> {
  let text = "";
  const decoder = new TextDecoder();
  const reader = child.stderr.getReader();
  const found = await new Promise<{ url: string; listening: string }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`The server did not start:\n${text}`)),
      timeoutMs,
    );
    (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        const match = /serving MCP at (http:\/\/\S+\/mcp) \(listening on (http:\/\/[^)\s]+)\)/
          .exec(text);
        if (match !== null) {
          clearTimeout(timer);
          resolve({ url: match[1] as string, listening: match[2] as string });
          return;
        }
      }
      clearTimeout(timer);
      reject(new Error(`The server exited before serving:\n${text}`));
    })().catch(reject);
  });
  (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  })().catch(() => {});
  return { ...found, stderr: () => text };
}

/** Runs one scenario of the suite against `url`. */
export async function runScenario(
  url: string,
  scenario: string,
  cachedOnly: boolean,
): Promise<ScenarioResult> {
  const args = ["run", "-A", "--no-lock", "--no-config"];
  if (cachedOnly) args.push("--cached-only");
  args.push(CONFORMANCE_PACKAGE, "server", "--url", url, "--scenario", scenario);
  const out = await new Deno.Command(DENO, {
    args,
    stdin: "null",
    cwd: Deno.cwd(),
    env: { NO_COLOR: "1" },
  }).output();
  const output = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  // "Passed: 2/2, 0 failed, 0 warnings"
  const match = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(output);
  const passed = Number(match?.[1] ?? 0);
  const failed = match === null ? 1 : Number(match[3]);
  const warnings = Number(match?.[4] ?? 0);
  return {
    scenario,
    passed,
    failed,
    warnings,
    ok: out.success && match !== null && failed === 0 && passed > 0,
    output,
  };
}

/**
 * Starts the server, runs `scenarios`, stops the server.
 *
 * @returns One result per scenario.
 */
export async function runConformance(
  scenarios: readonly string[] = SCENARIOS,
  cachedOnly = false,
): Promise<ScenarioResult[]> {
  return await withLoopbackServer("htmcp-conformance-", async (url) => {
    const results: ScenarioResult[] = [];
    for (const scenario of scenarios) results.push(await runScenario(url, scenario, cachedOnly));
    return results;
  });
}

/**
 * Runs `fn` against `htmcp serve --http` with auth off on loopback, in a
 * temp folder of its own, and stops that server (the child it started).
 */
export async function withLoopbackServer<T>(
  prefix: string,
  fn: (url: string) => Promise<T>,
): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix });
  let server: CliServer | null = null;
  try {
    server = await startCliServer(await writeLoopbackPolicy(dir));
    return await fn(server.url);
  } finally {
    if (server !== null) {
      server.child.kill("SIGTERM");
      await server.child.status;
    }
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const cachedOnly = Deno.args.includes("--cached-only");
  const names = Deno.args.filter((arg) => arg !== "--cached-only");
  const results = await runConformance(names.length > 0 ? names : SCENARIOS, cachedOnly);
  for (const result of results) {
    const verdict = result.ok ? "ok" : "FAILED";
    console.log(
      `${
        verdict.padEnd(6)
      } ${result.scenario}: ${result.passed} passed, ${result.failed} failed, ${result.warnings} warnings`,
    );
    if (!result.ok) console.log(result.output);
  }
  const failed = results.filter((r) => !r.ok).length;
  console.log(`${results.length - failed} passed, ${failed} failed`);
  Deno.exit(failed === 0 ? 0 : 1);
}
