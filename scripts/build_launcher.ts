/**
 * `deno task build-launcher`: compiles the launcher helper from
 * `src/exec/spawn/htmcp_spawn.c` with the system C compiler (`cc`), into
 * `build/htmcp-spawn`, and writes the manifest the server checks at startup
 * (the SHA-256 of the binary and of the source). Static when the C library's
 * static archive is installed (no dynamic loader at each exec: faster, and no
 * library search path a caller could influence), dynamic otherwise.
 *
 * `ensureLauncherBuilt()` rebuilds only when the binary or manifest is missing
 * or does not match the source; the test, demo and htmcp tasks and CI call it.
 *
 * Usage: build_launcher.ts [--force]
 *
 * @module
 */
import { dirname } from "../src/path/mod.ts";
import {
  DEFAULT_HELPER_PATH,
  HELPER_MANIFEST,
  HELPER_SOURCE,
  sha256Hex,
  verifyHelper,
} from "../src/exec/spawn/helper.ts";

const CC = "cc";
const FLAGS = ["-O2", "-s", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-D_FORTIFY_SOURCE=2"];

async function compile(staticLink: boolean, output: string): Promise<Deno.CommandOutput> {
  return await new Deno.Command(CC, {
    args: [...FLAGS, ...(staticLink ? ["-static"] : []), "-o", output, HELPER_SOURCE],
    stdout: "piped",
    stderr: "piped",
  }).output();
}

/**
 * Builds the helper and its manifest.
 *
 * @returns null on success, else the compiler's message.
 */
export async function buildLauncher(): Promise<string | null> {
  await Deno.mkdir(dirname(DEFAULT_HELPER_PATH), { recursive: true });
  // Built beside the target and renamed over it: a server starting meanwhile
  // sees the old binary or the new one, never half of one.
  const temp = `${DEFAULT_HELPER_PATH}.tmp-${Deno.pid}`;
  try {
    let built = await compile(true, temp);
    if (!built.success) built = await compile(false, temp);
    if (!built.success) return new TextDecoder().decode(built.stderr).trim();
    await Deno.chmod(temp, 0o755);
    const manifest = {
      binary: await sha256Hex(await Deno.readFile(temp)),
      source: await sha256Hex(await Deno.readFile(HELPER_SOURCE)),
    };
    await Deno.writeTextFile(`${HELPER_MANIFEST}.tmp-${Deno.pid}`, JSON.stringify(manifest) + "\n");
    await Deno.rename(temp, DEFAULT_HELPER_PATH);
    await Deno.rename(`${HELPER_MANIFEST}.tmp-${Deno.pid}`, HELPER_MANIFEST);
    return null;
  } finally {
    await Deno.remove(temp).catch(() => {});
  }
}

/**
 * Builds the helper when it is missing or stale.
 *
 * @returns null when the helper is ready, else why it could not be built.
 */
export async function ensureLauncherBuilt(): Promise<string | null> {
  if ((await verifyHelper(DEFAULT_HELPER_PATH)).ok) return null;
  const failure = await buildLauncher();
  if (failure !== null) return `cannot build the launcher helper with ${CC}: ${failure}`;
  const check = await verifyHelper(DEFAULT_HELPER_PATH);
  return check.ok ? null : check.detail;
}

if (import.meta.main) {
  const failure = Deno.args.includes("--force")
    ? await buildLauncher()
    : await ensureLauncherBuilt();
  if (failure !== null) {
    console.error(`build-launcher: ${failure}`);
    Deno.exit(1);
  }
  console.error(`build-launcher: ${DEFAULT_HELPER_PATH} is up to date`);
}
