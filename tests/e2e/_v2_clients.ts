/**
 * The SDK v2 client (`@modelcontextprotocol/client`) connected to the real
 * htmcp server, in either protocol era: over stdio (the server started
 * through the launcher, under its generated permission set) or over HTTP.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { LAUNCH, policyToml, serverEnv } from "../_helpers/stdio_harness.ts";
import { prepareJail } from "../_helpers/jail.ts";

/** `2025`: the plain `initialize` handshake; `2026-07-28`: pinned stateless era. */
export type Era = "2025" | "2026-07-28";

/** A v2 client pinned to `era`. */
export function v2Client(era: Era): Client {
  return new Client(
    { name: "htmcp-e2e-v2", version: "1.0.0" },
    era === "2025"
      ? { versionNegotiation: { mode: "legacy" } }
      : { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
}

/** A stdio server in a fresh temp folder, with the v2 client connected. */
export interface V2StdioHarness {
  readonly client: Client;
  readonly dir: string;
  readonly jail: string;
  readonly auditLog: string;
  records(): Promise<Record<string, unknown>[]>;
  stderr(): string;
  close(): Promise<void>;
}

/** Starts the server over stdio and connects a v2 client in `era`. */
export async function startV2Stdio(
  era: Era,
  options: {
    allow?: readonly string[];
    extraToml?: string;
    /** A client built by the test (capabilities, handlers), connected here; else `v2Client(era)`. */
    client?: Client;
  } = {},
): Promise<V2StdioHarness> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-e2e-v2-" }));
  const jail = `${dir}/jail`;
  await Deno.mkdir(jail);
  await prepareJail(jail);
  const auditLog = `${dir}/audit.jsonl`;
  const policyPath = `${dir}/policy.toml`;
  await Deno.writeTextFile(
    policyPath,
    policyToml(jail, auditLog, {
      ...(options.allow === undefined ? {} : { allow: options.allow }),
      topToml: `state_dir = ${JSON.stringify(`${dir}/state`)}`,
      ...(options.extraToml === undefined ? {} : { extraToml: options.extraToml }),
    }),
  );
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "--quiet", "--allow-all", LAUNCH, "serve", "--policy", policyPath],
    env: serverEnv(dir),
    stderr: "pipe",
  });
  let stderrText = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => {
    stderrText += new TextDecoder().decode(chunk);
  });
  const client = options.client ?? v2Client(era);
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`server did not start: ${stderrText}`, { cause: error });
  }
  return {
    client,
    dir,
    jail,
    auditLog,
    async records() {
      const text = await Deno.readTextFile(auditLog).catch(() => "");
      return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
    },
    stderr: () => stderrText,
    async close() {
      await client.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** Connects a v2 client in `era` to an HTTP server at `url`. */
export async function connectV2Http(url: string, era: Era): Promise<Client> {
  const client = v2Client(era);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}
