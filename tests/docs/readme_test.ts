/**
 * The README is a contract: its result-code table, the version, the install
 * command and client JSON, and the release line must stay true to the code.
 */
import { prepareJail } from "../_helpers/jail.ts";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { RESULT_CODE_MEANINGS, RESULT_CODES } from "../../src/result/codes.ts";
import { VERSION } from "../../src/version.ts";
import { REPO } from "../_helpers/stdio_harness.ts";

Deno.test("the README's result-code table lists every code with its exact meaning, in order", async () => {
  const readme = await Deno.readTextFile(`${REPO}README.md`);
  const start = readme.indexOf("<!-- result-codes:start -->");
  const end = readme.indexOf("<!-- result-codes:end -->");
  assert.ok(start !== -1 && end > start, "README has the result-code markers");
  // deno fmt pads table cells, so cells are trimmed before comparing.
  const rows = readme.slice(start, end).split("\n").filter((line) => line.startsWith("| `"));
  const table = rows.map((row) => {
    const [code, meaning] = row.split("|").slice(1, 3).map((cell) => cell.trim());
    return [code?.replaceAll("`", ""), meaning];
  });
  assert.deepEqual(table, RESULT_CODES.map((code) => [code, RESULT_CODE_MEANINGS[code]]));
});

Deno.test("the CLI version equals deno.json's version", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${REPO}deno.json`));
  assert.equal(VERSION, config.version);
});

/** The text between `<!-- NAME:start -->` and `<!-- NAME:end -->`. */
function section(readme: string, name: string): string {
  const start = readme.indexOf(`<!-- ${name}:start -->`);
  const end = readme.indexOf(`<!-- ${name}:end -->`);
  assert.ok(start !== -1 && end > start, `README has the ${name} markers`);
  return readme.slice(start, end);
}

Deno.test("the README's client JSON runs: deno task install --prefix, then the JSON's command answers the SDK client", async () => {
  const readme = await Deno.readTextFile(`${REPO}README.md`);
  assert.match(
    readme,
    /^deno task install +# writes ~\/\.local\/bin\/htmcp; or: deno task install --prefix DIR$/m,
  );
  const json = /```json\n([\s\S]*?)```/.exec(section(readme, "client-json"))?.[1];
  assert.ok(json !== undefined, "a JSON block between the markers");
  const entry = JSON.parse(json).mcpServers.htmcp as { command: string; args: string[] };
  assert.equal(entry.command, "htmcp");
  assert.deepEqual(entry.args.slice(0, 2), ["serve", "--policy"]);

  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-readme-" }));
  try {
    const prefix = `${dir}/prefix`;
    const denoDir = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME") ?? "/root"}/.cache/deno`;
    const env = {
      PATH: `${prefix}/bin:/usr/local/bin:/usr/bin:/bin`,
      HOME: dir,
      DENO_DIR: denoDir,
    };
    const installed = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "install", "--prefix", prefix],
      cwd: REPO,
      env,
      clearEnv: true,
      stdin: "null",
    }).output();
    assert.equal(installed.code, 0, new TextDecoder().decode(installed.stderr));
    // The JSON's policy path, pointed at a policy of our own.
    await Deno.mkdir(`${dir}/jail`);
    // Commands run in the kernel sandbox as the jail's owner: hand the jail to it.
    await prepareJail(`${dir}/jail`);
    await Deno.writeTextFile(
      `${dir}/policy.toml`,
      `jail_root = "jail"\naudit_log = "log/audit.jsonl"\n[allowlist]\ncommands = ["echo"]\n`,
    );
    await Deno.mkdir(`${dir}/log`);
    const args = entry.args.map((arg) =>
      arg === "/etc/htmcp/policy.toml" ? `${dir}/policy.toml` : arg
    );
    const client = new Client({ name: "readme-test", version: "1" });
    await client.connect(
      new StdioClientTransport({ command: entry.command, args, env, stderr: "pipe" }),
    );
    try {
      assert.equal(client.getServerVersion()?.name, "htmcp");
      const result = await client.callTool({
        name: "run_command",
        arguments: { command: "echo hi" },
      });
      assert.equal((result.structuredContent as { stdout: string }).stdout, "hi\n");
    } finally {
      await client.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the README's release line is true: CI compiles per platform on version tags and publishes SHA256SUMS", async () => {
  const readme = await Deno.readTextFile(`${REPO}README.md`);
  assert.match(
    readme,
    /Release binaries are built by CI on version tags \(`\.github\/workflows\/release\.yml`/,
  );
  const workflow = await Deno.readTextFile(`${REPO}.github/workflows/release.yml`);
  assert.ok(workflow.includes(`on:\n  push:\n    tags: ["v*"]`), "built on version tags");
  assert.match(workflow, /scripts\/compile\.ts --broad --target \$\{\{ matrix\.target \}\}/);
  assert.ok((workflow.match(/target: [a-z0-9_-]+/g) ?? []).length >= 4, "one build per platform");
  assert.match(workflow, /cat \*\.sha256 > SHA256SUMS && sha256sum -c SHA256SUMS/);
});

Deno.test("the README's deno task install and bundle forms name tasks that exist", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${REPO}deno.json`));
  assert.match(config.tasks.install, /scripts\/install\.ts$/);
  assert.match(config.tasks.bundle, /scripts\/bundle\.ts$/);
  const readme = await Deno.readTextFile(`${REPO}README.md`);
  // Run by tests/cli/install_test.ts, byte for byte this form.
  assert.ok(
    readme.includes("`deno run -A dist/htmcp.js serve --policy FILE` (after `deno task bundle`)"),
  );
});
