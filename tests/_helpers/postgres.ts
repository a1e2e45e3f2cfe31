/**
 * A real PostgreSQL server for tests: `initdb` and `postgres` from the
 * Debian package, in a temporary data folder, listening on 127.0.0.1 on a
 * free port (and a unix socket inside that folder), as an unprivileged user.
 *
 * PostgreSQL refuses to run as root, and a test running as root must not
 * give a server its own identity anyway: as root the helper drops to the
 * `postgres` system user with `setpriv` (which execs, so the pid we hold is
 * the server's own). As any other user it runs as that user.
 *
 * The server is stopped by the pid this helper started, after checking the
 * process has not already exited: SIGINT (PostgreSQL's fast shutdown), then
 * SIGQUIT if it is still there after ten seconds.
 *
 * When the binaries are missing, `startPostgres` returns a reason and the
 * caller must skip loudly (see `postgresOrSkip`); `.ci/run` installs the
 * package, so in CI they are never missing.
 *
 * @module
 */

/**
 * Where the Debian package puts the server binaries: the newest
 * `/usr/lib/postgresql/<major>/bin` (15 on Debian 12, 17 on Debian 13).
 */
export const POSTGRES_BIN = findServerBin();

function findServerBin(): string {
  let majors: number[] = [];
  try {
    majors = [...Deno.readDirSync("/usr/lib/postgresql")]
      .filter((entry) => entry.isDirectory && /^\d+$/.test(entry.name))
      .map((entry) => Number(entry.name));
  } catch {
    // The package is not installed: startPostgres says so.
  }
  const newest = majors.sort((a, b) => b - a)[0];
  return `/usr/lib/postgresql/${newest ?? "15"}/bin`;
}
const SUPERUSER = "htmcp_test";

/** A running server. */
export interface PostgresServer {
  readonly port: number;
  /** `postgres://htmcp_test@127.0.0.1:PORT/DB` for a fresh database. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server it started and removes its folder (idempotent). */
  stop(): Promise<void>;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function run(argv: string[], options: { env?: Record<string, string> } = {}) {
  const [command, ...args] = argv;
  const output = await new Deno.Command(command as string, {
    args,
    stdout: "piped",
    stderr: "piped",
    ...(options.env === undefined ? {} : { env: options.env }),
  }).output();
  if (!output.success) {
    throw new Error(
      `${argv.join(" ")} failed: ${new TextDecoder().decode(output.stderr).slice(0, 2000)}`,
    );
  }
  return new TextDecoder().decode(output.stdout);
}

/** Our uid, from id(1): `Deno.uid()` needs a sys grant the test run does not have. */
const isRoot = async () => (await run(["/usr/bin/id", "-u"])).trim() === "0";

/** How the server's processes are started: as `postgres` when we are root. */
function asServerUser(argv: string[], root: boolean): string[] {
  if (!root) return argv;
  return ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", ...argv];
}

/**
 * Starts a server, or returns why it cannot (binaries absent).
 *
 * @param options `durable`: fsync on (the benchmark); tests run with it off.
 */
export async function startPostgres(
  options: { readonly durable?: boolean } = {},
): Promise<PostgresServer | { readonly skip: string }> {
  for (const binary of ["initdb", "postgres", "psql"]) {
    if (!(await exists(`${POSTGRES_BIN}/${binary}`))) {
      return { skip: `${POSTGRES_BIN}/${binary} is missing (apt-get install postgresql)` };
    }
  }
  const asRoot = await isRoot();
  const root = await Deno.makeTempDir({ prefix: "htmcp-pg-" });
  if (asRoot) {
    const uid = Number((await run(["/usr/bin/id", "-u", "postgres"])).trim());
    const gid = Number((await run(["/usr/bin/id", "-g", "postgres"])).trim());
    await Deno.chown(root, uid, gid);
  }
  await Deno.chmod(root, 0o700);
  const data = `${root}/data`;
  const initdb = run(asServerUser([
    `${POSTGRES_BIN}/initdb`,
    "-D",
    data,
    "-A",
    "trust",
    "-U",
    SUPERUSER,
    "-E",
    "UTF8",
    "--no-sync",
  ], asRoot));
  await initdb.catch(async (error) => {
    await Deno.remove(root, { recursive: true }).catch(() => {});
    throw error;
  });
  const port = freePort();
  const serverArgv = asServerUser([
    `${POSTGRES_BIN}/postgres`,
    "-D",
    data,
    "-k",
    root,
    "-h",
    "127.0.0.1",
    "-p",
    String(port),
    "-c",
    // Tests need no durability; the benchmark measures a durable server.
    `fsync=${options.durable === true ? "on" : "off"}`,
    "-c",
    "max_connections=100",
  ], asRoot);
  const child = new Deno.Command(serverArgv[0] as string, {
    args: serverArgv.slice(1),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  // Drain the server's log so it never blocks on a full pipe; keep the head for errors.
  let log = "";
  const drained = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      if (log.length < 20_000) log += decoder.decode(chunk);
    }
  })();
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });

  let stopped: Promise<void> | null = null;
  const stop = () => {
    stopped ??= (async () => {
      // Only a process we started and that is still ours to signal.
      if (!exited) {
        child.kill("SIGINT");
        const timer = setTimeout(() => {
          if (!exited) child.kill("SIGQUIT");
        }, 10_000);
        await status;
        clearTimeout(timer);
      }
      await drained;
      await Deno.remove(root, { recursive: true }).catch(() => {});
    })();
    return stopped;
  };

  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(`postgres exited at startup: ${log}`);
    }
    try {
      await run([`${POSTGRES_BIN}/pg_isready`, "-h", "127.0.0.1", "-p", String(port), "-q"]);
      break;
    } catch {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`postgres did not become ready: ${log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  return {
    port,
    async createDatabase(name: string) {
      if (!/^[a-z][a-z0-9_]{0,40}$/.test(name)) throw new RangeError(`bad database "${name}"`);
      await run([
        `${POSTGRES_BIN}/psql`,
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        SUPERUSER,
        "-d",
        "postgres",
        "-v",
        "ON_ERROR_STOP=1",
        "-qc",
        `CREATE DATABASE ${name}`,
      ]);
      return `postgres://${SUPERUSER}@127.0.0.1:${port}/${name}`;
    },
    stop,
  };
}

/** Counted so a run can say how many PostgreSQL test sets were skipped. */
let skipped = 0;

/**
 * Starts a server, or prints a loud, counted skip line and returns null.
 *
 * @param what The test set that would use it.
 */
export async function postgresOrSkip(what: string): Promise<PostgresServer | null> {
  const started = await startPostgres();
  if ("skip" in started) {
    skipped++;
    console.error(
      `\n!!! SKIPPED (${skipped}): ${what} against PostgreSQL: ${started.skip}. ` +
        "These tests prove the fleet backend; install the package to run them.\n",
    );
    return null;
  }
  return started;
}
