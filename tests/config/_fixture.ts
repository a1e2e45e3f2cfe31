/**
 * Test fixture for the loader: a real temp folder holding a jail and a
 * policy file, loaded through the real `loadPolicy`.
 */
import assert from "node:assert/strict";
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

/** The minimal valid policy: a jail next to the policy file. */
export const MINIMAL = 'jail_root = "jail"\n';
