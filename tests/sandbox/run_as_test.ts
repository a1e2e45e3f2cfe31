/**
 * `chooseRunAs`: who commands run as, decided from the server's uid, the
 * jail's owner and `[sandbox] user`. Never root, and for a non-root server
 * only itself.
 */
import assert from "node:assert/strict";
import { chooseRunAs, type RunAsFacts } from "../../src/sandbox/mod.ts";

const JAIL = "/srv/htmcp/jail";

function facts(over: Partial<RunAsFacts>): RunAsFacts {
  return {
    serverUid: 0,
    jailRoot: JAIL,
    jailOwner: { uid: 1000, gid: 1000 },
    configuredLabel: null,
    configured: null,
    ...over,
  };
}

Deno.test("chooseRunAs() runs a root server's commands as the jail's owner and primary group", () => {
  assert.deepEqual(chooseRunAs(facts({ jailOwner: { uid: 1000, gid: 1500 } })), {
    ok: true,
    runAs: { uid: 1000, gid: 1500 },
    source: "the jail's owner",
  });
});

Deno.test("chooseRunAs() uses the uid's own number as gid when the owner has no passwd entry", () => {
  const choice = chooseRunAs(facts({ jailOwner: { uid: 4242, gid: null } }));
  assert.ok(choice.ok);
  assert.deepEqual(choice.runAs, { uid: 4242, gid: 4242 });
});

Deno.test("chooseRunAs() prefers [sandbox] user over the jail's owner", () => {
  const choice = chooseRunAs(
    facts({ configuredLabel: '"htmcp"', configured: { uid: 999, gid: 998 } }),
  );
  assert.deepEqual(choice, { ok: true, runAs: { uid: 999, gid: 998 }, source: "[sandbox] user" });
});

Deno.test("chooseRunAs() refuses a root server with a root-owned jail and no [sandbox] user, saying the fix", () => {
  assert.deepEqual(chooseRunAs(facts({ jailOwner: { uid: 0, gid: 0 } })), {
    ok: false,
    message:
      `Cannot start: the server runs as root and the jail root "${JAIL}" is owned by root, and commands never run as root; chown the jail to a service user (for example "chown -R htmcp: ${JAIL}") or set [sandbox] user to a user that may write it.`,
  });
});

Deno.test("chooseRunAs() refuses a [sandbox] user that resolves to uid 0 or to group root", () => {
  const toor = chooseRunAs(facts({ configuredLabel: '"toor"', configured: { uid: 0, gid: 0 } }));
  assert.ok(!toor.ok && /uid 0, and commands never run as root/.test(toor.message));
  const group = chooseRunAs(
    facts({ configuredLabel: '"ops"', configured: { uid: 1200, gid: 0 } }),
  );
  assert.ok(!group.ok && /primary group .* is root \(gid 0\)/.test(group.message));
});

Deno.test("chooseRunAs() keeps a non-root server's own uid, whoever owns the jail", () => {
  assert.deepEqual(chooseRunAs(facts({ serverUid: 1000, jailOwner: { uid: 0, gid: 0 } })), {
    ok: true,
    runAs: null,
    source: "the server's own uid",
  });
  const self = chooseRunAs(
    facts({ serverUid: 1000, configuredLabel: "1000", configured: { uid: 1000, gid: 1000 } }),
  );
  assert.ok(self.ok && self.runAs === null);
});

Deno.test("chooseRunAs() refuses a non-root server's [sandbox] user naming another uid", () => {
  assert.deepEqual(
    chooseRunAs(
      facts({
        serverUid: 1000,
        configuredLabel: '"nobody"',
        configured: { uid: 65534, gid: 65534 },
      }),
    ),
    {
      ok: false,
      message:
        `Cannot start: [sandbox] user = "nobody" (uid 65534) is not the server's own uid 1000, and a non-root server can only run commands as itself; remove [sandbox] user or start the server as that user.`,
    },
  );
});
