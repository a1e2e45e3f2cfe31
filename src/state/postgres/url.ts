/**
 * The PostgreSQL URL: where it comes from (`HTMCP_STATE_URL`, else the
 * owner-only `[state] url_file`) and what it says. The loader reads it once
 * for the host and port the permission layer grants; the backend reads it
 * again, with this same parser, when it connects. It carries the password,
 * so no message here ever quotes it.
 *
 * @module
 */
import { type Checked, fail, pass, quote } from "../../result/checked.ts";
import { isLoopbackHost } from "../../net/loopback.ts";

/** The environment variable holding the PostgreSQL URL. */
export const STATE_URL_ENV = "HTMCP_STATE_URL";

/** Where the URL is, and what it says, without the password. */
export interface StateEndpoint {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  /** TLS towards the database: off, or on with the certificate verified. */
  readonly tls: "disable" | "verify-full";
}

/**
 * The URL text: `HTMCP_STATE_URL` when set (the environment overrides the
 * file, as every `HTMCP_*` setting does), else the `url_file`'s first line.
 * A file others can read is refused: the URL holds the database password.
 */
export async function readStateUrl(
  settings: { readonly urlFile: string | null },
  env: Readonly<Record<string, string | undefined>>,
): Promise<Checked<string>> {
  const fromEnv = env[STATE_URL_ENV];
  if (fromEnv !== undefined && fromEnv !== "") return pass(fromEnv.trim());
  if (settings.urlFile === null) {
    return fail(
      `Policy key "state.backend" is "postgres", but neither ${STATE_URL_ENV} nor "state.url_file" gives the database URL.`,
    );
  }
  const path = settings.urlFile;
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (error) {
    return fail(`Policy key "state.url_file": cannot read ${quote(path)}: ${errorText(error)}.`);
  }
  if (!info.isFile) return fail(`Policy key "state.url_file": ${quote(path)} is not a file.`);
  if (info.mode !== null && (info.mode & 0o077) !== 0) {
    return fail(
      `Policy key "state.url_file": ${
        quote(path)
      } is readable by other users and holds the database password; run chmod 600 on it.`,
    );
  }
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    return fail(`Policy key "state.url_file": cannot read ${quote(path)}: ${errorText(error)}.`);
  }
  const line = text.split("\n")[0]?.trim() ?? "";
  if (line === "") return fail(`Policy key "state.url_file": ${quote(path)} is empty.`);
  return pass(line);
}

/**
 * Parses `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...]`.
 * The user is required (we never guess it from the OS). TLS is off by
 * default only for a loopback host; any other host gets `verify-full`
 * unless `sslmode=disable` says otherwise, so a password does not cross a
 * network in clear text by accident. Messages never quote the URL itself.
 */
export function parseStateUrl(text: string): Checked<StateEndpoint> {
  const source = `the PostgreSQL URL (${STATE_URL_ENV} or "state.url_file")`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail(`${capital(source)} is not a URL.`);
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    return fail(`${capital(source)} must start with postgres:// or postgresql://.`);
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "") return fail(`${capital(source)} names no host.`);
  const user = decodeURIComponent(url.username);
  if (user === "") return fail(`${capital(source)} names no user (postgres://USER@HOST/DB).`);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (database === "" || database.includes("/")) {
    return fail(`${capital(source)} names no database (postgres://USER@HOST/DB).`);
  }
  const port = url.port === "" ? 5432 : Number(url.port);
  for (const key of url.searchParams.keys()) {
    if (key !== "sslmode") {
      return fail(`${capital(source)} has the parameter "${key}"; only sslmode is understood.`);
    }
  }
  const mode = url.searchParams.get("sslmode");
  const loopback = isLoopbackHost(host);
  let tls: StateEndpoint["tls"];
  if (mode === null) tls = loopback ? "disable" : "verify-full";
  else if (mode === "disable") tls = "disable";
  else if (mode === "verify-full") tls = "verify-full";
  else {
    return fail(`${capital(source)} has sslmode=${quote(mode)}; use "disable" or "verify-full".`);
  }
  return pass({ host, port, user, database, tls });
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
