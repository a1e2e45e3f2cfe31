/**
 * The sharp edges of Deno's permission model that shaped the generated set,
 * each verified on the installed Deno (2.9.6) so a Deno upgrade that changes
 * one fails here first. docs/permissions.md explains what we do about each.
 */
import assert, { equal } from "node:assert/strict";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-edge-" }));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Runs `code` as a module under `flags`; returns its stdout (trimmed). */
async function under(dir: string, flags: string[], code: string): Promise<string> {
  const file = `${dir}/probe_${crypto.randomUUID()}.ts`;
  await Deno.writeTextFile(
    file,
    `const attempt = async (fn: () => unknown) => { try { return String(await fn()); } catch (e) { return (e as Error).name; } };\n${code}`,
  );
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", ...flags, file],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(output.success, new TextDecoder().decode(output.stderr));
  return new TextDecoder().decode(output.stdout).trim();
}

Deno.test("sharp edge: write+read on a folder above an allowlisted binary lets the process swap the binary (so we refuse such grants)", async () => {
  await withDir(async (dir) => {
    await Deno.mkdir(`${dir}/bin`);
    await Deno.copyFile("/usr/bin/true", `${dir}/bin/tool`);
    await Deno.chmod(`${dir}/bin/tool`, 0o755);
    const out = await under(
      dir,
      [
        `--allow-run=${dir}/bin/tool`,
        `--allow-write=${dir}`,
        `--allow-read=${dir}`,
      ],
      `
      // Deno refuses a direct write to the run-granted path itself...
      console.log(await attempt(() => Deno.writeTextFile("${dir}/bin/tool", "x")));
      // ...but not replacing the folder that holds it.
      await Deno.mkdir("${dir}/new");
      await Deno.writeTextFile("${dir}/new/tool", "#!/bin/sh\\necho SWAPPED\\n", { mode: 0o755 });
      await Deno.rename("${dir}/bin", "${dir}/old");
      await Deno.rename("${dir}/new", "${dir}/bin");
      const o = await new Deno.Command("${dir}/bin/tool").output();
      console.log(new TextDecoder().decode(o.stdout).trim());
    `,
    );
    equal(out, "NotCapable\nSWAPPED");
  });
});

Deno.test("sharp edge: run grants compare path text, so /bin/true is not /usr/bin/true (we grant the resolved PATH spelling)", async () => {
  await withDir(async (dir) => {
    const out = await under(
      dir,
      ["--allow-run=/usr/bin/true"],
      `
      console.log(await attempt(async () => (await new Deno.Command("/usr/bin/true").output()).code));
      console.log(await attempt(async () => (await new Deno.Command("/bin/true").output()).code));
    `,
    );
    equal(out, "0\nNotCapable");
  });
});

Deno.test("sharp edge: a child env with LD_PRELOAD, LD_LIBRARY_PATH or DYLD_* needs unscoped run (we never pass them)", async () => {
  await withDir(async (dir) => {
    const out = await under(
      dir,
      ["--allow-run=/usr/bin/true"],
      `
      for (const name of ["LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES"]) {
        console.log(await attempt(() => new Deno.Command("/usr/bin/true", { clearEnv: true, env: { [name]: "/x" } }).output()));
      }
      console.log(await attempt(async () => (await new Deno.Command("/usr/bin/true", { clearEnv: true, env: { LANG: "C" } }).output()).code));
    `,
    );
    equal(out, "NotCapable\nNotCapable\nNotCapable\n0");
  });
});

Deno.test("sharp edge: /proc needs all-access, even with read granted on /proc (no feature may read it under the set)", async () => {
  await withDir(async (dir) => {
    const out = await under(
      dir,
      ["--allow-read=/proc"],
      `
      console.log(await attempt(() => Deno.readTextFile("/proc/self/status").then(() => "read")));
    `,
    );
    equal(out, "NotCapable");
  });
});

Deno.test("sharp edge: Deno.kill needs unscoped run; ChildProcess.kill works under a scoped grant", async () => {
  await withDir(async (dir) => {
    const out = await under(
      dir,
      ["--allow-run=/usr/bin/sleep"],
      `
      const child = new Deno.Command("/usr/bin/sleep", { args: ["30"] }).spawn();
      console.log(await attempt(() => Deno.kill(child.pid, "SIGKILL")));
      child.kill("SIGKILL");
      console.log((await child.status).signal);
    `,
    );
    equal(out, "NotCapable\nSIGKILL");
  });
});

Deno.test("sharp edge: net grants compare host text: 127.0.0.1:P does not cover localhost:P", async () => {
  await withDir(async (dir) => {
    const out = await under(
      dir,
      ["--allow-net=127.0.0.1:59998"],
      `
      console.log(await attempt(() => Deno.listen({ hostname: "127.0.0.1", port: 59998 }).close()));
      console.log(await attempt(() => Deno.listen({ hostname: "localhost", port: 59998 }).close()));
    `,
    );
    equal(out, "undefined\nNotCapable");
  });
});

Deno.test("sharp edge: with no flag at all Deno still allows dynamic imports from default hosts; only host:443 denials stop them", async () => {
  await withDir(async (dir) => {
    const code = `
      try { await import("https://deno.land/x/" + "htmcp-probe/mod.ts"); console.log("loaded"); }
      catch (e) { console.log((e as Error).message.includes("Requires import access") ? "refused" : "attempted"); }
    `;
    equal(await under(dir, ["--deny-import=deno.land:443"], code), "refused");
    equal(await under(dir, ["--deny-import=deno.land"], code), "attempted");
  });
});
