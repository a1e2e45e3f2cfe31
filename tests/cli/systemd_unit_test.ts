/**
 * `htmcp systemd` prints a unit that runs: systemd-analyze accepts it, and
 * its `ExecStart=` line, started as systemd would start it (the same argv,
 * only the unit's environment plus its EnvironmentFile, cwd `/`, stdin
 * closed), serves HTTP with the PIN from that file, which the real SDK
 * client's OAuth flow then uses to reach run_command.
 */
import { prepareJail } from "../_helpers/jail.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { LAUNCH, serverEnv } from "../_helpers/stdio_harness.ts";
import { connectWithOAuth } from "../transport/http/_oauth.ts";

const PIN = "spruce-8-lantern-27";
/** The PATH systemd gives a service. */
const SYSTEMD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

async function htmcp(args: string[], cwd: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-all", LAUNCH, ...args],
    env: serverEnv(cwd),
    clearEnv: true,
    cwd,
    stdin: "null",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

/** systemd's ExecStart= splitting: blanks separate words; "..." quotes; \\ escapes; $$ and %% are literal. */
function splitExecStart(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quoted) {
      if (c === "\\") word += line[++i] ?? "";
      else if (c === '"') quoted = false;
      else word += c;
    } else if (c === " ") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else if (c === '"') {
      quoted = true;
      inWord = true;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words.map((w) => w.replaceAll("$$", "$").replaceAll("%%", "%"));
}

function settings(unit: string, key: string): string[] {
  return unit.split("\n").filter((line) => line.startsWith(`${key}=`)).map((line) =>
    line.slice(key.length + 1)
  );
}

async function writePolicy(dir: string, auth: "oauth" | "none"): Promise<string> {
  await Deno.mkdir(join(dir, "jail"));
  await Deno.mkdir(join(dir, "log"));
  await Deno.writeTextFile(join(dir, "jail", "status.txt"), "served by the unit\n");
  // Commands run in the kernel sandbox as the jail's owner: hand the jail to it.
  await prepareJail(join(dir, "jail"));
  const policy = join(dir, "policy.toml");
  await Deno.writeTextFile(
    policy,
    `jail_root = "jail"
audit_log = "log/audit.jsonl"
state_dir = "state"

[allowlist]
commands = ["cat"]

[auth]
mode = "${auth}"
`,
  );
  return policy;
}

Deno.test("htmcp systemd refuses a stdio unit and says why", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-unit-" }));
  try {
    const policy = await writePolicy(dir, "none");
    const refused = await htmcp(["systemd", "--policy", policy, "--transport", "stdio"], dir);
    assert.equal(refused.code, 2);
    assert.equal(refused.stdout, "");
    assert.match(refused.stderr, /cannot serve stdio/);
    assert.match(refused.stderr, /stdin closed/);
    const viaPermissions = await htmcp(
      ["permissions", "--policy", policy, "--format", "systemd", "--transport", "stdio"],
      dir,
    );
    assert.equal(viaPermissions.code, 2);
    assert.match(viaPermissions.stderr, /cannot serve stdio/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the printed unit verifies, and its ExecStart started as systemd would serves HTTP with the PIN from its EnvironmentFile", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-unit-" }));
  let child: Deno.ChildProcess | null = null;
  try {
    const policy = await writePolicy(dir, "oauth");
    const envFile = join(dir, "htmcp.env");
    const printed = await htmcp(
      ["systemd", "--policy", policy, "--http", "127.0.0.1:0", "--env-file", envFile],
      dir,
    );
    assert.equal(printed.code, 0, printed.stderr);
    const unit = printed.stdout;
    assert.deepEqual(settings(unit, "User"), ["htmcp"]);
    assert.deepEqual(settings(unit, "Group"), ["htmcp"]);
    assert.deepEqual(settings(unit, "EnvironmentFile"), [envFile]);
    const [execStart] = settings(unit, "ExecStart");
    assert.ok(execStart !== undefined);
    const argv = splitExecStart(execStart);
    assert.deepEqual(argv.slice(-5), ["serve", "--policy", policy, "--http", "127.0.0.1:0"]);
    assert.ok(!argv.includes("--allow-all") && !argv.includes("-A"));
    assert.ok(!unit.includes(PIN));

    const file = join(dir, "htmcp-e2e.service");
    await Deno.writeTextFile(file, unit);
    const verify = await new Deno.Command("systemd-analyze", {
      args: ["verify", "--man=no", file],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const complaints = new TextDecoder().decode(verify.stderr);
    assert.equal(verify.code, 0, complaints);
    assert.equal(complaints.trim(), "", complaints);

    // What systemd does: the PIN file (root-only), the unit's own Environment=
    // lines, its PATH, nothing inherited; cwd "/", stdin closed.
    await Deno.writeTextFile(envFile, `HTMCP_OAUTH_ADMIN_PIN=${PIN}\n`, { mode: 0o600 });
    const env: Record<string, string> = { PATH: SYSTEMD_PATH };
    for (const assignment of settings(unit, "Environment").flatMap(splitExecStart)) {
      const eq = assignment.indexOf("=");
      env[assignment.slice(0, eq)] = assignment.slice(eq + 1);
    }
    for (const line of (await Deno.readTextFile(envFile)).split("\n")) {
      const eq = line.indexOf("=");
      if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
    }
    child = new Deno.Command(argv[0] as string, {
      args: argv.slice(1),
      env,
      clearEnv: true,
      cwd: "/",
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let stderr = "";
    let url: string | null = null;
    const deadline = Date.now() + 30_000;
    while (url === null && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      stderr += value;
      url = /serving MCP at (http:\/\/\S+\/mcp)/.exec(stderr)?.[1] ?? null;
    }
    assert.ok(url !== null, `${JSON.stringify(env)}\n${stderr}`);
    void (async () => {
      for (;;) if ((await reader.read()).done) break;
    })().catch(() => {});

    const connection = await connectWithOAuth(new URL(url), PIN);
    try {
      const result = await connection.client.callTool({
        name: "run_command",
        arguments: { command: "cat status.txt" },
      });
      const body = result.structuredContent as { code: string; stdout: string };
      assert.equal(body.code, "OK", JSON.stringify(body));
      assert.equal(body.stdout, "served by the unit\n");
    } finally {
      await connection.close();
    }
  } finally {
    if (child !== null) {
      child.kill("SIGTERM");
      await child.status;
    }
    await Deno.remove(dir, { recursive: true });
  }
});
