/**
 * `[state]` through the real loader: local by default (the policy hashes as
 * before), PostgreSQL only with a URL from HTMCP_STATE_URL or an owner-only
 * url_file, never from the policy; bad values are refused with the key named
 * and the URL (which holds a password) never quoted. The permission set
 * grants the database's host:port and the url_file only with that backend.
 */
import assert from "node:assert/strict";
import { assertLoaded, assertRefused, MINIMAL, withScratch } from "./_fixture.ts";
import { permissionSetFor } from "../../src/permissions/mod.ts";
import { parseStateUrl } from "../../src/config/state.ts";

const URL_ENV = { HTMCP_STATE_URL: "postgres://htmcp:s3cret-pw@127.0.0.1:6543/fleet" };

Deno.test("a policy without [state] keeps the local backend and no state key at all", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL));
    assert.equal(policy.state, undefined);
    const local = assertLoaded(await s.load(`${MINIMAL}[state]\nbackend = "local"\n`));
    assert.deepEqual(local.state, { backend: "local" });
  });
});

Deno.test("backend postgres takes host and port from HTMCP_STATE_URL, and keeps no URL in the policy", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(`${MINIMAL}[state]\nbackend = "postgres"\n`, URL_ENV));
    assert.deepEqual(policy.state, {
      backend: "postgres",
      urlFile: null,
      host: "127.0.0.1",
      port: 6543,
    });
    assert.ok(!JSON.stringify(policy).includes("s3cret-pw"));
  });
});

Deno.test("bad [state] values are refused with the key named", async () => {
  await withScratch(async (s) => {
    const bad = await s.load(`${MINIMAL}[state]\nbackend = "redis"\n`, URL_ENV);
    assert.ok(!bad.ok);
    assert.match(bad.message, /state\.backend/);
    assert.match(bad.message, /"local" or "postgres"/);
    const unknown = await s.load(`${MINIMAL}[state]\nbackend = "postgres"\nurl = "x"\n`, URL_ENV);
    assert.ok(!unknown.ok);
    assert.match(unknown.message, /url/);
    assertRefused(
      await s.load(`${MINIMAL}[state]\nurl_file = "db.url"\n`, URL_ENV),
      'Policy key "state.url_file" is set, but "state.backend" is not "postgres".',
    );
    assertRefused(
      await s.load(`${MINIMAL}[state]\nbackend = "postgres"\n`),
      'Policy key "state.backend" is "postgres", but neither HTMCP_STATE_URL nor "state.url_file" gives the database URL.',
    );
  });
});

Deno.test("a url_file others can read is refused (it holds the password); an owner-only one loads and is granted read", async () => {
  await withScratch(async (s) => {
    const url = "postgres://htmcp:pw-in-file@db.internal:5432/fleet?sslmode=verify-full\n";
    const open = await s.write("db.url", url, 0o644);
    const toml = `${MINIMAL}[state]\nbackend = "postgres"\nurl_file = "db.url"\n`;
    assertRefused(
      await s.load(toml),
      `Policy key "state.url_file": "${open}" is readable by other users and holds the database password; run chmod 600 on it.`,
    );
    await Deno.chmod(open, 0o600);
    const policy = assertLoaded(await s.load(toml));
    assert.deepEqual(policy.state, {
      backend: "postgres",
      urlFile: open,
      host: "db.internal",
      port: 5432,
    });
    const set = permissionSetFor(policy, { transport: "stdio", launcherPaths: [] });
    assert.ok(set.ok);
    assert.deepEqual(set.set.net.map((g) => g.value), ["db.internal:5432"]);
    assert.ok(set.set.read.some((g) => g.value === open));
  });
});

Deno.test("the local backend grants no outbound address", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL));
    const set = permissionSetFor(policy, { transport: "stdio", launcherPaths: [] });
    assert.ok(set.ok);
    assert.deepEqual(set.set.net, []);
  });
});

Deno.test("parseStateUrl() needs a user and a database, knows only sslmode, and never quotes the URL", () => {
  const refusals: [string, RegExp][] = [
    ["not a url", /is not a URL/],
    ["mysql://u@h/db", /must start with postgres:\/\//],
    ["postgres://h:5432/db", /names no user/],
    ["postgres://u:pw@h:5432/", /names no database/],
    ["postgres://u:pw@h/db?host=/tmp", /parameter "host"; only sslmode/],
    ["postgres://u:pw@h/db?sslmode=prefer", /sslmode="prefer"; use "disable" or "verify-full"/],
  ];
  for (const [text, pattern] of refusals) {
    const parsed = parseStateUrl(text);
    assert.ok(!parsed.ok, text);
    assert.match(parsed.message, pattern);
    assert.ok(!parsed.message.includes("pw"), parsed.message);
  }
  // TLS: off on loopback by default, verified anywhere else unless disabled.
  const loop = parseStateUrl("postgres://u@127.0.0.1/db");
  assert.ok(loop.ok && loop.value.tls === "disable" && loop.value.port === 5432);
  const remote = parseStateUrl("postgresql://u@db.example/db");
  assert.ok(remote.ok && remote.value.tls === "verify-full");
  const off = parseStateUrl("postgres://u@db.example/db?sslmode=disable");
  assert.ok(off.ok && off.value.tls === "disable");
});
