/**
 * Remote access as a person sets it up: the real htmcp CLI serves HTTP with
 * OAuth on 127.0.0.1, the real MCP SDK client starts the authorization flow,
 * and headless Chromium (driven by puppeteer-core in a child process) opens
 * the authorization URL, types the admin PIN and clicks Approve. Nothing
 * rewrites the browser's requests, so this proves the approval page works
 * with the headers a real browser sends (with `Referrer-Policy: no-referrer`
 * Chromium posted `Origin: null` and the approval was refused). The client
 * then exchanges the code and calls run_command.
 */
import { prepareJail } from "../_helpers/jail.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { type CliServer, startCliServer } from "../../scripts/conformance.ts";

const PIN = "larch-4-meadow-91";
const BROWSER = fileURLToPath(new URL("./_browser_approve.ts", import.meta.url));
const CHROMIUM = "/usr/bin/chromium";
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

/** A client provider whose "browser" is whatever `open` does with the URL. */
class BrowserProvider implements OAuthClientProvider {
  authorizationUrl: URL | null = null;
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = "";
  readonly #redirect: string;

  constructor(redirect: string) {
    this.#redirect = redirect;
  }
  get redirectUrl(): string {
    return this.#redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Browser E2E Client",
      redirect_uris: [this.#redirect],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state(): string {
    return crypto.randomUUID();
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.#client = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }
  codeVerifier(): string {
    return this.#verifier;
  }
}

/** The client's loopback redirect receiver, as a desktop MCP client runs one. */
function startCallback(): { url: string; code: Promise<string>; close(): Promise<void> } {
  let deliver: (code: string) => void = () => {};
  const code = new Promise<string>((resolve) => deliver = resolve);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const url = new URL(request.url);
    const value = url.searchParams.get("code");
    if (url.pathname === "/callback" && value !== null) deliver(value);
    return new Response("<!doctype html><title>done</title><p>You may close this window.</p>", {
      headers: { "content-type": "text/html" },
    });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/callback`,
    code,
    close: () => server.shutdown(),
  };
}

async function writeOAuthPolicy(dir: string): Promise<string> {
  await Deno.mkdir(join(dir, "jail"));
  await Deno.writeTextFile(join(dir, "jail", "notes.txt"), "approved in a browser\n");
  // Commands run in the kernel sandbox as the jail's owner: hand the jail to it.
  await prepareJail(join(dir, "jail"));
  const path = join(dir, "policy.toml");
  await Deno.writeTextFile(
    path,
    `jail_root = "jail"
audit_log = "audit.jsonl"
state_dir = "state"

[allowlist]
commands = ["cat", "echo"]

[auth]
mode = "oauth"
`,
  );
  return path;
}

async function auditRecords(dir: string): Promise<Record<string, unknown>[]> {
  return (await Deno.readTextFile(join(dir, "audit.jsonl"))).split("\n").filter((l) => l !== "")
    .map((l) => JSON.parse(l));
}

async function withOAuthServer(fn: (server: CliServer, dir: string) => Promise<void>) {
  await Deno.stat(CHROMIUM); // the test needs the real browser: fail loudly without it
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-browser-" }));
  const server = await startCliServer(await writeOAuthPolicy(dir), {
    HTMCP_OAUTH_ADMIN_PIN: PIN,
  });
  try {
    await fn(server, dir);
  } finally {
    server.child.kill("SIGTERM");
    await server.child.status;
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("headless Chromium approves with the PIN, and the SDK client gets a token and runs a command", async () => {
  await withOAuthServer(async (server, dir) => {
    const callback = startCallback();
    try {
      const provider = new BrowserProvider(callback.url);
      const mcpUrl = new URL(server.url);
      const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
      const probe = new Client({ name: "browser-e2e", version: "0" });
      await assert.rejects(probe.connect(first), UnauthorizedError);
      await probe.close();
      assert.ok(provider.authorizationUrl !== null, "the SDK asked to open a browser");

      // The operator's browser: a real Chromium, no request interception.
      const screenshot = join(dir, "approval.png");
      const browser = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--quiet",
          "-A",
          "--config",
          CONFIG,
          BROWSER,
          provider.authorizationUrl.href,
          PIN,
          screenshot,
          callback.url,
        ],
        stdin: "null",
      }).output();
      const browserErr = new TextDecoder().decode(browser.stderr);
      assert.equal(browser.code, 0, `${browserErr}\nserver:\n${server.stderr()}`);
      const seen = JSON.parse(new TextDecoder().decode(browser.stdout)) as {
        finalUrl: string;
        approvalStatus: number;
        approvalOrigin: string | null;
      };
      assert.equal(seen.approvalStatus, 303, "the approval post redirected to the client");
      // The page's referrer policy keeps the real Origin on its own form post.
      assert.equal(seen.approvalOrigin, mcpUrl.origin);
      assert.ok((await Deno.stat(screenshot)).size > 1000, "a screenshot of the page was taken");
      const keep = Deno.env.get("HTMCP_KEEP_SCREENSHOT");
      if (keep !== undefined) await Deno.copyFile(screenshot, keep);

      const code = await callback.code;
      assert.equal(new URL(seen.finalUrl).searchParams.get("code"), code);
      await first.finishAuth(code);

      const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
      const client = new Client({ name: "browser-e2e", version: "0" });
      await client.connect(transport);
      try {
        const result = await client.callTool({
          name: "run_command",
          arguments: { command: "cat notes.txt" },
        });
        const body = result.structuredContent as { code: string; stdout: string };
        assert.equal(body.code, "OK", JSON.stringify(body));
        assert.equal(body.stdout, "approved in a browser\n");
      } finally {
        await transport.terminateSession().catch(() => {});
        await client.close();
      }

      const events = (await auditRecords(dir)).map((r) => r.event);
      for (const kind of ["client_registered", "client_approved", "code_issued", "token_issued"]) {
        assert.ok(events.includes(kind), kind);
      }
      assert.ok(!events.includes("approval_refused"));
      assert.ok(!events.includes("http_forbidden"));
      assert.doesNotMatch(server.stderr(), /approval refused/);
    } finally {
      await callback.close();
    }
  });
});

Deno.test("through the real server, an Origin null approval post without the form token is refused and printed", async () => {
  await withOAuthServer(async (server, dir) => {
    const base = new URL(server.url).origin;
    const register = await fetch(`${base}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "Null Origin Client",
        redirect_uris: ["http://127.0.0.1:45999/callback"],
        token_endpoint_auth_method: "none",
      }),
    });
    const { client_id } = await register.json() as { client_id: string };
    const params = new URLSearchParams({
      response_type: "code",
      client_id,
      redirect_uri: "http://127.0.0.1:45999/callback",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      state: "s1",
      resource: `${base}/mcp`,
    });
    const page = await fetch(`${base}/authorize?${params}`);
    assert.equal(page.status, 200);
    const txn = /name="txn" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
    const posted = await fetch(`${base}/authorize`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "null" },
      body: new URLSearchParams({ txn, pin: PIN, decision: "approve" }),
      redirect: "manual",
    });
    // Judged by the authorization server (an HTML page), not by the Origin
    // header alone (the transport's JSON forbidden_origin).
    assert.equal(posted.status, 403);
    assert.equal(posted.headers.get("location"), null);
    assert.match(posted.headers.get("content-type") ?? "", /text\/html/);
    assert.match(await posted.text(), /form token/);
    // Any other route still refuses Origin null outright.
    const token = await fetch(`${base}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "null" },
      body: "grant_type=authorization_code",
    });
    assert.equal(token.status, 403);
    assert.equal((await token.json()).error, "forbidden_origin");

    for (let i = 0; i < 100 && !/approval refused/.test(server.stderr()); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const lines = server.stderr().split("\n").filter((l) => l.includes("approval refused"));
    assert.equal(lines.length, 1, server.stderr());
    assert.match(
      lines[0] ?? "",
      /^htmcp: approval refused from 127\.0\.0\.1 for client "Null Origin Client" \(\S+\): missing, wrong or reused form token, Origin null\.$/,
    );
    assert.ok(!server.stderr().includes(PIN));
    const records = await auditRecords(dir);
    const refused = records.filter((r) => r.event === "approval_refused");
    assert.deepEqual(refused.map((r) => [r.reason, r.origin, r.client_id]), [
      ["bad_form_token", "null", client_id],
    ]);
    assert.ok(!records.some((r) => r.event === "code_issued"));
  });
});
