/**
 * Which git repository addresses reach the network. Everything else is a
 * local transport (a path or `file://`), where git starts `receive-pack` or
 * `upload-pack` in another repository *without* htmcp's `-c` overrides
 * (connect.c drops `GIT_CONFIG_PARAMETERS` for local transports), so that
 * repository's hooks run; or a remote helper (`<transport>::<address>`),
 * which runs `git-remote-<transport>`. git's own rules (connect.c
 * `parse_connect_url`, transport.c `transport_get`): `scheme://` is a URL,
 * `host:path` with no `/` before the colon is ssh, anything else is a path.
 *
 * @module
 */

/** Schemes git connects to over the network with its built-in transports. */
const NETWORK_SCHEMES: ReadonlySet<string> = new Set([
  "http",
  "https",
  "ssh",
  "git",
  "git+ssh",
  "ssh+git",
]);

/**
 * Whether git would reach `address` over the network (http(s), ssh, git,
 * or scp-like `host:path`). A local path, `file://`, `<helper>::<address>`
 * or any other scheme is not.
 *
 * @param address A remote URL or path as git would read it.
 *
 * @example
 * ```ts
 * import { isNetworkGitUrl } from "./git_urls.ts";
 * isNetworkGitUrl("https://example.com/x.git"); // true
 * isNetworkGitUrl("git@example.com:x.git"); // true
 * isNetworkGitUrl("../x.git"); // false
 * isNetworkGitUrl("file:///srv/x.git"); // false
 * ```
 */
export function isNetworkGitUrl(address: string): boolean {
  if (address.includes("::")) return false;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(address);
  if (scheme !== null) return NETWORK_SCHEMES.has((scheme[1] as string).toLowerCase());
  const colon = address.indexOf(":");
  if (colon <= 0) return false;
  const slash = address.indexOf("/");
  // `host:path` is ssh only while no `/` comes before the colon (`./a:b` is a path).
  return slash === -1 || slash > colon;
}

/**
 * Whether `address` certainly names a local or helper transport: a path
 * (absolute, relative with a `/`, `.`, `..`), `file:` or `<helper>::`. A
 * bare word is not: it may be a configured remote's name, which the
 * repository check judges by its configured URL.
 */
export function isLocalGitAddress(address: string): boolean {
  if (/^file:/i.test(address) || address.includes("::")) return true;
  if (isNetworkGitUrl(address)) return false;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(address)) return true; // an unknown scheme
  return address.includes("/") || address === "." || address === "..";
}

const FETCH_VALUES = [
  "--upload-pack",
  "--depth",
  "--deepen",
  "--shallow-since",
  "--shallow-exclude",
  "-j",
  "--jobs",
  "--refmap",
  "-o",
  "--server-option",
  "--negotiation-tip",
  "--filter",
  "--submodule-prefix",
  "--recurse-submodules-default",
];
/**
 * Per subcommand, the options (separate-word form) that take a value, from
 * each command's manual. An option missing here makes its value look like
 * the address, which only checks a harmless word; the address itself is
 * then still refused by git's own `GIT_ALLOW_PROTOCOL` check.
 */
// deno-fmt-ignore
const VALUE_OPTIONS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["push", new Set(["--repo", "-o", "--push-option", "--receive-pack", "--exec"])],
  ["fetch", new Set(FETCH_VALUES)],
  ["pull", new Set([...FETCH_VALUES, "-s", "--strategy", "-X", "--strategy-option"])],
  ["ls-remote", new Set(["--upload-pack", "-o", "--server-option", "--sort"])],
  ["clone", new Set([
    "-o", "--origin", "-b", "--branch", "-u", "--upload-pack", "--reference",
    "--reference-if-able", "--separate-git-dir", "--depth", "--shallow-since",
    "--shallow-exclude", "-j", "--jobs", "--filter", "--server-option", "--bundle-uri",
  ])],
  ["remote", new Set(["-t", "-m"])],
]);

/** The non-option words after the subcommand, skipping the values of known options. */
function operands(subcommand: string, rest: readonly string[]): string[] {
  const values = VALUE_OPTIONS.get(subcommand) ?? new Set();
  const found: string[] = [];
  for (let index = 0; index < rest.length; index++) {
    const word = rest[index] as string;
    if (word === "--") {
      found.push(...rest.slice(index + 1));
      break;
    }
    if (values.has(word)) index++;
    else if (!word.startsWith("-")) found.push(word);
  }
  return found;
}

/** The value of `--name=value` or `--name value` in `rest`, for each occurrence. */
function optionValues(rest: readonly string[], name: string): string[] {
  const values: string[] = [];
  rest.forEach((word, index) => {
    if (word.startsWith(`${name}=`)) values.push(word.slice(name.length + 1));
    else if (word === name && rest[index + 1] !== undefined) values.push(rest[index + 1] as string);
  });
  return values;
}

/**
 * The repository addresses a git transport subcommand was given explicitly:
 * the first operand of push, fetch, pull, ls-remote and clone, push's
 * `--repo`, archive's `--remote`, and the URL of `remote add`/`set-url`.
 * Remotes named by configuration are judged by the repository check; and
 * git itself refuses the `file` transport (`GIT_ALLOW_PROTOCOL`), whatever
 * the spelling.
 *
 * @param subcommand The git subcommand.
 * @param rest The words after it.
 */
export function explicitGitAddresses(subcommand: string, rest: readonly string[]): string[] {
  const words = operands(subcommand, rest);
  switch (subcommand) {
    case "push":
      return [...optionValues(rest, "--repo"), ...words.slice(0, 1)];
    case "fetch":
    case "pull":
    case "ls-remote":
    case "clone":
      return words.slice(0, 1);
    case "archive":
      return optionValues(rest, "--remote");
    case "remote": {
      const [verb, , url] = words;
      return verb === "add" || verb === "set-url" ? (url === undefined ? [] : [url]) : [];
    }
    default:
      return [];
  }
}
