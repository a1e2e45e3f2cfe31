/**
 * The jail must work, and fail closed, when the server holds a Deno read
 * grant for the jail only: it may never need to stat a folder above the
 * jail to allow an inside path, and a `NotCapable` error means "cannot prove
 * inside", so the path is refused.
 */
import { deepEqual, ok } from "node:assert/strict";
import { makeJail } from "./_fixtures.ts";

const HELPER = new URL("./_narrow_check.ts", import.meta.url).pathname;

Deno.test("the jail allows inside paths and refuses outside ones under a jail-only read grant", async () => {
  const jail = await makeJail();
  try {
    const candidates = [
      "notes.txt",
      `${jail.root}/notes.txt`,
      "sub/deep/file.txt",
      "new-file",
      "../jail/notes.txt",
      "/etc/passwd",
      "link-out",
      "file-link",
      `${jail.base}/jail-evil/x`,
    ];
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", `--allow-read=${jail.root}`, HELPER, jail.root, ...candidates],
      stdout: "piped",
      stderr: "piped",
    }).output();
    ok(output.success, new TextDecoder().decode(output.stderr));
    const verdicts = JSON.parse(new TextDecoder().decode(output.stdout));
    deepEqual(verdicts, {
      "notes.txt": "OK",
      [`${jail.root}/notes.txt`]: "OK",
      "sub/deep/file.txt": "OK",
      "new-file": "OK",
      "../jail/notes.txt": "OK",
      "/etc/passwd": "PATH_ESCAPE",
      "link-out": "PATH_ESCAPE",
      "file-link": "PATH_ESCAPE",
      [`${jail.base}/jail-evil/x`]: "PATH_ESCAPE",
      "<cwd>": "OK",
    });
  } finally {
    await jail.cleanup();
  }
});
