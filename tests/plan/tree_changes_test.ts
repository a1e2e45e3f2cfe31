import { equal } from "node:assert/strict";
import { mayChangeWhatPathsLeadTo } from "../../src/plan/tree_changes.ts";

const command = (name: string, realPath = `/usr/bin/${name}`) => ({
  name,
  path: `/usr/bin/${name}`,
  realPath,
});

Deno.test("mayChangeWhatPathsLeadTo() is false only for commands known to make no link and rename nothing", () => {
  for (
    const name of ["cat", "sort", "grep", "ls", "mkdir", "touch", "tee", "sed", "find", "echo"]
  ) {
    equal(mayChangeWhatPathsLeadTo(command(name)), false, name);
  }
  for (
    const name of ["mv", "cp", "tar", "git", "patch", "make", "unzip", "rsync", "python3", "node"]
  ) {
    equal(mayChangeWhatPathsLeadTo(command(name)), true, name);
  }
  // awk through the alternatives link: both names are known.
  equal(mayChangeWhatPathsLeadTo(command("awk", "/usr/bin/mawk")), false);
  // A name that is known, for a binary that is not: the binary decides.
  equal(mayChangeWhatPathsLeadTo(command("cat", "/usr/bin/mv")), true);
  equal(mayChangeWhatPathsLeadTo(command("/usr/bin/cat")), false, "a path-qualified name");
});
