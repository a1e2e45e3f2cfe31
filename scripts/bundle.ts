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
 * Usage: bundle.ts [--output PATH]
 *
 * @module
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_HELPER_PATH } from "../src/exec/spawn/helper.ts";
import { ensureLauncherBuilt } from "./build_launcher.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Bundles `src/main.ts` to `output` and checks the result starts with no
 * permission at all and no config.
 *
 * @returns null on success, else Deno's error output.
 */
export async function bundle(output: string): Promise<string | null> {
  const built = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--config",
      resolve(ROOT, "deno.json"),
      "--platform",
      "deno",
      "--output",
      output,
      resolve(ROOT, "src/main.ts"),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!built.success) return new TextDecoder().decode(built.stderr);
  // The bundle runs the launcher helper of this checkout (built now if
  // needed): its folder is written into the one placeholder for it.
  const launcher = await ensureLauncherBuilt();
  if (launcher !== null) return launcher;
  const text = await Deno.readTextFile(output);
  // esbuild hoists the module's constants: `BUNDLED_FROM = "";` inside its init.
  const placeholder = /\bBUNDLED_FROM = "";/g;
  if ((text.match(placeholder) ?? []).length !== 1) {
    return "The bundle does not hold exactly one launcher placeholder.";
  }
  const folder = dirname(DEFAULT_HELPER_PATH);
  await Deno.writeTextFile(
    output,
    text.replace(placeholder, `BUNDLED_FROM = ${JSON.stringify(folder)};`),
  );
  const smoke = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-config", "--no-prompt", "--cached-only", output, "version"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!smoke.success) return `The bundle does not start: ${new TextDecoder().decode(smoke.stderr)}`;
  return null;
}

if (import.meta.main) {
  const index = Deno.args.indexOf("--output");
  const cwd = Deno.env.get("INIT_CWD") ?? Deno.cwd();
  const output = index === -1
    ? resolve(ROOT, "dist/htmcp.js")
    : resolve(cwd, Deno.args[index + 1]!);
  const failure = await bundle(output);
  if (failure !== null) {
    console.error(`bundle: ${failure}`);
    Deno.exit(1);
  }
  console.error(`bundle: wrote ${output}`);
}
