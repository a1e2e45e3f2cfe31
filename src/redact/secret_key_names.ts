/**
 * Decides whether a key name (`DB_PASSWORD`, `clientSecret`, `x-api-key`,
 * `--token`) names a secret, so its value is hidden while the key stays
 * visible.
 *
 * The decision looks at the key's *last word* (or last two words), not at
 * substrings: `author`, `tokenizer`, `max_tokens`, `token_type`,
 * `password_file` and `SSH_AUTH_SOCK` name no secret, while `GITHUB_TOKEN`,
 * `aws_secret_access_key` and `apiKey` do.
 *
 * @module
 */

/** A key whose last word is one of these names a secret. */
const SECRET_WORDS: ReadonlySet<string> = new Set([
  "password",
  "passwd",
  "passphrase",
  "pwd",
  "secret",
  "token",
  "auth",
  "authorization",
  "credential",
  "credentials",
  "apikey",
  "accesskey",
  "privatekey",
  "secretkey",
  "accountkey",
  "clientsecret",
  "authtoken",
  "accesstoken",
  "refreshtoken",
]);

/** A key ending in `<one of these> key` (`api_key`, `signingKey`) names a secret. */
const KEY_QUALIFIERS: ReadonlySet<string> = new Set([
  "api",
  "access",
  "private",
  "secret",
  "signing",
  "encryption",
  "master",
  "account",
  "shared",
  "auth",
  "client",
]);

/**
 * Run-together upper- or lower-case keys (`DBPASSWORD`, `mytoken`) are one
 * word; these endings still mark them. Short endings (`pwd`, `auth`) are left
 * out: `oldpwd` and `oauth` are not secrets.
 */
const SECRET_SUFFIXES: readonly string[] = [
  "password",
  "passwd",
  "passphrase",
  "secret",
  "token",
  "apikey",
  "accesskey",
  "privatekey",
  "secretkey",
];

function lowerByte(x: number): number {
  return x >= 65 && x <= 90 ? x | 0x20 : x;
}

/** Packs three ASCII characters, lower-casing letters, into one number. */
function tail3(a: number, b: number, c: number): number {
  return (lowerByte(a) << 16) | (lowerByte(b) << 8) | lowerByte(c);
}

/**
 * The last three letters of every word and compound above: a cheap test that
 * dismisses nearly every key before it is split into words.
 */
const LAST_THREE: ReadonlySet<number> = new Set(
  [...SECRET_WORDS, ...SECRET_SUFFIXES, "key"].map((word) =>
    tail3(
      word.charCodeAt(word.length - 3),
      word.charCodeAt(word.length - 2),
      word.charCodeAt(word.length - 1),
    )
  ),
);

/**
 * Their last two letters in any case, as a 128 x 128 table: the first and
 * cheapest test, run for every `=` and `:` of the output.
 */
const LAST_TWO = new Uint8Array(128 * 128);
for (const code of LAST_THREE) {
  const b = (code >> 8) & 0x7f;
  const c = code & 0x7f;
  for (const x of [b, b & ~0x20]) for (const y of [c, c & ~0x20]) LAST_TWO[(x << 7) | y] = 1;
}

/**
 * True when the identifier ending at `end` (exclusive) might name a secret,
 * judged by its last three characters only (`bytes` as in `ScanInput`).
 * Never false for a name `isSecretKeyName` accepts.
 */
export function mayEndSecretKeyName(bytes: Uint8Array, end: number): boolean {
  if (end < 3 || LAST_TWO[((bytes[end - 2]! & 0x7f) << 7) | (bytes[end - 1]! & 0x7f)] === 0) {
    return false;
  }
  return LAST_THREE.has(tail3(bytes[end - 3]!, bytes[end - 2]!, bytes[end - 1]!));
}

/** camelCase and acronym boundaries: `clientSecret`, `APIKey`, `DBPassword`. */
const CAMEL_BOUNDARY = /([a-z0-9])([A-Z])|([A-Z])([A-Z][a-z])/g;
const SEPARATORS = /[^A-Za-z0-9]+/;

/** Splits a key into lower-case words. */
export function keyWords(key: string): string[] {
  return key
    .replace(CAMEL_BOUNDARY, "$1$3 $2$4")
    .split(SEPARATORS)
    .filter((word) => word.length > 0)
    .map((word) => word.toLowerCase());
}

/**
 * @param key a key as written, e.g. `"DB_PASSWORD"`, `"--api-key"`, `"clientSecret"`
 * @returns true when the key names a secret
 *
 * @example
 * ```ts
 * import { isSecretKeyName } from "./secret_key_names.ts";
 * isSecretKeyName("GITHUB_TOKEN"); // true
 * isSecretKeyName("max_tokens"); // false
 * ```
 */
export function isSecretKeyName(key: string): boolean {
  const known = verdicts.get(key);
  if (known !== undefined) return known;
  const verdict = judgeKeyName(key);
  // Output repeats its keys (`version=`, `PWD=` on every line): remember a
  // bounded number of verdicts.
  if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
  verdicts.set(key, verdict);
  return verdict;
}

const MAX_VERDICTS = 512;
const verdicts = new Map<string, boolean>();

function judgeKeyName(key: string): boolean {
  const words = keyWords(key);
  const last = words[words.length - 1];
  if (last === undefined) return false;
  if (SECRET_WORDS.has(last)) return true;
  const before = words[words.length - 2];
  if (last === "key" && before !== undefined && KEY_QUALIFIERS.has(before)) return true;
  if (words.length === 1) return SECRET_SUFFIXES.some((suffix) => last.endsWith(suffix));
  return false;
}

/** True when the key is about AWS secret access keys (`aws_secret_access_key`, `SecretAccessKey`). */
export function isAwsSecretKeyName(key: string): boolean {
  const words = keyWords(key);
  const joined = words.join("");
  return words.includes("aws") || joined.endsWith("secretaccesskey");
}
