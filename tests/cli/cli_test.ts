/**
 * The `htmcp` command line as an operator runs it: through the launcher that
 * `deno task htmcp` uses, so every verb runs under its generated permissions.
 */
import assert from "node:assert/strict";
import { LAUNCH, policyToml, serverEnv } from "../_helpers/stdio_harness.ts";
import { VERSION } from "../../src/version.ts";
import { prepareJail } from "../_helpers/jail.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function htmcp(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-all", LAUNCH, ...args],
    env: { ...serverEnv("/tmp"), ...env },
    clearEnv: true,
    stdin: "null",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

async function tempPolicy(extra = ""): Promise<{ dir: string; policy: string; jail: string }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-cli-" }));
  const jail = `${dir}/jail`;
  await Deno.mkdir(jail);
  await prepareJail(jail);
  const policy = `${dir}/policy.toml`;
  await Deno.writeTextFile(
    policy,
    policyToml(jail, `${dir}/audit.jsonl`, { allow: ["ls", "touch"], extraToml: extra }),
  );
  return { dir, policy, jail };
}

Deno.test("htmcp version and --help print and exit 0", async () => {
  const version = await htmcp(["version"]);
  assert.equal(version.code, 0);
  assert.equal(version.stdout.trim(), `htmcp ${VERSION}`);
  const help = await htmcp(["--help"]);
  assert.equal(help.code, 0);
  for (
    const verb of ["serve", "explain", "check", "permissions", "systemd", "audit verify", "auth"]
  ) {
    assert.ok(help.stdout.includes(verb), verb);
  }
});

Deno.test("an unknown verb or flag exits 2 with one sentence", async () => {
  const verb = await htmcp(["frobnicate"]);
  assert.equal(verb.code, 2);
  assert.match(verb.stderr, /Unknown command "frobnicate"/);
});

Deno.test("htmcp explain prints the verdict JSON, runs nothing, and exits 0 or 1", async () => {
  const t = await tempPolicy();
  try {
    const allowed = await htmcp(["explain", "--policy", t.policy, "--", "touch", "canary"]);
    assert.equal(allowed.code, 0, allowed.stderr);
    const verdict = JSON.parse(allowed.stdout);
    assert.equal(verdict.code, "OK");
    assert.deepEqual(verdict.argv, ["touch", "canary"]);
    await assert.rejects(Deno.stat(`${t.jail}/canary`));

    const refused = await htmcp(["explain", "--policy", t.policy, "--", "rm", "-rf", "/"]);
    assert.equal(refused.code, 1);
    assert.equal(JSON.parse(refused.stdout).code, "POLICY_DENIED");

    const escaped = await htmcp(["explain", "--policy", t.policy, "--", "ls", "/etc"]);
    assert.equal(JSON.parse(escaped.stdout).code, "PATH_ESCAPE");
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("htmcp explain judges the argv as the shell split it, never re-split", async () => {
  const t = await tempPolicy();
  try {
    // What `htmcp explain -- ls "a b"` hands over: the word "a b" stays one word.
    const spaced = await htmcp(["explain", "--policy", t.policy, "--", "ls", "a b"]);
    assert.deepEqual(JSON.parse(spaced.stdout).argv, ["ls", "a b"]);
    // Shell syntax inside one word is data, as a quoted word would be.
    const piped = await htmcp(["explain", "--policy", t.policy, "--", "ls", "a|b"]);
    assert.equal(piped.code, 0, piped.stdout);
    assert.deepEqual(JSON.parse(piped.stdout).argv, ["ls", "a|b"]);
    // A command word with a blank in it is one (refused) command name, not "ls" plus "-la".
    const glued = await htmcp(["explain", "--policy", t.policy, "--", "ls -la"]);
    assert.equal(glued.code, 1);
    assert.equal(JSON.parse(glued.stdout).code, "POLICY_DENIED");
    assert.match(JSON.parse(glued.stdout).policy_reason, /blank/);
    // No shell sees an argv: "$HOME" is the word "$HOME", as if single-quoted.
    const dollar = await htmcp(["explain", "--policy", t.policy, "--", "ls", "$HOME"]);
    assert.deepEqual(JSON.parse(dollar.stdout).argv, ["ls", "$HOME"]);
    // Characters refused anywhere stay refused in an argv word.
    const broken = await htmcp(["explain", "--policy", t.policy, "--", "ls", "a\nb"]);
    assert.equal(JSON.parse(broken.stdout).code, "POLICY_DENIED");
    // --text judges command text the way run_command receives it from a model.
    const text = await htmcp(["explain", "--policy", t.policy, "--text", 'ls "a b" c']);
    assert.deepEqual(JSON.parse(text.stdout).argv, ["ls", "a b", "c"]);
    const both = await htmcp(["explain", "--policy", t.policy, "--text", "ls", "--", "ls"]);
    assert.equal(both.code, 2);
    await assert.rejects(Deno.stat(`${t.jail}/a b`));
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("htmcp serve refuses to start on a bad policy: exit 1, one sentence naming the key", async () => {
  const t = await tempPolicy("[limits]\ntimeout_ms = -5\n");
  try {
    const run = await htmcp(["serve", "--policy", t.policy]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /limits\.timeout_ms/);
    assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
    assert.equal(run.stdout, "", "nothing on the protocol stream");
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("htmcp serve with a missing policy file exits 1 naming it", async () => {
  const run = await htmcp(["serve", "--policy", "/nonexistent/policy.toml"]);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /\/nonexistent\/policy\.toml/);
});

Deno.test("serve is the default verb and states the permission layer on stderr", async () => {
  const t = await tempPolicy();
  try {
    // stdin is /dev/null: the server starts, sees EOF, and stops cleanly.
    const run = await htmcp(["--policy", t.policy]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /permission layer: flags/);
    assert.match(
      run.stderr,
      /sandbox: Commands run in the kernel sandbox \(\[sandbox\] mode = "bwrap"\)/,
    );
    assert.match(run.stderr, /stopped \(stdin closed\)/);
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("htmcp audit verify reports an intact log and a tampered one", async () => {
  const t = await tempPolicy();
  try {
    await htmcp(["--policy", t.policy]); // writes server_start and server_stop
    const log = `${t.dir}/audit.jsonl`;
    const intact = await htmcp(["audit", "verify", log]);
    assert.equal(intact.code, 0, intact.stdout + intact.stderr);
    const text = await Deno.readTextFile(log);
    await Deno.writeTextFile(log, text.replace('"stdio"', '"http"'));
    const broken = await htmcp(["audit", "verify", log]);
    assert.equal(broken.code, 1);
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});
