/**
 * `deno task bench --soak [--minutes N] [--clients N] [--sandbox bwrap|none]`:
 * the real HTTP server under mixed hostile load for N minutes (default 30).
 *
 * The server is `htmcp serve --http 127.0.0.1:0` with OAuth, started directly
 * under its generated permission flags (no launcher in between, so the pid
 * this process holds is the process that writes the log, the one SIGHUP must
 * reach and the one whose RSS is measured). For the whole run, everything on
 * loopback and bounded in count and time:
 *
 * - authorized clients (the real SDK client, each through the real OAuth
 *   flow with PIN approval) call `run_command` back to back: echo, ls, a
 *   command that runs into the policy's timeout, one that prints 1 MiB;
 * - a connection flood: waves of idle TCP connections held, then released;
 * - an unauthenticated flood at a bounded rate: forged bearer tokens and a
 *   foreign Origin;
 * - rotations: the log renamed, then SIGHUP to the server.
 *
 * At the end the server is stopped with SIGTERM, `htmcp audit verify` runs on
 * the rotated series, and the report says how many acknowledged calls have
 * no attempt record (must be 0). Exits 1 when a record is lost, the series
 * does not verify, or the server did not survive to the end.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { planLaunch } from "../scripts/launch.ts";
import { LAUNCH, readServingUrl } from "../scripts/conformance.ts";
import { prepareJail } from "../scripts/_jail.ts";
import { connectWithOAuth, type OAuthConnection } from "../tests/transport/http/_oauth.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const FLOOD_CLIENT = fileURLToPath(new URL("../tests/e2e/_flood_client.ts", import.meta.url));
const PIN = "soak-pin-7302";
const MIB = 1024 * 1024;
/** The policy's timeout: the sleeping command runs into it on every call. */
const TIMEOUT_MS = 1500;
/**
 * Idle connections per flood wave; every third wave goes 50 past the
 * server's connection limit (as it prints it), so the refusal beyond the
 * limit is exercised too while the authorized clients go on.
 */
const FLOOD_WAVE = 200;
const FLOOD_PAST_LIMIT = 50;
const FLOOD_HOLD_MS = 5000;
const FLOOD_PAUSE_MS = 5000;
/** Unauthenticated requests per second, at most. */
const UNAUTH_RATE = 40;

/** Options of {@linkcode runSoak}. */
export interface SoakOptions {
  readonly minutes: number;
  readonly clients: number;
  readonly sandbox: "bwrap" | "none";
}

/** What one soak run measured. */
export interface SoakReport {
  readonly durationS: number;
  readonly callsServed: number;
  readonly resultCodes: Readonly<Record<string, number>>;
  readonly clientErrors: number;
  readonly unauthStatuses: Readonly<Record<string, number>>;
  readonly floodWaves: number;
  readonly floodAsked: number;
  readonly floodOpened: number;
  readonly floodFailed: number;
  readonly floodClosedByServer: number;
  readonly rotations: number;
  readonly auditRefusals: Readonly<Record<string, number>>;
  readonly rssStartMiB: number;
  readonly rssHighWaterMiB: number;
  readonly recordsLost: number;
  readonly outcomesLost: number;
  readonly serverSurvived: boolean;
  readonly serverExit: number;
  readonly verifyCode: number;
  readonly verifyOutput: string;
  readonly auditFiles: number;
  readonly auditBytes: number;
  /** The server's own startup lines: the sandbox in force and its connection limit. */
  readonly startup: readonly string[];
  /** False when the sandbox line does not name the mode asked for. */
  readonly sandboxAsAsked: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function bump(map: Record<string, number>, key: string, by = 1): void {
  map[key] = (map[key] ?? 0) + by;
}

/** Parses `--minutes N`, `--clients N`, `--sandbox MODE`. */
export function parseSoakArgs(args: readonly string[]): SoakOptions {
  const value = (flag: string) => {
    const at = args.indexOf(flag);
    return at < 0 ? undefined : args[at + 1];
  };
  const minutes = Number(value("--minutes") ?? 30);
  const clients = Number(value("--clients") ?? 4);
  const sandbox = value("--sandbox") ?? "bwrap";
  if (!(minutes > 0 && minutes <= 24 * 60)) throw new Error("--minutes must be from 0 to 1440");
  if (!(Number.isInteger(clients) && clients >= 1 && clients <= 32)) {
    throw new Error("--clients must be a whole number from 1 to 32");
  }
  if (sandbox !== "bwrap" && sandbox !== "none") throw new Error("--sandbox is bwrap or none");
  return { minutes, clients, sandbox };
}

async function writePolicy(dir: string, sandbox: "bwrap" | "none"): Promise<string> {
  const jail = join(dir, "jail");
  await Deno.mkdir(jail);
  // 1 MiB of printable lines: the large-output call prints all of it.
  await Deno.writeTextFile(
    join(jail, "big.txt"),
    "soak output line 0123456789abcdef\n".repeat(MIB / 34 + 1),
  );
  // Commands run as the jail's owner, never root; bwrap must reach it.
  await prepareJail(jail);
  const path = join(dir, "policy.toml");
  await Deno.writeTextFile(
    path,
    [
      `jail_root = "jail"`,
      `audit_log = "logs/audit.jsonl"`,
      `state_dir = "state"`,
      `[allowlist]`,
      `commands = ["echo", "ls", "sleep", "head"]`,
      `[limits]`,
      `timeout_ms = ${TIMEOUT_MS}`,
      `max_output_bytes = ${2 * MIB}`,
      `max_concurrent = 64`,
      `[sandbox]`,
      `mode = "${sandbox}"`,
      ...(sandbox === "none" ? ["accept_path_check_only = true"] : []),
      `[http]`,
      `max_concurrent_per_client = 2`,
      "",
    ].join("\n"),
  );
  await Deno.mkdir(join(dir, "logs"), { mode: 0o700 });
  return path;
}

interface Server {
  readonly child: Deno.ChildProcess;
  readonly pid: number;
  url: string;
  readonly policy: string;
  exited: boolean;
  stderr(): string;
}

async function startServer(dir: string, policy: string): Promise<Server> {
  const plan = await planLaunch(["serve", "--policy", policy, "--http", "127.0.0.1:0"], REPO);
  if (!plan.ok) throw new Error(plan.message);
  const denoDir = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME") ?? "/root"}/.cache/deno`;
  const child = new Deno.Command(Deno.execPath(), {
    args: [...plan.argv],
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: dir,
      DENO_DIR: denoDir,
      HTMCP_OAUTH_ADMIN_PIN: PIN,
    },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const started = readServingUrl(child, 60_000);
  const server: Server = {
    child,
    pid: child.pid,
    url: "",
    policy,
    exited: false,
    stderr: () => "",
  };
  child.status.then(() => server.exited = true);
  const { url, stderr } = await started;
  server.stderr = stderr;
  server.url = url;
  return server;
}

/**
 * True while `pid` is still the server this run started: its status has not
 * resolved (so the pid was not reused) and its command line names our policy.
 */
async function stillOurs(server: Server): Promise<boolean> {
  if (server.exited) return false;
  try {
    const cmdline = await Deno.readTextFile(`/proc/${server.pid}/cmdline`);
    return cmdline.split("\0").includes(server.policy);
  } catch {
    return false;
  }
}

/** The connection limit the server printed at startup (0 when it printed none). */
function connectionLimit(stderr: string): number {
  return Number(/at most (\d+) HTTP connections/.exec(stderr)?.[1] ?? 0);
}

async function procStatusKiB(pid: number, field: "VmRSS" | "VmHWM"): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
}

/** One authorized call, chosen by `i`; returns the command and the result code. */
async function oneCall(client: Client, lane: number, i: number): Promise<[string, string]> {
  const kind = i % 8;
  // echo carries a unique marker; the others repeat, and are matched by count.
  const command = kind === 5
    ? "sleep 30"
    : kind === 7
    ? `head -c ${MIB} big.txt`
    : kind === 2 || kind === 6
    ? "ls -la"
    : `echo soak-${lane}-${i}`;
  const result = await client.callTool(
    { name: "run_command", arguments: { command } },
    undefined,
    { timeout: 60_000 },
  );
  const code = (result.structuredContent as { code?: string } | undefined)?.code ?? "NO_CODE";
  return [command, code];
}

interface Tally {
  served: number;
  clientErrors: number;
  codes: Record<string, number>;
  acknowledged: Map<string, number>;
  unauth: Record<string, number>;
  floodWaves: number;
  floodAsked: number;
  floodOpened: number;
  floodFailed: number;
  floodClosed: number;
  rotations: number;
  rssMaxKiB: number;
}

async function authorizedLane(
  client: Client,
  lane: number,
  until: number,
  tally: Tally,
): Promise<void> {
  // Bounded: ends at the deadline, or after 200,000 calls.
  for (let i = 0; Date.now() < until && i < 200_000; i++) {
    try {
      const [command, code] = await oneCall(client, lane, i);
      tally.served++;
      bump(tally.codes, code);
      tally.acknowledged.set(command, (tally.acknowledged.get(command) ?? 0) + 1);
    } catch {
      tally.clientErrors++;
      await sleep(200);
    }
  }
}

async function connectionFlood(
  port: number,
  limit: number,
  until: number,
  tally: Tally,
): Promise<void> {
  while (Date.now() + FLOOD_HOLD_MS < until) {
    const count = tally.floodWaves % 3 === 2 && limit > 0 ? limit + FLOOD_PAST_LIMIT : FLOOD_WAVE;
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--allow-net=127.0.0.1",
        FLOOD_CLIENT,
        String(port),
        String(count),
        String(FLOOD_HOLD_MS),
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    const line = JSON.parse(new TextDecoder().decode(out.stdout).trim() || "{}") as {
      opened?: number;
      failed?: number;
      closedByServer?: number;
    };
    tally.floodWaves++;
    tally.floodAsked += count;
    tally.floodOpened += line.opened ?? 0;
    tally.floodFailed += line.failed ?? 0;
    tally.floodClosed += line.closedByServer ?? 0;
    await sleep(FLOOD_PAUSE_MS);
  }
}

async function unauthenticatedFlood(url: string, until: number, tally: Tally): Promise<void> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  for (let i = 0; Date.now() < until; i++) {
    const started = Date.now();
    const forged = i % 2 === 0;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    if (forged) headers.authorization = `Bearer forged-${i}-${crypto.randomUUID()}`;
    else headers.origin = "http://evil.example";
    try {
      const response = await fetch(url, { method: "POST", headers, body });
      await response.body?.cancel();
      bump(tally.unauth, `${forged ? "forged token" : "foreign Origin"} -> ${response.status}`);
    } catch {
      bump(tally.unauth, `${forged ? "forged token" : "foreign Origin"} -> network error`);
    }
    await sleep(Math.max(0, 1000 / UNAUTH_RATE - (Date.now() - started)));
  }
}

async function rotations(
  server: Server,
  log: string,
  intervalMs: number,
  until: number,
  tally: Tally,
): Promise<void> {
  while (Date.now() + intervalMs < until) {
    await sleep(intervalMs);
    // Signal only the process this run started, and only while it is still it.
    if (!await stillOurs(server)) return;
    await Deno.rename(log, `${log}.${tally.rotations + 1}`);
    Deno.kill(server.pid, "SIGHUP");
    tally.rotations++;
  }
}

async function rssSampler(server: Server, until: number, tally: Tally): Promise<void> {
  while (Date.now() < until && !server.exited) {
    try {
      tally.rssMaxKiB = Math.max(tally.rssMaxKiB, await procStatusKiB(server.pid, "VmRSS"));
    } catch {
      return;
    }
    await sleep(1000);
  }
}

/** Attempt records lost: per command text, acknowledged calls beyond its attempt records. */
export function countLost(
  records: readonly Record<string, unknown>[],
  acknowledged: ReadonlyMap<string, number>,
): { recordsLost: number; outcomesLost: number } {
  const attempts = new Map<string, number>();
  const allowed = new Map<string, string[]>();
  const outcomes = new Set<string>();
  for (const record of records) {
    if (record.kind === "attempt" && typeof record.command_raw === "string") {
      attempts.set(record.command_raw, (attempts.get(record.command_raw) ?? 0) + 1);
      if (record.verdict === "allow") {
        const ids = allowed.get(record.command_raw) ?? [];
        ids.push(String(record.call_id));
        allowed.set(record.command_raw, ids);
      }
    } else if (record.kind === "outcome") outcomes.add(String(record.call_id));
  }
  let recordsLost = 0;
  let outcomesLost = 0;
  for (const [command, count] of acknowledged) {
    recordsLost += Math.max(0, count - (attempts.get(command) ?? 0));
    const ids = allowed.get(command) ?? [];
    outcomesLost += ids.filter((id) => !outcomes.has(id)).length;
  }
  return { recordsLost, outcomesLost };
}

/** Refusal records of the log by reason, aggregates expanded to their counts. */
function refusalsInLog(records: readonly Record<string, unknown>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const record of records) {
    const kind = String(record.kind);
    const event = typeof record.event === "string" ? record.event : kind;
    if (record.kind === "attempt" && record.verdict !== "allow") {
      bump(out, `attempt refused ${String(record.code)}`);
    } else if (event === "refusals_aggregated") {
      bump(out, `${String(record.refused_event)} (aggregated repeats)`, Number(record.count ?? 0));
    } else if (event === "refusals_suppressed") {
      bump(out, "refusals_suppressed (counted only)", Number(record.count ?? 0));
    } else if (
      ["bearer_invalid", "http_forbidden", "session_limit", "http_rejected"].includes(event)
    ) {
      bump(out, `${event} (written)`);
    }
  }
  return out;
}

/** Runs the soak; prints progress to stderr and returns the report. */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-soak-" }));
  await Deno.chmod(dir, 0o755); // the sandbox user must reach the jail below it
  const log = join(dir, "logs", "audit.jsonl");
  const tally: Tally = {
    served: 0,
    clientErrors: 0,
    codes: {},
    acknowledged: new Map(),
    unauth: {},
    floodWaves: 0,
    floodAsked: 0,
    floodOpened: 0,
    floodFailed: 0,
    floodClosed: 0,
    rotations: 0,
    rssMaxKiB: 0,
  };
  try {
    const policy = await writePolicy(dir, options.sandbox);
    const server = await startServer(dir, policy);
    const connections: OAuthConnection[] = [];
    let survived = false;
    let started = 0;
    let rssStart = NaN;
    let hwm = NaN;
    try {
      const mcpUrl = new URL(server.url);
      for (let i = 0; i < options.clients; i++) {
        connections.push(await connectWithOAuth(mcpUrl, PIN));
      }
      rssStart = (await procStatusKiB(server.pid, "VmRSS")) / 1024;
      started = Date.now();
      const until = started + options.minutes * 60_000;
      // About every 30 s; a short run still rotates at least three times.
      const rotateEvery = Math.min(30_000, (options.minutes * 60_000) / 4);
      console.error(
        `soak: ${options.minutes} min, ${options.clients} clients, sandbox ${options.sandbox}, ` +
          `server pid ${server.pid} at ${server.url}`,
      );
      await Promise.all([
        ...connections.map((c, lane) => authorizedLane(c.client, lane, until, tally)),
        connectionFlood(Number(mcpUrl.port), connectionLimit(server.stderr()), until, tally),
        unauthenticatedFlood(server.url, until, tally),
        rotations(server, log, rotateEvery, until, tally),
        rssSampler(server, until, tally),
      ]);
      survived = await stillOurs(server);
      if (survived) hwm = (await procStatusKiB(server.pid, "VmHWM")) / 1024;
    } finally {
      for (const connection of connections) await connection.close().catch(() => {});
      if (await stillOurs(server)) server.child.kill("SIGTERM");
    }
    const status = await server.child.status;
    const durationS = (Date.now() - started) / 1000;

    const series = [
      ...Array.from({ length: tally.rotations }, (_, n) => `${log}.${n + 1}`),
      log,
    ];
    const verified = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", LAUNCH, "audit", "verify", ...series],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const verifyOutput = (new TextDecoder().decode(verified.stdout) +
      new TextDecoder().decode(verified.stderr)).trim();
    const records: Record<string, unknown>[] = [];
    let auditBytes = 0;
    for (const path of series) {
      const text = await Deno.readTextFile(path).catch(() => "");
      auditBytes += new TextEncoder().encode(text).length;
      for (const line of text.split("\n")) {
        if (line !== "") records.push(JSON.parse(line) as Record<string, unknown>);
      }
    }
    const lost = countLost(records, tally.acknowledged);
    if (!survived) console.error(`soak: the server did not survive:\n${server.stderr()}`);
    const startup = server.stderr().split("\n").filter((line) =>
      /sandbox:|connection|descriptor|fd limit/i.test(line)
    ).slice(0, 4);
    const sandboxLine = startup.find((line) => line.includes("sandbox:")) ?? "";
    // A soak in bwrap mode must have run in bwrap, not silently in mode none.
    const sandboxAsAsked = options.sandbox === "bwrap"
      ? /bwrap|bubblewrap/i.test(sandboxLine) && !/mode none|advisory/i.test(sandboxLine)
      : sandboxLine !== "";
    return {
      durationS,
      callsServed: tally.served,
      resultCodes: tally.codes,
      clientErrors: tally.clientErrors,
      unauthStatuses: tally.unauth,
      floodWaves: tally.floodWaves,
      floodAsked: tally.floodAsked,
      floodOpened: tally.floodOpened,
      floodFailed: tally.floodFailed,
      floodClosedByServer: tally.floodClosed,
      rotations: tally.rotations,
      auditRefusals: refusalsInLog(records),
      rssStartMiB: rssStart,
      rssHighWaterMiB: Math.max(tally.rssMaxKiB / 1024, Number.isNaN(hwm) ? 0 : hwm),
      recordsLost: lost.recordsLost,
      outcomesLost: lost.outcomesLost,
      serverSurvived: survived,
      serverExit: status.code,
      verifyCode: verified.code,
      verifyOutput,
      auditFiles: series.length,
      auditBytes,
      startup,
      sandboxAsAsked,
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The report as printed lines. */
export function formatSoakReport(report: SoakReport): string[] {
  const map = (m: Readonly<Record<string, number>>) =>
    Object.entries(m).sort().map(([k, v]) => `      ${k}: ${v}`);
  return [
    ...report.startup.map((line) => `server said            ${line.replace(/^htmcp: /, "")}`),
    `duration               ${report.durationS.toFixed(0)} s`,
    `calls served           ${report.callsServed} (${
      (report.callsServed / report.durationS).toFixed(1)
    } calls/s), client errors ${report.clientErrors}`,
    `   result codes:`,
    ...map(report.resultCodes),
    `unauthenticated flood:`,
    ...map(report.unauthStatuses),
    `connection flood       ${report.floodWaves} waves (${FLOOD_WAVE}, ${FLOOD_WAVE}, limit + ${FLOOD_PAST_LIMIT}), ${report.floodAsked} asked: ${report.floodOpened} opened, ${report.floodFailed} failed to open, ${report.floodClosedByServer} closed by the server while held`,
    `rotations              ${report.rotations} (rename + SIGHUP), ${report.auditFiles} files, ${
      (report.auditBytes / MIB).toFixed(2)
    } MiB of log`,
    `refusals in the audit log, by code:`,
    ...map(report.auditRefusals),
    `server RSS             ${report.rssStartMiB.toFixed(1)} MiB at start, high-water mark ${
      report.rssHighWaterMiB.toFixed(1)
    } MiB`,
    `server                 ${
      report.serverSurvived ? "survived to the end" : "DID NOT SURVIVE"
    }, exit ${report.serverExit} after SIGTERM`,
    `records lost           ${report.recordsLost} (acknowledged calls without an attempt record; must be 0), ${report.outcomesLost} allowed calls without an outcome`,
    `audit verify           exit ${report.verifyCode}: ${report.verifyOutput.split("\n").at(-1)}`,
  ];
}

/** `deno task bench --soak ...`: runs, prints, and exits 1 on a lost record or a failed verify. */
export async function soakMain(args: readonly string[]): Promise<void> {
  const options = parseSoakArgs(args);
  const report = await runSoak(options);
  for (const line of formatSoakReport(report)) console.log(line);
  const failed = report.recordsLost > 0 || report.outcomesLost > 0 || report.verifyCode !== 0 ||
    !report.serverSurvived || !report.sandboxAsAsked;
  if (failed) Deno.exit(1);
}

if (import.meta.main) await soakMain(Deno.args);
