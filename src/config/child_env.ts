/**
 * The child environment: computed once at startup from `[env] pass` and the
 * server's environment, so the model can never add to it.
 *
 * @module
 */
import { isAbsolute } from "../path/mod.ts";
import { DEFAULT_CHILD_PATH } from "./types.ts";
import { type Checked, fail, pass, quote } from "./_checked.ts";
import { refusedEnvReason } from "./env_names.ts";

/** POSIX portable environment names: what a child's `getenv` can rely on. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The `[env] pass` default, as in the example. */
export const DEFAULT_ENV_PASS: readonly string[] = ["PATH", "HOME", "LANG"];

/** The computed environment and the PATH folders commands are resolved on. */
export interface ChildEnvironment {
  readonly envPass: readonly string[];
  /** A `{ __proto__: null }` object: a passed name like `constructor` is an own key only. */
  readonly childEnv: Readonly<Record<string, string>>;
  readonly pathDirs: readonly string[];
}

/**
 * Reads one variable from the server environment as an own property only:
 * `env` may be a plain object, where `env.constructor` would be inherited.
 */
export function readEnv(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
): string | undefined {
  if (!Object.hasOwn(env, name)) return undefined;
  const value = env[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * Builds the child environment.
 *
 * @param pass the names from `[env] pass` (or the default)
 * @param env the server's environment
 * @returns the environment, or a sentence naming `env.pass`
 */
export function buildChildEnv(
  pass_: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Checked<ChildEnvironment> {
  const names: string[] = [];
  for (const [index, name] of pass_.entries()) {
    const key = `Policy key "env.pass[${index + 1}]"`;
    if (!ENV_NAME.test(name)) {
      return fail(
        `${key} is ${
          quote(name)
        }, which is not a valid environment variable name (letters, digits and _, not starting with a digit).`,
      );
    }
    const refused = refusedEnvReason(name);
    if (refused !== null) {
      return fail(`${key} is ${quote(name)}, which is never passed to commands: ${refused}.`);
    }
    if (!names.includes(name)) names.push(name);
  }

  const childEnv: Record<string, string> = { __proto__: null } as unknown as Record<
    string,
    string
  >;
  for (const name of names) {
    const value = readEnv(env, name);
    if (value !== undefined) childEnv[name] = value;
  }
  // Spec: PATH defaults to a fixed system PATH when not passed or unset.
  const passedPath = childEnv["PATH"];
  if (passedPath === undefined || passedPath === "") childEnv["PATH"] = DEFAULT_CHILD_PATH;
  const path = childEnv["PATH"] as string;

  const pathDirs = path.split(":");
  for (const dir of pathDirs) {
    // An empty or relative entry means "the current folder", which for a
    // child is inside the jail: anything the model writes there would run.
    if (!isAbsolute(dir)) {
      return fail(
        `Policy key "env.pass" passes PATH ${quote(path)}, whose entry ${
          quote(dir)
        } is not an absolute folder; a relative or empty entry would make children run programs from the jail.`,
      );
    }
  }
  return pass({ envPass: names, childEnv, pathDirs });
}
