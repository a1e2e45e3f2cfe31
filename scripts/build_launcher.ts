/**
 * `deno task build-launcher`: compiles the launcher helper from
 * `src/exec/spawn/htmcp_spawn.c` into `build/htmcp-spawn`, and writes the
 * manifest the server checks at startup (the SHA-256 of the binary and of the
 * source). Static against musl when `musl-gcc` is installed, else static
 * against the system C library when its static archive is, else dynamic
 * (static: no dynamic loader at each exec, faster, and no library search path
 * a caller could influence).
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
/** musl's compiler wrapper (Debian's musl-tools), tried first. */
const MUSL_CC = "musl-gcc";
const FLAGS = ["-O2", "-s", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-D_FORTIFY_SOURCE=2"];

/** One way to build the helper: a compiler and the flags beyond `FLAGS`. */
type Build = { readonly cc: string; readonly extra: readonly string[] };

/**
 * The builds to try, best first. musl, static: a tenth of glibc's static
 * binary (66 KB against 720 KB), so the server hashes it at startup and
 * the kernel maps it at every exec (the sandbox runs it inside each call)
 * in half the time; musl ships no kernel headers, so the system's
 * (`linux/openat2.h`) come after its own. Then the system C library,
 * static, then dynamic.
 */
async function builds(): Promise<Build[]> {
  const triplet = await new Deno.Command(CC, { args: ["-print-multiarch"], stdout: "piped" })
    .output().then((out) => new TextDecoder().decode(out.stdout).trim(), () => "");
  const kernelHeaders = ["-idirafter", "/usr/include"];
  if (triplet !== "") kernelHeaders.push("-idirafter", `/usr/include/${triplet}`);
  return [
    { cc: MUSL_CC, extra: ["-static", ...kernelHeaders] },
    { cc: CC, extra: ["-static"] },
    { cc: CC, extra: [] },
  ];
}

async function compile(
  build: Build,
  source: string,
  output: string,
): Promise<Deno.CommandOutput | null> {
  try {
    return await new Deno.Command(build.cc, {
      args: [...FLAGS, ...build.extra, "-o", output, source],
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (error) {
    // This compiler is not installed (musl-gcc is optional): try the next.
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/**
 * Compiles one of this repository's C programs into `output`, the best way
 * this machine allows (`builds`).
 *
 * @param source The C file.
 * @param output Where the binary goes.
 * @returns null on success, else the compiler's message.
 */
export async function compileProgram(source: string, output: string): Promise<string | null> {
  let failure = `no C compiler (${CC}) is installed`;
  for (const build of await builds()) {
    const out = await compile(build, source, output);
    if (out === null) continue;
    if (out.success) return null;
    failure = new TextDecoder().decode(out.stderr).trim();
  }
  return failure;
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
    const failure = await compileProgram(HELPER_SOURCE, temp);
    if (failure !== null) return failure;
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
