/**
 * File download links with real parts: `serveHttp` on 127.0.0.1 with OAuth
 * on, the real SDK client making links through the whole OAuth flow, and a
 * real `fetch` downloading them. The links read files in the server's own
 * process (no command runs, so the kernel sandbox is not what is tested);
 * the proofs are the bytes served, the headers, the refusal codes, the
 * state directory's contents and the audit log.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { MCP_POST_HEADERS, PIN, withHttp } from "../transport/http/_harness.ts";
import type { HttpHarness } from "../transport/http/_harness.ts";
import { connectWithOAuth, type OAuthConnection } from "../transport/http/_oauth.ts";

type LinkResult = {
  ok: boolean;
  code: string;
  reason: string;
  link_id: string | null;
  url: string | null;
  expires_at: string | null;
  sha256: string | null;
  size: number | null;
};

type LinkList = { ok: boolean; code: string; links: { link_id: string; downloads: number }[] };

async function call<T>(conn: OAuthConnection, name: string, args: Record<string, unknown>) {
  const result = await conn.client.callTool({ name, arguments: args });
  const structured = result.structuredContent as T;
  // The text carries the same result (clients that drop structuredContent on errors).
  const text = (result.content as { type: string; text: string }[])[0]?.text ?? "";
  assert.deepEqual(JSON.parse(text), structured);
  return structured;
}

const link = (conn: OAuthConnection, args: Record<string, unknown>) =>
  call<LinkResult>(conn, "create_file_link", args);

function sha256(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Snapshot files and records in the state dir (the canary for "nothing was made"). */
async function stateFiles(h: HttpHarness): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(join(h.stateDir, "links"))) {
      if (entry.name !== ".lock") names.push(entry.name);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return names.sort();
}

/** A 404 with no body, and exactly the headers every refused download gets. */
async function assertBare404(url: string): Promise<string[]> {
  const response = await fetch(url);
  const body = new Uint8Array(await response.arrayBuffer());
  assert.equal(response.status, 404, url);
  assert.equal(body.byteLength, 0, "a refused download has an empty body");
  return [...response.headers.keys()].filter((name) => name !== "date").sort();
}

async function withLinks(
  options: Parameters<typeof withHttp>[0],
  fn: (h: HttpHarness, conn: OAuthConnection) => Promise<void>,
): Promise<void> {
  await withHttp(options, async (h) => {
    const conn = await connectWithOAuth(h.mcpUrl, PIN);
    try {
      await fn(h, conn);
    } finally {
      await conn.close();
    }
  });
}

Deno.test("a link serves the snapshot's exact bytes with every protective header, and keeps serving the snapshot after the file changes", async () => {
  await withLinks({}, async (h, conn) => {
    const original = "first version\n";
    await Deno.writeTextFile(join(h.jail, "report.txt"), original);
    const made = await link(conn, { path: "report.txt" });
    assert.equal(made.code, "OK", made.reason);
    assert.equal(made.ok, true);
    assert.equal(made.sha256, sha256(original));
    assert.equal(made.size, original.length);
    assert.match(made.link_id ?? "", /^lnk_[0-9a-f]{24}$/);
    const prefix = `${h.server.baseUrl}/download/`;
    assert.ok(made.url?.startsWith(prefix), made.url ?? "");
    const token = (made.url as string).slice(prefix.length);
    assert.match(token, /^[A-Za-z0-9_-]{43}$/, "32 random bytes, base64url");
    const expires = Date.parse(made.expires_at as string) - Date.now();
    assert.ok(expires > 3_500_000 && expires <= 3_600_000, "the default lifetime is an hour");

    const first = await fetch(made.url as string);
    assert.equal(first.status, 200);
    assert.equal(await first.text(), original);
    assert.equal(first.headers.get("content-type"), "application/octet-stream");
    assert.equal(
      first.headers.get("content-disposition"),
      `attachment; filename="report.txt"; filename*=UTF-8''report.txt`,
    );
    assert.equal(first.headers.get("content-length"), String(original.length));
    assert.equal(first.headers.get("x-content-type-options"), "nosniff");
    assert.equal(first.headers.get("referrer-policy"), "no-referrer");
    assert.equal(first.headers.get("cache-control"), "private, no-store");
    assert.equal(first.headers.get("content-security-policy"), "sandbox");

    await Deno.writeTextFile(join(h.jail, "report.txt"), "SECOND VERSION, longer than the first\n");
    const again = await fetch(made.url as string);
    assert.equal(await again.text(), original, "the link serves the snapshot, not the file");

    // The token is stored only as its hash: neither the state dir nor the audit log holds it.
    for (const name of await stateFiles(h)) {
      const bytes = await Deno.readFile(join(h.stateDir, "links", name));
      assert.ok(!new TextDecoder().decode(bytes).includes(token), `${name} holds no token`);
    }
    assert.ok(!(await Deno.readTextFile(h.auditPath)).includes(token), "the log holds no token");

    const created = await h.events("link_created");
    const clientId = conn.provider.clientInformation()?.client_id;
    assert.equal(created.length, 1);
    assert.equal(created[0]?.client_id, clientId);
    assert.equal(created[0]?.link_id, made.link_id);
    assert.equal(created[0]?.path, "report.txt");
    assert.equal(created[0]?.sha256, made.sha256);
    assert.equal(created[0]?.size, made.size);
    const downloads = await h.events("link_downloaded");
    assert.deepEqual(downloads.map((e) => [e.link_id, e.downloads, e.sha256, e.client_id]), [
      [made.link_id, 1, made.sha256, clientId],
      [made.link_id, 2, made.sha256, clientId],
    ]);
  });
});

Deno.test("an inline link shows text as text/plain and anything else as bytes, sandboxed, with a safely encoded file name", async () => {
  await withLinks({}, async (h, conn) => {
    const name = 'résumé "draft";x.txt';
    await Deno.writeTextFile(join(h.jail, name), "plain words\n");
    await Deno.writeFile(join(h.jail, "blob.bin"), new Uint8Array([0xff, 0x00, 0xfe, 0x3c]));
    const text = await link(conn, { path: name, inline: true });
    assert.equal(text.code, "OK", text.reason);
    const shown = await fetch(text.url as string);
    assert.equal(await shown.text(), "plain words\n");
    assert.equal(shown.headers.get("content-type"), "text/plain; charset=utf-8");
    assert.equal(shown.headers.get("content-security-policy"), "sandbox");
    assert.equal(shown.headers.get("x-content-type-options"), "nosniff");
    assert.equal(
      shown.headers.get("content-disposition"),
      `inline; filename="r_sum_ _draft__x.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22draft%22%3Bx.txt`,
    );
    const bytes = await link(conn, { path: "blob.bin", inline: true });
    const served = await fetch(bytes.url as string);
    assert.deepEqual(new Uint8Array(await served.arrayBuffer()), new Uint8Array([255, 0, 254, 60]));
    assert.equal(served.headers.get("content-type"), "application/octet-stream");
  });
});

Deno.test("expired, used-up, revoked, guessed and malformed tokens all get the same bare 404", async () => {
  await withLinks({}, async (h, conn) => {
    await Deno.writeTextFile(join(h.jail, "a.txt"), "a\n");
    const once = await link(conn, { path: "a.txt", max_downloads: 1 });
    assert.equal((await fetch(once.url as string)).status, 200);
    const headerSets = [await assertBare404(once.url as string)];

    const revoked = await link(conn, { path: "a.txt" });
    const done = await call<LinkResult>(conn, "revoke_file_link", { link_id: revoked.link_id });
    assert.equal(done.code, "OK", done.reason);
    headerSets.push(await assertBare404(revoked.url as string));

    const short = await link(conn, { path: "a.txt", ttl_s: 1 });
    const shortId = short.link_id as string;
    assert.ok((await stateFiles(h)).includes(`${shortId}.snapshot`));
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    headerSets.push(await assertBare404(short.url as string));
    assert.ok(!(await stateFiles(h)).includes(`${shortId}.snapshot`), "expired snapshot deleted");

    const base = `${h.server.baseUrl}/download/`;
    const guessed = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))
      .replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
    headerSets.push(await assertBare404(base + guessed));
    for (const junk of ["abc", `${guessed}A`, "%2e%2e%2f%2e%2e%2fetc%2fpasswd", ""]) {
      headerSets.push(await assertBare404(base + junk));
    }
    for (const headers of headerSets) assert.deepEqual(headers, headerSets[0]);

    const refused = await h.events("link_download_refused");
    assert.ok(refused.some((e) => e.reason === "expired" && e.link_id === shortId));
    assert.ok(refused.some((e) => e.reason === "malformed"));
    assert.ok(refused.some((e) => e.reason === "unknown"));
    assert.equal((await h.events("link_expired")).at(-1)?.link_id, shortId);
    const revokedEvent = await h.events("link_revoked");
    assert.deepEqual(revokedEvent.map((e) => [e.link_id, e.path, e.sha256]), [
      [revoked.link_id, "a.txt", sha256("a\n")],
    ]);
    const log = await Deno.readTextFile(h.auditPath);
    for (const made of [once, revoked, short]) {
      assert.ok(!log.includes((made.url as string).slice(base.length)), "no token in the log");
    }
  });
});

Deno.test("concurrent downloads never exceed max_downloads", async () => {
  await withLinks({}, async (h, conn) => {
    await Deno.writeTextFile(join(h.jail, "c.txt"), "c".repeat(50_000));
    const made = await link(conn, { path: "c.txt", max_downloads: 3 });
    const responses = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const response = await fetch(made.url as string);
        const body = await response.text();
        return { status: response.status, length: body.length };
      }),
    );
    const served = responses.filter((r) => r.status === 200);
    assert.equal(served.length, 3);
    assert.ok(served.every((r) => r.length === 50_000));
    assert.equal(responses.filter((r) => r.status === 404).length, 5);
    assert.equal((await h.events("link_downloaded")).length, 3);
  });
});

Deno.test("symlinks (out of the jail or inside it), folders, paths outside the jail and files over the bound are refused with their codes, make nothing, and are audited", async () => {
  await withLinks({ links: { maxFileBytes: 1024 } }, async (h, conn) => {
    const outside = join(h.dir, "outside-secret.txt");
    await Deno.writeTextFile(outside, "outside canary\n");
    await Deno.writeTextFile(join(h.jail, "inside.txt"), "inside\n");
    await Deno.mkdir(join(h.jail, "folder"));
    await Deno.writeTextFile(join(h.jail, "folder", "x.txt"), "x\n");
    await Deno.symlink(outside, join(h.jail, "out-link"));
    await Deno.symlink("inside.txt", join(h.jail, "in-link"));
    await Deno.symlink("folder", join(h.jail, "folder-link"));
    await Deno.writeFile(join(h.jail, "big.bin"), new Uint8Array(1025));
    await Deno.writeFile(join(h.jail, "exact.bin"), new Uint8Array(1024));
    const before = await stateFiles(h);

    const cases: [string, string][] = [
      ["out-link", "SYMLINK_REFUSED"],
      ["in-link", "SYMLINK_REFUSED"],
      ["folder-link/x.txt", "SYMLINK_REFUSED"],
      ["folder", "NOT_A_REGULAR_FILE"],
      [".", "NOT_A_REGULAR_FILE"],
      ["missing.txt", "NOT_A_REGULAR_FILE"],
      [outside, "PATH_ESCAPE"],
      ["/etc/passwd", "PATH_ESCAPE"],
      ["../outside-secret.txt", "PATH_ESCAPE"],
      ["folder/../inside.txt", "PATH_ESCAPE"],
      ["big.bin", "FILE_TOO_LARGE"],
    ];
    for (const [path, code] of cases) {
      const refused = await link(conn, { path });
      assert.equal(refused.code, code, `${path}: ${refused.reason}`);
      assert.equal(refused.ok, false);
      assert.equal(refused.url, null);
      if (!path.includes("outside")) {
        assert.ok(!refused.reason.includes(outside), "a refusal never says where a link leads");
      }
    }
    assert.deepEqual(await stateFiles(h), before, "no snapshot or record was made");
    assert.equal(await Deno.readTextFile(outside), "outside canary\n");
    const audited = await h.events("link_refused");
    assert.deepEqual(audited.map((e) => [e.path, e.result]), cases);

    const exact = await link(conn, { path: "exact.bin" });
    assert.equal(exact.code, "OK", "a file of exactly max_file_bytes is linked");
    const nested = await link(conn, { path: "folder/x.txt" });
    assert.equal(nested.code, "OK", nested.reason);
    assert.equal(await (await fetch(nested.url as string)).text(), "x\n");
  });
});

Deno.test("another caller can neither list nor revoke a link; it keeps working for its owner's URL", async () => {
  await withLinks({}, async (h, alice) => {
    await Deno.writeTextFile(join(h.jail, "mine.txt"), "alice's\n");
    const made = await link(alice, { path: "mine.txt" });
    const bob = await connectWithOAuth(h.mcpUrl, PIN);
    try {
      const bobList = await call<LinkList>(bob, "list_file_links", {});
      assert.equal(bobList.code, "OK");
      assert.deepEqual(bobList.links, []);
      const bobRevoke = await call<LinkResult>(bob, "revoke_file_link", {
        link_id: made.link_id,
      });
      assert.equal(bobRevoke.code, "LINK_NOT_FOUND");
      const unknown = await call<LinkResult>(bob, "revoke_file_link", {
        link_id: "lnk_000000000000000000000000",
      });
      assert.equal(unknown.code, "LINK_NOT_FOUND");
      assert.equal(
        unknown.reason.replace("lnk_000000000000000000000000", made.link_id as string),
        bobRevoke.reason,
        "another's id reads exactly like an unknown one",
      );
    } finally {
      await bob.close();
    }
    const aliceList = await call<LinkList>(alice, "list_file_links", {});
    assert.deepEqual(aliceList.links.map((l) => [l.link_id, l.downloads]), [[made.link_id, 0]]);
    assert.equal(await (await fetch(made.url as string)).text(), "alice's\n");
    assert.equal((await h.events("link_revoked")).length, 0);
    assert.ok((await h.events("link_refused")).some((e) => e.result === "LINK_NOT_FOUND"));
  });
});

Deno.test("a token without shell:read is refused create_file_link with 403 and no link is made", async () => {
  await withHttp({}, async (h) => {
    await Deno.writeTextFile(join(h.jail, "r.txt"), "r\n");
    const conn = await connectWithOAuth(h.mcpUrl, PIN, "shell:execute");
    try {
      const token = (await conn.provider.tokens())?.access_token as string;
      const response = await fetch(h.mcpUrl, {
        method: "POST",
        headers: {
          ...MCP_POST_HEADERS,
          authorization: `Bearer ${token}`,
          "mcp-session-id": conn.transport.sessionId as string,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 9,
          method: "tools/call",
          params: { name: "create_file_link", arguments: { path: "r.txt" } },
        }),
      });
      assert.equal(response.status, 403);
      assert.equal((await response.json()).error, "insufficient_scope");
      assert.deepEqual(await stateFiles(h), []);
      assert.equal((await h.events("scope_denied")).at(-1)?.tool, "create_file_link");
    } finally {
      await conn.close();
    }
  });
});

Deno.test("with [links] enabled = false there are no link tools and /download/ is not served", async () => {
  await withLinks({ links: { enabled: false } }, async (h, conn) => {
    const { tools } = await conn.client.listTools();
    const names = tools.map((t: { name: string }) => t.name);
    assert.ok(!names.includes("create_file_link") && !names.includes("list_file_links"));
    const response = await fetch(`${h.server.baseUrl}/download/${"A".repeat(43)}`);
    const body = await response.json();
    assert.equal(response.status, 404);
    assert.equal(body.error, "not_found");
    assert.ok(!JSON.stringify(body).includes("A".repeat(43)), "the token is not echoed");
  });
});

Deno.test("the link tools carry a title and all four annotations; a non-GET download is 405 without a lookup; a foreign Origin is refused and its audit record masks the token", async () => {
  await withLinks({}, async (h, conn) => {
    const { tools } = await conn.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    const expected: Record<string, [boolean, boolean, boolean, boolean]> = {
      create_file_link: [false, false, false, true],
      list_file_links: [true, false, true, false],
      revoke_file_link: [false, true, true, false],
    };
    for (const [name, [readOnly, destructive, idempotent, openWorld]] of Object.entries(expected)) {
      const tool = byName.get(name);
      assert.ok(tool?.title !== undefined && tool.title.length > 0, `${name} has a title`);
      assert.deepEqual(tool?.annotations, {
        readOnlyHint: readOnly,
        destructiveHint: destructive,
        idempotentHint: idempotent,
        openWorldHint: openWorld,
      });
    }

    await Deno.writeTextFile(join(h.jail, "m.txt"), "m\n");
    const made = await link(conn, { path: "m.txt", max_downloads: 1 });
    const token = (made.url as string).slice(`${h.server.baseUrl}/download/`.length);
    for (const method of ["POST", "PUT", "DELETE", "HEAD"]) {
      const response = await fetch(made.url as string, { method });
      await response.body?.cancel();
      assert.equal(response.status, 405, method);
      assert.equal(response.headers.get("allow"), "GET");
    }
    const foreign = await fetch(made.url as string, {
      headers: { origin: "https://evil.example" },
    });
    await foreign.body?.cancel();
    assert.equal(foreign.status, 403);
    const forbidden = await h.events("http_forbidden");
    assert.equal(forbidden.at(-1)?.path, "/download/{token}");
    // None of those counted: the one allowed download is still there.
    assert.equal((await fetch(made.url as string)).status, 200);
    assert.ok(!(await Deno.readTextFile(h.auditPath)).includes(token), "no token in the log");
  });
});

Deno.test("with a closed audit log that cannot be written, no link is made and no byte is served", async () => {
  await withLinks({}, async (h, conn) => {
    await Deno.writeTextFile(join(h.jail, "s.txt"), "secret-ish\n");
    const made = await link(conn, { path: "s.txt" });
    assert.equal(made.code, "OK");
    const before = await stateFiles(h);
    await Deno.remove(h.auditPath);
    const refused = await conn.client.callTool({
      name: "create_file_link",
      arguments: { path: "s.txt" },
    });
    const code = (refused.structuredContent as { code?: string } | undefined)?.code;
    assert.equal(refused.isError, true);
    assert.equal(code, "AUDIT_UNAVAILABLE");
    assert.deepEqual(await stateFiles(h), before, "no new link or snapshot");
    const response = await fetch(made.url as string);
    assert.equal(response.status, 503);
    assert.equal((await response.arrayBuffer()).byteLength, 0, "nothing unrecorded leaves");
  });
});

Deno.test("a ttl_s above max_ttl_s is refused by the input schema and makes nothing", async () => {
  await withLinks({ links: { maxTtlMs: 600_000, defaultTtlMs: 600_000 } }, async (h, conn) => {
    await Deno.writeTextFile(join(h.jail, "t.txt"), "t\n");
    const before = await stateFiles(h);
    const result = await conn.client.callTool({
      name: "create_file_link",
      arguments: { path: "t.txt", ttl_s: 601 },
    }).catch((error: unknown) => ({ isError: true, error }));
    assert.equal(result.isError, true);
    assert.deepEqual(await stateFiles(h), before);
    const ok = await link(conn, { path: "t.txt", ttl_s: 600 });
    assert.equal(ok.code, "OK");
  });
});
