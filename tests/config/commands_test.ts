/**
 * Command lists: names are bare, resolved once on the child PATH (first
 * executable regular file wins), the denylist always wins, and lookups never
 * hit an inherited key.
 */
import assert from "node:assert/strict";
import { assertLoaded, assertRefused, MINIMAL, type Scratch, withScratch } from "./_fixture.ts";

const SCRIPT = "#!/bin/sh\nexit 0\n";

/** Loads with the child PATH set to `dirs` (folders under the scratch dir). */
async function loadWithPath(s: Scratch, dirs: readonly string[], commands: readonly string[]) {
  const list = commands.map((c) => JSON.stringify(c)).join(", ");
  return await s.load(
    `${MINIMAL}[env]\npass = ["PATH"]\n[allowlist]\ncommands = [${list}]\n`,
    { PATH: dirs.map((d) => `${s.dir}/${d}`).join(":") },
  );
}

Deno.test("loadPolicy() resolves allowlisted names on the default child PATH", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL + '[allowlist]\ncommands = ["ls", "cat"]\n'));
    const ls = policy.allowlist.get("ls");
    assert.deepEqual(ls, {
      name: "ls",
      path: "/usr/bin/ls",
      realPath: await Deno.realPath("/usr/bin/ls"),
    });
    assert.equal(policy.allowlist.get("cat")?.path, "/usr/bin/cat");
  });
});

Deno.test("loadPolicy() refuses an allowlisted command that is not on the child PATH", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + '[allowlist]\ncommands = ["ls", "no-such-tool-htmcp"]\n'),
      'Policy key "allowlist.commands" lists "no-such-tool-htmcp", which is not an executable file in any folder of the child PATH "/usr/local/bin:/usr/bin:/bin".',
    );
  });
});

Deno.test("loadPolicy() skips a non-executable file and takes the next executable on PATH", async () => {
  await withScratch(async (s) => {
    await s.write("a/tool", SCRIPT, 0o644);
    await s.write("b/tool", SCRIPT, 0o755);
    const policy = assertLoaded(await loadWithPath(s, ["a", "b"], ["tool"]));
    assert.equal(policy.allowlist.get("tool")?.path, `${s.dir}/b/tool`);
  });
});

Deno.test("loadPolicy() refuses a command whose only match is not executable", async () => {
  await withScratch(async (s) => {
    await s.write("a/tool", SCRIPT, 0o644);
    assertRefused(
      await loadWithPath(s, ["a"], ["tool"]),
      `Policy key "allowlist.commands" lists "tool", which is not an executable file in any folder of the child PATH "${s.dir}/a".`,
    );
  });
});

Deno.test("loadPolicy() skips a directory named like the command", async () => {
  await withScratch(async (s) => {
    await Deno.mkdir(`${s.dir}/a/tool`, { recursive: true });
    await Deno.chmod(`${s.dir}/a/tool`, 0o755);
    await s.write("b/tool", SCRIPT, 0o755);
    const policy = assertLoaded(await loadWithPath(s, ["a", "b"], ["tool"]));
    assert.equal(policy.allowlist.get("tool")?.path, `${s.dir}/b/tool`);
  });
});

Deno.test("loadPolicy() takes the first PATH folder when several hold the command", async () => {
  await withScratch(async (s) => {
    await s.write("a/tool", SCRIPT, 0o755);
    await s.write("b/tool", SCRIPT, 0o755);
    const policy = assertLoaded(await loadWithPath(s, ["b", "a"], ["tool"]));
    assert.equal(policy.allowlist.get("tool")?.path, `${s.dir}/b/tool`);
  });
});

Deno.test("loadPolicy() keeps a symlinked binary's path text and records its real path", async () => {
  await withScratch(async (s) => {
    const real = await s.write("real/tool-1.2", SCRIPT, 0o755);
    await Deno.mkdir(`${s.dir}/bin`);
    await Deno.symlink(real, `${s.dir}/bin/tool`);
    const policy = assertLoaded(await loadWithPath(s, ["bin"], ["tool"]));
    assert.deepEqual(policy.allowlist.get("tool"), {
      name: "tool",
      path: `${s.dir}/bin/tool`,
      realPath: real,
    });
  });
});

Deno.test("loadPolicy() skips a dangling symlink on PATH", async () => {
  await withScratch(async (s) => {
    await Deno.mkdir(`${s.dir}/a`);
    await Deno.symlink(`${s.dir}/gone`, `${s.dir}/a/tool`);
    await s.write("b/tool", SCRIPT, 0o755);
    const policy = assertLoaded(await loadWithPath(s, ["a", "b"], ["tool"]));
    assert.equal(policy.allowlist.get("tool")?.path, `${s.dir}/b/tool`);
  });
});

Deno.test("loadPolicy() refuses a PATH folder inside the jail", async () => {
  await withScratch(async (s) => {
    await s.write("jail/bin/tool", SCRIPT, 0o755);
    assertRefused(
      await loadWithPath(s, ["jail/bin"], ["tool"]),
      `Policy key "env.pass" gives children the PATH folder "${s.jail}/bin", which is inside the jail root, where the model could plant programs.`,
    );
  });
});

Deno.test("loadPolicy() refuses a HOME inside the jail without the kernel sandbox, and keeps it under bwrap", async () => {
  await withScratch(async (s) => {
    const none = '[sandbox]\nmode = "none"\naccept_path_check_only = true\n';
    const pass = '[env]\npass = ["PATH", "HOME"]\n';
    for (const home of [s.jail, `${s.jail}/sub`]) {
      assertRefused(
        await s.load(`${MINIMAL}${none}${pass}`, { PATH: "/usr/bin:/bin", HOME: home }),
        `Policy key "env.pass" gives children HOME "${home}", which is inside the jail root: without the kernel sandbox commands would read configuration the model writes there; pass another HOME, or leave HOME out of env.pass.`,
      );
    }
    assertLoaded(await s.load(`${MINIMAL}${none}${pass}`, { PATH: "/usr/bin:/bin", HOME: s.dir }));
    const bwrap = assertLoaded(
      await s.load(`${MINIMAL}${pass}`, { PATH: "/usr/bin:/bin", HOME: s.jail }),
    );
    assert.equal(bwrap.childEnv["HOME"], s.jail);
  });
});

Deno.test("loadPolicy() refuses a command whose binary is a symlink into the jail", async () => {
  await withScratch(async (s) => {
    const planted = await s.write("jail/tool", SCRIPT, 0o755);
    await Deno.mkdir(`${s.dir}/bin`);
    await Deno.symlink(planted, `${s.dir}/bin/tool`);
    assertRefused(
      await loadWithPath(s, ["bin"], ["tool"]),
      `Policy key "allowlist.commands" lists "tool", which resolves to "${planted}" inside the jail root, where the model could replace it.`,
    );
  });
});

for (
  const [name, message] of [
    [
      "/bin/ls",
      'Policy key "allowlist.commands[1]" is "/bin/ls", but commands are listed by bare name (for example "ls"), never by path.',
    ],
    [
      "./ls",
      'Policy key "allowlist.commands[1]" is "./ls", but commands are listed by bare name (for example "ls"), never by path.',
    ],
    [
      "..",
      'Policy key "allowlist.commands[1]" is "..", which is not a command name (ASCII letters, digits and . _ + -, not starting with "." or "-").',
    ],
    [
      ".",
      'Policy key "allowlist.commands[1]" is ".", which is not a command name (ASCII letters, digits and . _ + -, not starting with "." or "-").',
    ],
    [
      "-rf",
      'Policy key "allowlist.commands[1]" is "-rf", which is not a command name (ASCII letters, digits and . _ + -, not starting with "." or "-").',
    ],
    [
      "\u0441at",
      'Policy key "allowlist.commands[1]" is "\u0441at", which is not a command name (ASCII letters, digits and . _ + -, not starting with "." or "-").',
    ],
    [
      "ls -la",
      'Policy key "allowlist.commands[1]" is "ls -la", which is not a command name (ASCII letters, digits and . _ + -, not starting with "." or "-").',
    ],
    [
      "l*",
      'Policy key "allowlist.commands[1]" is "l*", which is not a command name (ASCII letters, digits and . _ + -, not starting with "." or "-").',
    ],
    ["", 'Policy key "allowlist.commands[1]" must be a non-empty string, got "".'],
  ] as const
) {
  Deno.test(`loadPolicy() refuses the allowlist name ${JSON.stringify(name)}`, async () => {
    await withScratch(async (s) => {
      assertRefused(
        await s.load(`${MINIMAL}[allowlist]\ncommands = [${JSON.stringify(name)}]\n`),
        message,
      );
    });
  });
}

Deno.test("loadPolicy() refuses a denylist entry written as a path", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(MINIMAL + '[denylist]\ncommands = ["rm", "/bin/rm"]\n'),
      'Policy key "denylist.commands[2]" is "/bin/rm", but commands are listed by bare name (for example "ls"), never by path.',
    );
  });
});

Deno.test("loadPolicy() lets the denylist win over the allowlist, with a warning", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(
        MINIMAL + '[allowlist]\ncommands = ["ls", "cat"]\n[denylist]\ncommands = ["cat"]\n',
      ),
    );
    assert.equal(policy.allowlist.has("cat"), false);
    assert.equal(policy.denylist.has("cat"), true);
    assert.ok(policy.allowlist.has("ls"));
    assert.ok(
      policy.warnings.includes(
        'Command "cat" is on both the allowlist and the denylist; the denylist wins, so it can never run.',
      ),
    );
  });
});

Deno.test("loadPolicy() applies the denylist to the resolved name of a symlinked command", async () => {
  await withScratch(async (s) => {
    const real = await s.write("real/danger", SCRIPT, 0o755);
    await Deno.mkdir(`${s.dir}/bin`);
    await Deno.symlink(real, `${s.dir}/bin/harmless`);
    const policy = assertLoaded(
      await s.load(
        `${MINIMAL}[env]\npass = ["PATH"]\n[allowlist]\ncommands = ["harmless"]\n[denylist]\ncommands = ["danger"]\n`,
        { PATH: `${s.dir}/bin` },
      ),
    );
    assert.equal(policy.allowlist.has("harmless"), false);
    assert.ok(
      policy.warnings.includes(
        `Allowlisted command "harmless" resolves to "${real}", whose name "danger" is on the denylist; the denylist wins, so it can never run.`,
      ),
    );
  });
});

Deno.test("loadPolicy() matches nothing inherited for constructor, __proto__ or toString", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL + '[allowlist]\ncommands = ["ls"]\n'));
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      assert.equal(policy.allowlist.has(name), false, name);
      assert.equal(policy.allowlist.get(name), undefined, name);
      assert.equal(policy.denylist.has(name), false, name);
    }
  });
});

Deno.test("loadPolicy() resolves commands literally named constructor and __proto__", async () => {
  await withScratch(async (s) => {
    await s.write("bin/constructor", SCRIPT, 0o755);
    await s.write("bin/__proto__", SCRIPT, 0o755);
    const policy = assertLoaded(await loadWithPath(s, ["bin"], ["constructor", "__proto__"]));
    assert.equal(policy.allowlist.get("constructor")?.path, `${s.dir}/bin/constructor`);
    assert.equal(policy.allowlist.get("__proto__")?.path, `${s.dir}/bin/__proto__`);
    assert.deepEqual([...policy.allowlist.keys()], ["constructor", "__proto__"]);
  });
});

Deno.test("loadPolicy() keeps rules with whitespace-normalised deny_args", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(
        MINIMAL +
          '[allowlist]\ncommands = ["ls"]\n[[rules]]\ncommand = "ls"\ndeny_args = ["  -R ", "--color   always"]\nreason = "No recursion."\n',
      ),
    );
    assert.deepEqual(policy.rules, [
      {
        command: "ls",
        denyArgs: ["-R", "--color always"],
        reason: "No recursion.",
        enforce: "deny",
      },
    ]);
  });
});

Deno.test("loadPolicy() de-duplicates repeated allowlist names", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL + '[allowlist]\ncommands = ["ls", "ls"]\n'));
    assert.deepEqual([...policy.allowlist.keys()], ["ls"]);
  });
});
