/**
 * `[sandbox]` through the real loader: the kernel sandbox is the default,
 * `mode = "none"` loads only with `accept_path_check_only = true` (and then
 * warns), and `user` is a name or a uid, never root.
 */
import assert from "node:assert/strict";
import { PATH_CHECK_ONLY_WARNING } from "../../src/sandbox/mod.ts";
import { assertLoaded, assertRefused, MINIMAL, withScratch } from "./_fixture.ts";

const NONE_REFUSAL =
  'Policy key "sandbox.mode" is "none", which runs commands without the kernel sandbox so the jail is only advisory; set [sandbox] accept_path_check_only = true to accept that, or use mode = "bwrap".';

Deno.test("loadPolicy() defaults to the kernel sandbox: mode bwrap, no opt-out, no user", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL));
    assert.deepEqual(policy.sandbox, {
      mode: "bwrap",
      network: "none",
      networkAllow: [],
      acceptPathCheckOnly: false,
      user: null,
    });
    assert.ok(!policy.warnings.some((w) => w.includes("SANDBOX")));
  });
});

Deno.test("loadPolicy() keeps auto as a name for bwrap", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(`${MINIMAL}[sandbox]\nmode = "auto"\n`));
    assert.equal(policy.sandbox.mode, "auto");
  });
});

Deno.test("loadPolicy() refuses mode none without accept_path_check_only, naming both keys", async () => {
  await withScratch(async (s) => {
    assertRefused(await s.load(`${MINIMAL}[sandbox]\nmode = "none"\n`), NONE_REFUSAL);
    assertRefused(
      await s.load(`${MINIMAL}[sandbox]\nmode = "none"\naccept_path_check_only = false\n`),
      NONE_REFUSAL,
    );
  });
});

Deno.test("loadPolicy() loads mode none with the opt-in and warns that the jail is advisory", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(`${MINIMAL}[sandbox]\nmode = "none"\naccept_path_check_only = true\n`),
    );
    assert.equal(policy.sandbox.mode, "none");
    assert.equal(policy.sandbox.acceptPathCheckOnly, true);
    assert.ok(policy.warnings.includes(PATH_CHECK_ONLY_WARNING), policy.warnings.join("\n"));
  });
});

Deno.test("loadPolicy() warns that accept_path_check_only does nothing while the sandbox is on", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(`${MINIMAL}[sandbox]\naccept_path_check_only = true\n`),
    );
    assert.ok(
      policy.warnings.includes(
        'Policy key "sandbox.accept_path_check_only" has no effect with mode = "bwrap": the kernel sandbox is on.',
      ),
    );
  });
});

Deno.test("loadPolicy() has no environment override that switches the sandbox off", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(MINIMAL, {
        HTMCP_SANDBOX_MODE: "none",
        HTMCP_ACCEPT_PATH_CHECK_ONLY: "true",
      }),
    );
    assert.equal(policy.sandbox.mode, "bwrap");
  });
});

Deno.test("loadPolicy() reads [sandbox] user as a name or a uid", async () => {
  await withScratch(async (s) => {
    const named = assertLoaded(await s.load(`${MINIMAL}[sandbox]\nuser = "htmcp"\n`));
    assert.equal(named.sandbox.user, "htmcp");
    const numbered = assertLoaded(await s.load(`${MINIMAL}[sandbox]\nuser = 1000\n`));
    assert.equal(numbered.sandbox.user, 1000);
    const digits = assertLoaded(await s.load(`${MINIMAL}[sandbox]\nuser = "1001"\n`));
    assert.equal(digits.sandbox.user, 1001);
  });
});

Deno.test("loadPolicy() refuses [sandbox] user = root, uid 0, and malformed names", async () => {
  await withScratch(async (s) => {
    const root =
      'Policy key "sandbox.user" names root: commands never run as root; name a service user that owns the jail instead.';
    assertRefused(await s.load(`${MINIMAL}[sandbox]\nuser = "root"\n`), root);
    assertRefused(await s.load(`${MINIMAL}[sandbox]\nuser = 0\n`), root);
    assertRefused(await s.load(`${MINIMAL}[sandbox]\nuser = "0"\n`), root);
    assertRefused(
      await s.load(`${MINIMAL}[sandbox]\nuser = "a b"\n`),
      'Policy key "sandbox.user" must be a user name or a uid, got "a b".',
    );
    const negative = await s.load(`${MINIMAL}[sandbox]\nuser = -1\n`);
    assert.ok(!negative.ok && /sandbox\.user/.test(negative.message), JSON.stringify(negative));
  });
});
