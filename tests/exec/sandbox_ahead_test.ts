/**
 * bwrap mode's sandbox made ahead of its call: it runs nothing before the
 * call's request arrives (at the go), takes from the request only what an
 * inner helper may be given, and is never reused: each call gets a sandbox
 * of its own. (Its backstop starting only at the go: serving_helper_test.ts.)
 */
import assert from "node:assert/strict";
import {
  buildCallLaunch,
  type CallLaunch,
  DEFAULT_LAUNCHER_TOOLS,
  type LaunchPlan,
} from "../../src/exec/mod.ts";
import { encodeSandboxRequest } from "../../src/exec/serving_helper.ts";
import { detectHostLayout } from "../../src/sandbox/mod.ts";
import { exists } from "../_helpers/exists.ts";
import { makePolicy } from "../_helpers/policy.ts";
import { assertSandboxMode, prepareJail } from "../_helpers/jail.ts";
import { makeJail, setup, spawnLaunch } from "./_fixtures.ts";

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

// The suite has no sys permission for Deno.uid(): ask id(1).
const ROOT = decode((await new Deno.Command("id", { args: ["-u"] }).output()).stdout).trim() ===
  "0";

interface Case {
  readonly jail: string;
  readonly plan: LaunchPlan;
  /** A bwrap-mode call that would create `JAIL/canary`. */
  readonly touch: CallLaunch;
}

async function withJail(body: (c: Case) => Promise<void>) {
  const jail = await makeJail();
  const plan: LaunchPlan = {
    mode: "bwrap",
    privilege: ROOT ? "root" : "user",
    serverIsRoot: ROOT,
    runAs: ROOT ? { uid: 65534, gid: 65534 } : null,
    tools: DEFAULT_LAUNCHER_TOOLS,
    backstopMs: 10_000,
    limits: makePolicy({ jailRoot: jail }).limits,
    layout: detectHostLayout(),
  };
  const touch = buildCallLaunch(plan, makePolicy({ jailRoot: jail }), {
    path: "/usr/bin/touch",
    args: [`${jail}/canary`],
    cwd: jail,
  });
  try {
    await body({ jail, plan, touch });
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
}

Deno.test("a sandbox whose stdin ends before any request runs nothing and ends with 125", async () => {
  await withJail(async ({ jail, touch }) => {
    // The sandbox is set up whole, then its stdin closes: the server let it go.
    const out = await spawnLaunch({ ...touch, sandbox: null });
    assert.equal(out.code, 125);
    assert.equal(out.stderr, "");
    assert.equal(await exists(`${jail}/canary`), false);
  });
});

Deno.test("a sandbox request with a malformed head is refused with 125, nothing run", async () => {
  await withJail(async ({ jail, touch }) => {
    const good = encodeSandboxRequest(
      touch.sandbox!.cwd,
      touch.sandbox!.env,
      touch.sandbox!.args,
      touch.sandbox!.stdin,
    );
    const body = good.subarray(9);
    const len = body.byteLength.toString(16).padStart(8, "0");
    for (
      const head of ["x" + len, "p-" + len.slice(1), "p " + len.slice(1), "p00000000", "pzzzzzzzz"]
    ) {
      const out = await spawnLaunch(touch, {
        stdin: new Uint8Array([...new TextEncoder().encode(head), ...body]),
      });
      assert.equal(out.code, 125, head);
      assert.match(out.stderr, /^htmcp-spawn: request header: /, head);
      assert.equal(await exists(`${jail}/canary`), false, head);
    }
  });
});

Deno.test("a sandbox request with options only the outer helper may have is refused with 125, nothing run", async () => {
  await withJail(async ({ jail, touch: base }) => {
    for (
      const options of [
        ["--pidns=root"],
        ["--setuid=0", "--setgid=0"],
        ["--init-exec"],
        ["--backstop-ms=1"],
        ["--request"],
        ["--go"],
      ]
    ) {
      const sandbox = {
        ...base.sandbox!,
        args: ["--inner", ...options, "--", "/usr/bin/touch", `${jail}/canary`],
      };
      const out = await spawnLaunch({ ...base, sandbox });
      assert.equal(out.code, 125, options.join(" "));
      assert.match(out.stderr, /^htmcp-spawn: (request \(only what an inner helper|--request)/);
      assert.equal(await exists(`${jail}/canary`), false, options.join(" "));
    }
    // The same request without them runs: the refusal is of the options alone.
    assert.equal((await spawnLaunch(base)).code, 0);
    assert.equal(await exists(`${jail}/canary`), true);
  });
});

Deno.test("a sandbox request runs its command in its own working folder with exactly its environment", async () => {
  await withJail(async ({ jail, plan }) => {
    await Deno.mkdir(`${jail}/sub`);
    await Deno.chmod(`${jail}/sub`, 0o777);
    const launch = buildCallLaunch(plan, makePolicy({ jailRoot: jail }), {
      path: "/bin/sh",
      args: ["-c", "pwd; env | sort; echo $$"],
      cwd: `${jail}/sub`,
      env: { PATH: "/usr/bin:/bin", ONLY: "this" },
    });
    const out = await spawnLaunch(launch);
    assert.equal(out.code, 0, out.stderr);
    // sh sets PWD itself; nothing of bwrap's (LC_ALL) reaches the command.
    assert.deepEqual(out.stdout.trim().split("\n"), [
      `${jail}/sub`,
      "ONLY=this",
      "PATH=/usr/bin:/bin",
      `PWD=${jail}/sub`,
      "2",
    ]);
  });
});

Deno.test("[bwrap] each call gets a sandbox of its own: nothing one call leaves in /tmp or /dev/shm reaches the next", async () => {
  const s = await setup({ mode: "bwrap" });
  try {
    await assertSandboxMode(s.executor, "bwrap");
    const first = await s.run("sh", ["-c", "echo a > /tmp/left; echo b > /dev/shm/left; echo $$"]);
    assert.equal(first.code, "OK", first.stderr);
    assert.equal(first.stdout, "2\n");
    for (let i = 0; i < 3; i++) {
      const next = await s.run("sh", [
        "-c",
        "ls -A /dev/shm; test -e /tmp/left || echo no-tmp-left; echo $$",
      ]);
      assert.equal(next.code, "OK", next.stderr);
      assert.equal(next.stdout, "no-tmp-left\n2\n");
    }
  } finally {
    await s.close();
  }
});

Deno.test("[bwrap] a jail folder moved away while a sandbox waits: the next call runs in the new folder, never the old", async () => {
  const s = await setup({ mode: "bwrap" });
  const old = `${s.jail}.old`;
  try {
    await assertSandboxMode(s.executor, "bwrap");
    assert.equal((await s.run("true", [])).code, "OK");
    // The sandbox for the next call is made with this folder bound.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await Deno.rename(s.jail, old);
    await Deno.mkdir(s.jail);
    await prepareJail(s.jail);
    const next = await s.run("sh", ["-c", "touch canary; echo $$"]);
    assert.equal(next.code, "OK", JSON.stringify(next));
    assert.equal(next.stdout, "2\n");
    assert.equal(await exists(`${s.jail}/canary`), true, "the call ran in the new folder");
    assert.equal(await exists(`${old}/canary`), false, "and nothing in the old one");
  } finally {
    await s.close();
    await Deno.remove(old, { recursive: true }).catch(() => {});
  }
});
