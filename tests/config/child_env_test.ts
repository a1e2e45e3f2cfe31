/**
 * `[env] pass`: names only, values from the server's environment at load, PATH
 * defaulting to the fixed system PATH, and loader-injection names refused.
 */
import assert from "node:assert/strict";
import { DEFAULT_CHILD_PATH } from "../../src/config/mod.ts";
import { assertLoaded, assertRefused, MINIMAL, withScratch } from "./_fixture.ts";

const passing = (names: readonly string[]) =>
  `${MINIMAL}[env]\npass = [${names.map((n) => JSON.stringify(n)).join(", ")}]\n`;

Deno.test("loadPolicy() passes PATH, HOME and LANG by default, with values from the environment", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(MINIMAL, {
        PATH: "/usr/bin:/bin",
        HOME: "/home/op",
        LANG: "C.UTF-8",
        SECRET: "x",
      }),
    );
    assert.deepEqual(policy.envPass, ["PATH", "HOME", "LANG"]);
    assert.deepEqual({ ...policy.childEnv }, {
      PATH: "/usr/bin:/bin",
      HOME: "/home/op",
      LANG: "C.UTF-8",
    });
  });
});

Deno.test("loadPolicy() gives children the default PATH when PATH is not passed", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(passing(["LANG"]), { PATH: "/opt/evil/bin", LANG: "C" }),
    );
    assert.deepEqual({ ...policy.childEnv }, { LANG: "C", PATH: DEFAULT_CHILD_PATH });
  });
});

Deno.test("loadPolicy() gives children the default PATH when PATH is passed but unset or empty", async () => {
  await withScratch(async (s) => {
    assert.equal(
      assertLoaded(await s.load(passing(["PATH"]), {})).childEnv["PATH"],
      DEFAULT_CHILD_PATH,
    );
    assert.equal(
      assertLoaded(await s.load(passing(["PATH"]), { PATH: "" })).childEnv["PATH"],
      DEFAULT_CHILD_PATH,
    );
  });
});

Deno.test("loadPolicy() leaves out passed names that are unset", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(passing(["TZ", "LANG"]), { LANG: "" }));
    assert.deepEqual(policy.envPass, ["TZ", "LANG"]);
    assert.deepEqual({ ...policy.childEnv }, { LANG: "", PATH: DEFAULT_CHILD_PATH });
  });
});

Deno.test("loadPolicy() reads passed names as own properties only (constructor is not inherited)", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(passing(["constructor", "toString", "__proto__"]), {}),
    );
    assert.equal(Object.hasOwn(policy.childEnv, "constructor"), false);
    assert.equal(Object.hasOwn(policy.childEnv, "toString"), false);
    assert.equal(Object.hasOwn(policy.childEnv, "__proto__"), false);
    assert.deepEqual(Object.keys(policy.childEnv), ["PATH"]);
  });
});

Deno.test("loadPolicy() keeps a passed variable literally named __proto__ as a plain key", async () => {
  await withScratch(async (s) => {
    const env: Record<string, string> = {};
    Object.defineProperty(env, "__proto__", { value: "v", enumerable: true });
    const policy = assertLoaded(await s.load(passing(["__proto__"]), env));
    assert.equal(Object.hasOwn(policy.childEnv, "__proto__"), true);
    assert.equal(Object.getPrototypeOf(policy.childEnv), null);
  });
});

Deno.test("loadPolicy() refuses a name that is not a valid environment variable name", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(passing(["LANG", "MY-VAR"])),
      'Policy key "env.pass[2]" is "MY-VAR", which is not a valid environment variable name (letters, digits and _, not starting with a digit).',
    );
    assertRefused(
      await s.load(passing(["PATH=/tmp"])),
      'Policy key "env.pass[1]" is "PATH=/tmp", which is not a valid environment variable name (letters, digits and _, not starting with a digit).',
    );
  });
});

for (
  const [name, reason] of [
    [
      "LD_PRELOAD",
      "the dynamic loader reads LD_* variables (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT) to inject code into every child",
    ],
    [
      "ld_library_path",
      "the dynamic loader reads LD_* variables (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT) to inject code into every child",
    ],
    [
      "DYLD_INSERT_LIBRARIES",
      "the macOS dynamic loader reads DYLD_* variables to inject code into every child",
    ],
    ["GLIBC_TUNABLES", "glibc parses it in every child, and it was the vector of CVE-2023-4911"],
    [
      "HTMCP_OAUTH_ADMIN_PIN",
      "HTMCP_* variables configure this server and include secrets such as the OAuth admin PIN",
    ],
    [
      "GIT_CONFIG_GLOBAL",
      "GIT_* variables (GIT_CONFIG_*, GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF, GIT_EXEC_PATH) make git run other programs and would override the safe git environment",
    ],
    ["BASH_ENV", "bash runs the file it names before any script"],
    ["PAGER", "tools run the program it names"],
    ["NODE_OPTIONS", "Node.js applies it as options (including --require)"],
    // Added after red-team round five: each makes a tool run, load or read what it names.
    [
      "npm_config_script_shell",
      "npm applies npm_config_* variables as its configuration (script-shell, node-options, prefix, registry)",
    ],
    [
      "PIP_INDEX_URL",
      "pip applies PIP_* variables as its options (index URLs, --src and --target folders, config files)",
    ],
    [
      "TAR_OPTIONS",
      "tar applies it as options (including --to-command and --use-compress-program)",
    ],
    ["MAKEFLAGS", "make applies it as options and variable assignments (SHELL included)"],
    ["RSYNC_RSH", "rsync runs it as its remote shell"],
    ["PYTHONBREAKPOINT", "Python imports and calls what it names at every breakpoint()"],
    ["LOCPATH", "glibc loads locale data from the folder it names"],
    [
      "CURL_HOME",
      "curl reads its configuration (.curlrc: URLs, files to write) from the folder it names",
    ],
    ["WGETRC", "wget reads the configuration file it names"],
  ] as const
) {
  Deno.test(`loadPolicy() refuses to pass ${name} to children`, async () => {
    await withScratch(async (s) => {
      assertRefused(
        await s.load(passing(["LANG", name]), { [name]: "/tmp/evil.so" }),
        `Policy key "env.pass[2]" is "${name}", which is never passed to commands: ${reason}.`,
      );
    });
  });
}

Deno.test("loadPolicy() refuses a passed PATH with a relative or empty entry", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(passing(["PATH"]), { PATH: "/usr/bin:bin" }),
      'Policy key "env.pass" passes PATH "/usr/bin:bin", whose entry "bin" is not an absolute folder; a relative or empty entry would make children run programs from the jail.',
    );
    assertRefused(
      await s.load(passing(["PATH"]), { PATH: "/usr/bin:" }),
      'Policy key "env.pass" passes PATH "/usr/bin:", whose entry "" is not an absolute folder; a relative or empty entry would make children run programs from the jail.',
    );
  });
});

Deno.test("loadPolicy() resolves commands on the passed PATH, not the default one", async () => {
  await withScratch(async (s) => {
    await s.write("bin/ls", "#!/bin/sh\n", 0o755);
    const policy = assertLoaded(
      await s.load(`${passing(["PATH"])}[allowlist]\ncommands = ["ls"]\n`, {
        PATH: `${s.dir}/bin:/usr/bin`,
      }),
    );
    assert.equal(policy.allowlist.get("ls")?.path, `${s.dir}/bin/ls`);
    assert.equal(policy.childEnv["PATH"], `${s.dir}/bin:/usr/bin`);
  });
});
