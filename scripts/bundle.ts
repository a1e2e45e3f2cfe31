/**
 * `deno task bundle`: one self-contained file, `dist/htmcp.js`, from
 * `src/main.ts` and every npm dependency (esbuild, fetched from npm by
 * `deno bundle`). It runs offline with an empty DENO_DIR and no deno.json:
 *
 *   deno run $(htmcp permissions --policy FILE) dist/htmcp.js serve --policy FILE
 *
 * The confined Worker re-enters the main module, which is this same file, so
 * self-confinement needs nothing else either.
 *
 * `bundleProgram(dir)` is the form `deno task install` runs: the server and
 * the task launcher bundled together with code splitting, `dir/src/main.js`
 * and `dir/scripts/launch.js` over shared chunks. What a start does not use
 * (the HTTP transport, OAuth, the PostgreSQL driver, OpenTelemetry, the
 * other verbs) stays in chunks loaded only when used, and the two share one
 * copy of the permission-set code, so the launcher computes exactly the set
 * the bundled server checks itself against.
 *
 * Both are minified: a start pays for every byte Deno reads and compiles
 * (the installed server's start x0.90 paired, half the bytes). Stack traces
 * of a bundle name minified functions; run the source (`deno task htmcp`)
 * to read one.
 *
 * Usage: bundle.ts [--output PATH] | bundle.ts --program DIR
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_HELPER_PATH } from "../src/exec/spawn/helper.ts";
import { ensureLauncherBuilt } from "./build_launcher.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** `BUNDLED_FROM`'s value in the source: a literal the minifier keeps as it is. */
const PLACEHOLDER = /"<htmcp:bundled-from>"/g;

/** Runs `deno bundle` with `args` before the entry points; null or Deno's error output. */
async function denoBundle(args: readonly string[], entries: readonly string[]) {
  const built = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--config",
      resolve(ROOT, "deno.json"),
      "--platform",
      "deno",
      ...args,
      ...entries.map((entry) => resolve(ROOT, entry)),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return built.success ? null : new TextDecoder().decode(built.stderr);
}

/**
 * Writes this checkout's helper folder into the one placeholder among
 * `files` (the bundle's own URL says nothing about where the checkout is),
 * building the helper first if needed.
 */
async function fillHelperFolder(files: readonly string[]): Promise<string | null> {
  const launcher = await ensureLauncherBuilt();
  if (launcher !== null) return launcher;
  const texts = await Promise.all(files.map((file) => Deno.readTextFile(file)));
  const holders = texts.flatMap((text, i) => (text.match(PLACEHOLDER) ?? []).map(() => i));
  const [holder] = holders;
  if (holders.length !== 1 || holder === undefined) {
    return "The bundle does not hold exactly one launcher placeholder.";
  }
  const folder = dirname(DEFAULT_HELPER_PATH);
  await Deno.writeTextFile(
    files[holder]!,
    texts[holder]!.replace(PLACEHOLDER, JSON.stringify(folder)),
  );
  return null;
}

/** Checks `main` starts with no permission at all and no config. */
async function smokeTest(main: string): Promise<string | null> {
  const smoke = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-config", "--no-prompt", "--cached-only", main, "version"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!smoke.success) return `The bundle does not start: ${new TextDecoder().decode(smoke.stderr)}`;
  return null;
}

/**
 * Bundles `src/main.ts` to `output` and checks the result starts with no
 * permission at all and no config.
 *
 * @returns null on success, else Deno's error output.
 */
export async function bundle(output: string): Promise<string | null> {
  return await denoBundle(["--minify", "--output", output], ["src/main.ts"]) ??
    await fillHelperFolder([output]) ??
    await smokeTest(output);
}

/**
 * Bundles the server and the launcher with code splitting into `dir`, which
 * must not exist yet (a leftover chunk of an older build must not sit among
 * the new ones), and checks the server starts with no permission and no config.
 *
 * @returns null on success, else why not.
 */
export async function bundleProgram(dir: string): Promise<string | null> {
  if (await Deno.lstat(dir).then(() => true, () => false)) {
    return `${dir} exists already; the program is bundled into a new folder.`;
  }
  const failure = await denoBundle(
    ["--code-splitting", "--minify", "--sourcemap=external", "--outdir", dir],
    ["src/main.ts", "scripts/launch.ts"],
  );
  if (failure !== null) return failure;
  const files: string[] = [];
  for (const folder of [dir, join(dir, "src"), join(dir, "scripts")]) {
    for await (const entry of Deno.readDir(folder)) {
      if (entry.isFile && entry.name.endsWith(".js")) files.push(join(folder, entry.name));
    }
  }
  return await fillHelperFolder(files) ?? await smokeTest(join(dir, "src", "main.js"));
}

if (import.meta.main) {
  const cwd = Deno.env.get("INIT_CWD") ?? Deno.cwd();
  const program = Deno.args.indexOf("--program");
  const index = Deno.args.indexOf("--output");
  const output = program !== -1
    ? resolve(cwd, Deno.args[program + 1]!)
    : index === -1
    ? resolve(ROOT, "dist/htmcp.js")
    : resolve(cwd, Deno.args[index + 1]!);
  const failure = program !== -1 ? await bundleProgram(output) : await bundle(output);
  if (failure !== null) {
    console.error(`bundle: ${failure}`);
    Deno.exit(1);
  }
  console.error(`bundle: wrote ${output}`);
}
