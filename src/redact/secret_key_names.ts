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
