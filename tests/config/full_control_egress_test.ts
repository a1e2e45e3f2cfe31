/**
 * `[mode] full_control` and `[sandbox] network`/`network_allow`: defaults,
 * the older boolean spelling, and every bad value refused at startup with
 * one sentence naming the key.
 */
import assert from "node:assert/strict";
import { assertLoaded, assertRefused, MINIMAL, withScratch } from "./_fixture.ts";
import { FULL_CONTROL_WARNING } from "../../src/full_control/mod.ts";
import { FULL_CONTROL_RLIMITS } from "../../src/config/mod.ts";
import { permissionSetFor } from "../../src/permissions/mod.ts";
import { egressSocketDir, egressSocketPaths } from "../../src/egress/mod.ts";

Deno.test("loadPolicy() leaves full-control mode off and the network none by default", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL));
    assert.equal(policy.fullControl, undefined);
    assert.equal(policy.sandbox.network, "none");
    assert.deepEqual(policy.sandbox.networkAllow, []);
    assert.equal(policy.limits.maxProcesses, null);
  });
});

Deno.test("loadPolicy() turns full-control mode on loudly, with bash resolved and rlimits set", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(`${MINIMAL}[mode]\nfull_control = true\n`));
    assert.match(policy.fullControl?.shell.path ?? "", /\/bash$/);
    assert.ok(policy.warnings.includes(FULL_CONTROL_WARNING));
    assert.equal(policy.limits.maxProcesses, FULL_CONTROL_RLIMITS.maxProcesses);
    assert.equal(policy.limits.fileSizeBytes, FULL_CONTROL_RLIMITS.fileSizeBytes);
    assert.equal(policy.limits.openFiles, FULL_CONTROL_RLIMITS.openFiles);
    assert.equal(policy.limits.cpuSeconds, 30);
    const limited = assertLoaded(
      await s.load(`${MINIMAL}[limits]\nmax_processes = 64\n[mode]\nfull_control = true\n`),
    );
    assert.equal(limited.limits.maxProcesses, 64, "the operator's own limit stands");
  });
});

Deno.test("loadPolicy() refuses full-control mode without the kernel sandbox", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(
        `${MINIMAL}[sandbox]\nmode = "none"\naccept_path_check_only = true\n[mode]\nfull_control = true\n`,
      ),
      'Policy key "mode.full_control" is true, which runs shell strings with bash, and that is only allowed inside the kernel sandbox; [sandbox] mode is "none", so the server refuses to start: set [sandbox] mode = "bwrap" or full_control = false.',
    );
  });
});

Deno.test("loadPolicy() refuses a full_control that is not a boolean, and an unknown [mode] key", async () => {
  await withScratch(async (s) => {
    const text = await s.load(`${MINIMAL}[mode]\nfull_control = "yes"\n`);
    assert.ok(!text.ok);
    assert.match(text.message, /^Policy key "mode\.full_control" must be true or false/);
    const typo = await s.load(`${MINIMAL}[mode]\nfullcontrol = true\n`);
    assert.ok(!typo.ok);
    assert.match(typo.message, /^Policy key "mode\.fullcontrol" is not recognised/);
  });
});

Deno.test("loadPolicy() keeps the boolean network spelling: false is none, true is host", async () => {
  await withScratch(async (s) => {
    const off = assertLoaded(await s.load(`${MINIMAL}[sandbox]\nnetwork = false\n`));
    assert.equal(off.sandbox.network, "none");
    const on = assertLoaded(await s.load(`${MINIMAL}[sandbox]\nnetwork = true\n`));
    assert.equal(on.sandbox.network, "host");
  });
});

Deno.test("loadPolicy() parses network_allow entries for the allowlist", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(
        `${MINIMAL}[sandbox]\nnetwork = "allowlist"\nnetwork_allow = ["Registry.NPMJS.org:443", "*.example.com:443", "127.0.0.1:8080"]\n`,
      ),
    );
    assert.deepEqual(
      policy.sandbox.networkAllow.map((r) => [r.kind, r.host, r.port, r.literal]),
      [
        ["exact", "registry.npmjs.org", 443, false],
        ["subdomains", "example.com", 443, false],
        ["exact", "127.0.0.1", 8080, true],
      ],
    );
  });
});

Deno.test("loadPolicy() refuses bad network values and network_allow entries", async () => {
  await withScratch(async (s) => {
    const cases: [string, RegExp][] = [
      ['network = "open"', /^Policy key "sandbox\.network" must be "none", "allowlist" or "host"/],
      ['network = "allowlist"', /must list at least one "HOST:PORT"/],
      ['network = "allowlist"\nnetwork_allow = []', /must list at least one "HOST:PORT"/],
      ['network_allow = ["a.example:443"]', /is read only with network = "allowlist"/],
      ['network = "host"\nnetwork_allow = ["a.example:443"]', /is read only with network/],
      [
        'network = "allowlist"\nnetwork_allow = ["example.com"]',
        /"example\.com" is not HOST:PORT \(no port\)/,
      ],
      ['network = "allowlist"\nnetwork_allow = ["example.com:0"]', /not from 1 to 65535/],
      ['network = "allowlist"\nnetwork_allow = ["example.com:http"]', /the port is not a number/],
      [
        'network = "allowlist"\nnetwork_allow = ["*.com:443"]',
        /a wildcard needs at least two labels/,
      ],
      [
        'network = "allowlist"\nnetwork_allow = ["a.*.com:443"]',
        /"\*" is allowed only as the whole first label/,
      ],
      ['network = "allowlist"\nnetwork_allow = ["exa mple.com:443"]', /not a DNS name/],
      [
        'network = "allowlist"\nnetwork_allow = [443]',
        /^Policy key "sandbox\.network_allow\[1\]" must be a "HOST:PORT" string, got 443/,
      ],
      [
        'mode = "none"\naccept_path_check_only = true\nnetwork = "allowlist"\nnetwork_allow = ["a.example:443"]',
        /"allowlist", which only the kernel sandbox can enforce, but mode is "none"/,
      ],
    ];
    for (const [table, expected] of cases) {
      const result = await s.load(`${MINIMAL}[sandbox]\n${table}\n`);
      assert.ok(!result.ok, table);
      assert.match(result.message, expected, table);
    }
  });
});

Deno.test("permissionSetFor() grants the egress proxy exactly the listed host:ports and its socket slots", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(
        `${MINIMAL}[sandbox]\nnetwork = "allowlist"\nnetwork_allow = ["127.0.0.1:8080", "*.example.com:443"]\n`,
      ),
    );
    const result = permissionSetFor(policy, { transport: "stdio", launcherPaths: [] });
    assert.ok(result.ok);
    const dir = egressSocketDir(policy);
    assert.deepEqual(
      result.set.net.map((g) => g.value),
      [
        ...egressSocketPaths(dir).map((path) => `unix:${path}`),
        "127.0.0.1:8080",
        "*.example.com:443",
      ],
    );
    assert.ok(result.set.write.some((g) => g.value === dir));
    const none = permissionSetFor(assertLoaded(await s.load(MINIMAL)), {
      transport: "stdio",
      launcherPaths: [],
    });
    assert.ok(none.ok);
    assert.deepEqual(none.set.net, [], "no egress, no net grant");
  });
});

Deno.test("permissionSetFor() grants full-control mode's shell, and only with the mode on", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(`${MINIMAL}[mode]\nfull_control = true\n`));
    const shell = policy.fullControl?.shell.path ?? "";
    const on = permissionSetFor(policy, { transport: "stdio", launcherPaths: [] });
    assert.ok(on.ok);
    assert.ok(on.set.run.some((g) => g.value === shell));
    const off = permissionSetFor(assertLoaded(await s.load(MINIMAL)), {
      transport: "stdio",
      launcherPaths: [],
    });
    assert.ok(off.ok);
    assert.ok(!off.set.run.some((g) => g.value === shell));
  });
});
