/**
 * Attack class: a file name attached to a short option, without a slash
 * (`date -frl`, `tar -cfwf`), where the name is a symlink in the jail that
 * leads out. Written as a separate word (`date -f rl`) the name was always
 * checked; attached, it was checked only when it looked like a path. Layer 1
 * now checks every value an option letter could take, bare ones whenever
 * an entry of that name exists. The raw tool shows each one really reads or
 * writes through the link.
 */
import { equal, ok } from "node:assert/strict";
import { assertRefused, layer1, makeTree, runRaw } from "./_layer1.ts";

async function plantLinks(jail: string, outside: string): Promise<void> {
  await Deno.symlink(`${outside}/secret.txt`, `${jail}/rl`);
  await Deno.symlink(`${outside}/made.tar`, `${jail}/wf`);
}

const ATTACKS:
  readonly (readonly [string, string, (outside: string, out: string) => Promise<boolean>])[] = [
    [
      "date -frl",
      "reads the file as dates and names its first line",
      (_outside, out) => Promise.resolve(out.includes("TOP-SECRET-OUTSIDE")),
    ],
    [
      "grep -cfrl notes.txt",
      "reads the file as its patterns",
      // The secret's one line is the pattern: it matches nothing in the notes.
      (_outside, out) => Promise.resolve(out.trim() === "0"),
    ],
    [
      "tar -cfwf notes.txt",
      "writes its archive through the link",
      async (outside) => (await Deno.stat(`${outside}/made.tar`).then(() => true, () => false)),
    ],
  ];

for (const [command, effect, happened] of ATTACKS) {
  Deno.test(`layer 1 refuses ${JSON.stringify(command)}, whose attached value is a link leading out (PATH_ESCAPE); the raw tool ${effect}`, async () => {
    const raw = await makeTree();
    try {
      await Deno.writeTextFile(`${raw.jail}/notes.txt`, "notes\n");
      await plantLinks(raw.jail, raw.outside);
      const [name, ...args] = command.split(" ");
      const ran = await runRaw(raw.jail, name!, args);
      ok(await happened(raw.outside, ran.stdout + ran.stderr), `raw ${command}: ${ran.stderr}`);
    } finally {
      await Deno.remove(raw.base, { recursive: true });
    }

    await using fx = await layer1(["date", "grep", "tar", "ls"]);
    await plantLinks(fx.jail, fx.outside);
    await assertRefused(fx, command, "PATH_ESCAPE");
    equal(await Deno.stat(`${fx.outside}/made.tar`).then(() => true, () => false), false);
  });
}

Deno.test("an attached value naming a plain file of the jail, or nothing, is still allowed: ls -la, date -fnotes.txt", async () => {
  await using fx = await layer1(["date", "ls"]);
  // `a` exists and stays inside: the cluster's suffix is checked and passes.
  await Deno.writeTextFile(`${fx.jail}/a`, "a\n");
  equal((await fx.run("ls -la")).code, "OK");
  const dated = await fx.run("date -fnotes.txt");
  // `notes` is no date: date fails, but it ran, on the file in the jail.
  equal(dated.code, "OK", dated.policy_reason);
  equal(dated.exit_code, 1);
  ok(dated.stderr.includes("invalid date"), dated.stderr);
});
