/**
 * Test fixture for the loader: a real temp folder holding a jail and a
 * policy file, loaded through the real `loadPolicy`.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { loadPolicy, type LoadResult, type Policy } from "../../src/config/mod.ts";

export interface Scratch {
  /** Real path of the temp folder (policy files live here). */
  readonly dir: string;
  /** Real path of `dir/jail`, created empty. */
  readonly jail: string;
  /** Writes `dir/name` (parents created) and returns its path. */
  write(name: string, text: string, mode?: number): Promise<string>;
  /** Writes `dir/policy.toml` and loads it with `env` (default: empty). */
  load(toml: string, env?: Record<string, string>, httpListen?: string): Promise<LoadResult>;
}

/** Runs `fn` with a fresh scratch folder, removed afterwards. */
export async function withScratch(fn: (scratch: Scratch) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-config-" }));
  const jail = `${dir}/jail`;
  await Deno.mkdir(jail);
  const scratch: Scratch = {
    dir,
    jail,
    async write(name, text, mode = 0o644) {
      const path = `${dir}/${name}`;
      await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
      await Deno.writeTextFile(path, text, { mode });
      await Deno.chmod(path, mode);
      return path;
    },
    async load(toml, env = {}, httpListen) {
      const policyFile = await scratch.write("policy.toml", toml);
      return await loadPolicy({
        policyFile,
        env,
        ...(httpListen === undefined ? {} : { overrides: { httpListen } }),
      });
    },
  };
  try {
    await fn(scratch);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Asserts the load failed with exactly `message` (and did not throw). */
export function assertRefused(result: LoadResult, message: string): void {
  assert.ok(!result.ok, "expected a refusal, but the policy loaded");
  assert.equal(result.message, message);
}

/** Asserts the load succeeded and returns the policy. */
export function assertLoaded(result: LoadResult): Policy {
  if (!result.ok) throw new Error(`expected the policy to load, got: ${result.message}`);
  return result.policy;
}

const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

/**
 * Runs one of these tests' child-process helpers (`./_NAME.ts`) in a fresh
 * Deno with the repository's config and exactly `permissions`, and parses
 * what it prints as JSON.
 */
export async function runHelper(
  name: string,
  permissions: readonly string[],
  args: readonly string[],
  cwd?: string,
): Promise<unknown> {
  const helper = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-prompt", `--config=${CONFIG}`, ...permissions, helper, ...args],
    ...(cwd === undefined ? {} : { cwd }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return JSON.parse(new TextDecoder().decode(output.stdout));
}

/** The minimal valid policy: a jail next to the policy file. */
export const MINIMAL = 'jail_root = "jail"\n';
