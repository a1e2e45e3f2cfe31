/**
 * First steps on a fresh machine: `deno task install` from a fresh clone puts
 * a working `htmcp` on PATH, which the real SDK client drives over stdio
 * (`initialize`, tools), offline (`--cached-only`) and under the flags the
 * launcher generates from the policy; and the bundle runs as a user would try
 * it first, `deno run -A dist/htmcp.js serve ...`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { REPO } from "../_helpers/stdio_harness.ts";
import { DENO_DIR, driveOverStdio, installHere, run, writePolicy } from "./_install.ts";
import { bundle } from "../../scripts/bundle.ts";
import { exists } from "../_helpers/exists.ts";
import { SERVER_V8_FLAGS } from "../../src/permissions/mod.ts";

Deno.test("deno task install from a fresh clone puts an htmcp on PATH that the SDK client drives offline", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-install-" }));
  try {
    const clone = join(dir, "clone");
    const cloned = await run("git", ["clone", "--quiet", REPO, clone], {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    });
    assert.equal(cloned.code, 0, cloned.stderr);
    // The README's command, in the clone.
    const { prefix, env, stdout } = await installHere(dir, clone);
    assert.match(stdout, new RegExp(`wrote ${prefix}/bin/htmcp`));
    // The launcher shares the server's chunks, so it runs under the server's
    // V8 flags: one code cache for both, not one thrown away per start.
    const script = await Deno.readTextFile(join(prefix, "bin", "htmcp"));
    const launchLine = script.split("\n").find((line) => line.includes("HTMCP_LAUNCH_EXEC=1"));
    assert.ok(launchLine?.includes(SERVER_V8_FLAGS), launchLine);

    // On PATH: found by name, from anywhere.
    const version = await run("htmcp", ["--version"], env, "/");
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^htmcp \d+\.\d+\.\d+/);
    const usage = await run("htmcp", ["--polcy", "x"], env, "/");
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /Unknown flag "--polcy"/);

    // Installed from the clone, independent of it afterwards.
    await Deno.remove(clone, { recursive: true });
    const policy = await writePolicy(dir);
    const stderr = await driveOverStdio("htmcp", ["serve", "--policy", policy], env);
    assert.match(stderr, /permission layer: flags/);

    // A changed copy of the program is refused loudly.
    const launcher = join(prefix, "lib", "htmcp");
    const [versionDir] = [...Deno.readDirSync(launcher)].map((entry) => entry.name);
    await Deno.writeTextFile(
      join(launcher, versionDir as string, "dist", "scripts", "launch.js"),
      "\n// edited\n",
      { append: true },
    );
    // (Any start that runs the launcher: a start kept in the start cache
    // does not run it, so this one is from a folder never started in.)
    const tampered = await run("htmcp", ["--version"], env, dir);
    assert.equal(tampered.code, 1);
    assert.match(tampered.stderr, /changed since it was installed; run `deno task install` again/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno run -A dist/htmcp.js serve works as a user tries it first: it restarts itself under the flags", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-bundle-a-" }));
  try {
    const file = join(dir, "dist", "htmcp.js");
    await Deno.mkdir(join(dir, "dist"));
    assert.equal(await bundle(file), null);
    const policy = await writePolicy(dir);
    const stderr = await driveOverStdio(
      Deno.execPath(),
      ["run", "-A", file, "serve", "--policy", policy],
      { PATH: "/usr/bin:/bin", HOME: dir },
    );
    assert.doesNotMatch(stderr, /Unstable API/);
    assert.match(stderr, /starting again under exactly its flags/);
    assert.match(stderr, /permission layer: flags/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

interface Running {
  readonly pid: number;
  readonly ppid: number;
  /** The argv joined by spaces (this test's paths hold none). */
  readonly args: string;
}

/**
 * One process, by pid, from ps (Deno grants /proc of other processes only to
 * -A); null once it is gone. Only pids this test started or its own: the
 * machine's other processes are never listed.
 */
async function processOf(pid: number): Promise<Running | null> {
  const out = await run("ps", ["-o", "pid=,ppid=,args=", "-p", String(pid)], {
    PATH: "/usr/bin:/bin",
  });
  const [, found, ppid, args] = out.stdout.match(/^\s*(\d+)\s+(\d+)\s(.*)$/m) ?? [];
  return found === undefined ? null : { pid: Number(found), ppid: Number(ppid), args: args ?? "" };
}

/** The live children of `pid` (every thread's), from its own /proc entry. */
async function childrenOf(pid: number): Promise<Running[]> {
  const out = await run("sh", ["-c", 'cat /proc/"$1"/task/*/children', "sh", String(pid)], {
    PATH: "/usr/bin:/bin",
  });
  assert.equal(out.code, 0, out.stderr);
  const pids = out.stdout.split(/\s+/).filter((word) => word !== "").map(Number);
  const found = await Promise.all(pids.map(processOf));
  return found.filter((one): one is Running => one !== null);
}

Deno.test("the installed htmcp leaves one process and its serving helper, the server under the policy's flags: SIGTERM ends it cleanly, and a changed policy changes its flags", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-install-exec-" }));
  try {
    const { env, lib } = await installHere(dir);
    const policy = await writePolicy(dir);

    /** Starts `htmcp serve` with the SDK client; returns the server's argv once it answered. */
    const serveOnce = async (stop: "SIGTERM" | "close") => {
      const transport = new StdioClientTransport({
        command: "htmcp",
        args: ["serve", "--policy", policy],
        env,
        stderr: "pipe",
      });
      let stderr = "";
      transport.stderr?.on(
        "data",
        (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk),
      );
      const closed = new Promise<void>((resolve) => transport.onclose = resolve);
      const client = new Client({ name: "install-exec-test", version: "1" });
      await client.connect(transport);
      assert.equal(client.getServerVersion()?.name, "htmcp");
      const pid = transport.pid;
      assert(pid !== null);
      // The process the client started is the server itself: deno running the
      // bundled main.js, a child of this test with nothing between, nothing
      // under it but its serving helper (which every command is a fork of),
      // and no launcher of this installation left anywhere.
      const server = await processOf(pid);
      assert(server !== null);
      const argv = server.args.split(" ");
      assert.equal(argv[0], Deno.execPath());
      assert(argv.includes(join(lib, "dist", "src", "main.js")), server.args);
      assert(!argv.includes("--allow-all") && !argv.includes("-A"), server.args);
      assert.equal(server.ppid, Deno.pid);
      assert.deepEqual((await childrenOf(pid)).map((child) => child.args), [
        `${join(lib, "build", "htmcp-spawn")} --serve`,
      ]);
      // The launcher ran as the script's child and was waited for: none is
      // left among this test's children (the script exec'd into the server).
      const launcher = join(lib, "dist", "scripts", "launch.js");
      const ours = await childrenOf(Deno.pid);
      assert(ours.some((one) => one.pid === pid), JSON.stringify(ours));
      assert.deepEqual(ours.filter((one) => one.args.split(" ").includes(launcher)), []);
      if (stop === "SIGTERM") {
        // The client's signal reaches the server, not a relay: it stops as it
        // does on SIGTERM, its last line and its audit record written.
        Deno.kill(pid, "SIGTERM");
        await closed;
        assert.match(stderr, /stopped \(received SIGTERM\)/);
        const records = (await Deno.readTextFile(join(dir, "log", "audit.jsonl"))).trim()
          .split("\n").map((line) => JSON.parse(line));
        const last = records.at(-1);
        assert.equal(last.event, "server_stop", JSON.stringify(last));
        assert.equal(last.reason, "received SIGTERM");
      }
      await client.close();
      await closed;
      // The launcher's flags are exactly the set the bundled server computes
      // for itself: not broader (it would restart itself) and not narrower.
      assert.match(stderr, /permission layer: flags \(no broader than the policy's set\)/);
      return argv;
    };

    const first = await serveOnce("SIGTERM");
    const runFlag = (argv: string[]) => argv.find((arg) => arg.startsWith("--allow-run="));
    assert.equal(runFlag(first)?.includes("/ls"), false, runFlag(first));
    // The policy is read again at the next start: a command added to it is in
    // the next server's flags.
    await Deno.writeTextFile(
      policy,
      (await Deno.readTextFile(policy)).replace(`["cat", "echo"]`, `["cat", "echo", "ls"]`),
    );
    const second = await serveOnce("close");
    assert.match(runFlag(second) ?? "", /\/ls(,|$)/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * The bundle files a stdio start of the installed program loads: the static
 * closure of `dist/src/main.js`, of the `serve` verb's chunk and of the stdio
 * transport's chunk it imports (esbuild names a dynamic import's chunk after
 * its module), read through `deno info`.
 */
async function stdioStartFiles(lib: string): Promise<string[]> {
  const info = await run(
    Deno.execPath(),
    ["info", "--json", "--no-config", join(lib, "dist", "src", "main.js")],
    { PATH: "/usr/bin:/bin", HOME: "/tmp", DENO_DIR },
  );
  assert.equal(info.code, 0, info.stderr);
  const modules = (JSON.parse(info.stdout) as {
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[];
    }[];
  }).modules;
  const imports = (specifier: string, dynamic: boolean) =>
    (modules.find((m) => m.specifier === specifier)?.dependencies ?? [])
      .filter((dep) => (dep.isDynamic ?? false) === dynamic)
      .flatMap((dep) => dep.code === undefined ? [] : [dep.code.specifier]);
  const main = modules.find((m) => m.specifier.endsWith("/dist/src/main.js"))!.specifier;
  const named = (from: string, prefix: string) => {
    const found = imports(from, true).filter((s) => s.split("/").at(-1)!.startsWith(prefix));
    assert.equal(found.length, 1, `${from} imports one ${prefix}* chunk: ${found}`);
    return found[0]!;
  };
  const serve = named(main, "serve-");
  const stdio = named(serve, "stdio-");
  const seen = new Set<string>();
  const pending = [main, serve, stdio];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    pending.push(...imports(next, false));
  }
  return [...seen].filter((s) => s.startsWith("file:")).map((s) => new URL(s).pathname);
}

Deno.test("the installed program's stdio start loads no PostgreSQL driver, OpenTelemetry, HTTP transport, OAuth server, SDK v2 or node: module", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-install-lazy-" }));
  try {
    const { lib } = await installHere(dir);
    const loaded = await stdioStartFiles(lib);
    const bundleFiles = [
      ...["", "src", "scripts"].flatMap((sub) =>
        [...Deno.readDirSync(join(lib, "dist", sub))]
          .filter((entry) => entry.isFile && entry.name.endsWith(".js"))
          .map((entry) => join(lib, "dist", sub, entry.name))
      ),
    ];
    // The bundle is minified: the modules each file holds are named in its
    // source map (written beside it, never read by a start).
    const modulesOf = (files: string[]) =>
      files.map((file) =>
        (JSON.parse(Deno.readTextFileSync(`${file}.map`)) as { sources: string[] }).sources
          .join("\n")
      );
    const all = modulesOf(bundleFiles);
    const start = modulesOf(loaded);
    for (
      const marker of [
        "registry.npmjs.org/postgres/",
        "registry.npmjs.org/@opentelemetry/",
        "/src/transport/http/",
        "/src/auth/server/",
        "registry.npmjs.org/@modelcontextprotocol/server/",
      ]
    ) {
      assert(all.some((text) => text.includes(marker)), `the bundle holds ${marker} somewhere`);
      assert(!start.some((text) => text.includes(marker)), `a stdio start loads ${marker}`);
    }
    // What it does load: the SDK v1 the 2025 era serves with.
    assert(start.some((text) => text.includes("registry.npmjs.org/@modelcontextprotocol/sdk/")));
    // And no node: module: any one makes Deno load its Node compatibility
    // layer before the server's first line (docs/ARCHITECTURE.md).
    for (const file of loaded) {
      const text = Deno.readTextFileSync(file);
      assert.deepEqual(text.match(/\b(from|import)\s*"node:[a-z_/]+"/g), null, file);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the installed server imports its chunks as it needs them, under a read grant of its own folder alone", async () => {
  // The installation and the policy in folders apart: no grant the policy
  // implies (its folder, the jail, the log) covers the program's files.
  const installDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-lazy-prog-" }));
  const policyDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-lazy-pol-" }));
  // Searchable by the jail's owner, as ~/.local is: the sandbox binds the helper from there.
  await Deno.chmod(installDir, 0o755);
  try {
    const { env, lib } = await installHere(installDir);
    const policy = await writePolicy(policyDir);
    const plan = await run("htmcp", ["permissions", "--policy", policy], env, policyDir);
    assert.equal(plan.code, 0, plan.stderr);
    const reads = plan.stdout.match(/--allow-read=(\S+)/)?.[1]?.split(",") ?? [];
    assert(reads.includes(join(lib, "dist")), plan.stdout);
    assert(!reads.some((path) => path === lib || path === join(lib, "start")), plan.stdout);
    // The start the launcher prints loads dynamic imports lazily.
    const printed = await run(Deno.execPath(), [
      "run",
      "--quiet",
      "--no-config",
      "--allow-all",
      join(lib, "dist", "scripts", "launch.js"),
      "serve",
      "--policy",
      policy,
    ], { ...env, HTMCP_LAUNCH_EXEC: "1" });
    assert.match(printed.stdout, /'--unstable-lazy-dynamic-imports'/);
    const stderr = await driveOverStdio("htmcp", ["serve", "--policy", policy], env, policyDir);
    assert.match(stderr, /permission layer: flags \(no broader than the policy's set\)/);
  } finally {
    await Deno.remove(installDir, { recursive: true });
    await Deno.remove(policyDir, { recursive: true });
  }
});

Deno.test("the installed script fails closed: a launcher that prints no start never lets the arguments reach deno", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-install-closed-" }));
  try {
    const { prefix, env } = await installHere(dir);
    // A launcher bug that exits 0 and prints nothing, installed with its own
    // hash so the script's integrity check passes.
    const fake = join(dir, "launch.js");
    await Deno.writeTextFile(fake, "// prints no start\n");
    const digest = new Uint8Array(
      await crypto.subtle.digest("SHA-256", await Deno.readFile(fake)),
    );
    const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
    const script = (await Deno.readTextFile(join(prefix, "bin", "htmcp")))
      .replace(/^launcher=.*$/m, `launcher='${fake}'`)
      .replace(/^expected=.*$/m, `expected='${hex}'`);
    const broken = join(dir, "htmcp-broken");
    await Deno.writeTextFile(broken, script, { mode: 0o755 });
    const canary = join(dir, "canary");
    const ran = await run(broken, ["eval", `Deno.writeTextFileSync("${canary}", "ran")`], env, dir);
    assert.equal(ran.code, 1, ran.stderr);
    assert.match(ran.stderr, /printed no start; run `deno task install` again/);
    assert.equal(await exists(canary), false, "deno ran");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
