import { deepEqual, equal, ok } from "node:assert/strict";
import { findSedScriptDanger, sedScripts } from "../../src/policy/sed_script.ts";
import { awkInvocation, findAwkProgramDanger } from "../../src/policy/awk_program.ts";

const SAFE_SED: readonly string[] = [
  "s/a/b/",
  "s/a/b/g",
  "s/a/b/gp",
  "s|/usr|/opt|g",
  "s/e/w/",
  "s/x/y/2",
  "s/x/y/I",
  "1d",
  "2,4p",
  "/re/d",
  "/re/!d",
  "\\,re,d",
  "/a/,/b/{p;d}",
  "1~2d",
  "0,/x/d",
  "/x/,+2d",
  "y/abc/xyz/",
  "=",
  "n;p",
  "q",
  "q5",
  "l 40",
  ":a;N;ba",
  "a hello",
  "# a comment",
  "  p  ;  p  ",
  "/w/p",
  "s/r/R/",
];

for (const script of SAFE_SED) {
  Deno.test(`findSedScriptDanger() accepts the transform-only script ${JSON.stringify(script)}`, () => {
    equal(findSedScriptDanger(script), null);
  });
}

const DANGEROUS_SED: readonly string[] = [
  "e id",
  "e",
  "1e id",
  "/x/e id",
  "s/x/id/e",
  "s/x/id/ge",
  "s/x/y/w out",
  "s/x/y/gw out",
  "w out",
  "W out",
  "1w /etc/x",
  "r /etc/passwd",
  "R /etc/passwd",
  "p;e id",
  "p ; w out",
  "/a/{p;e id",
  "1!e id",
  "a x;e id",
  ":a;e id",
  // GNU sed 4.9 ends labels and v's version at a blank or newline, not only at ";".
  ":a e id",
  ":a\te id",
  ":a\ne id",
  "v 4.2 e id",
  "v;e id",
  ":x;t x e id",
  ":x;T x w out",
  ":x;b x r /etc/passwd",
  "b\ne id",
  // a, i and c text ends at a newline.
  "a foo\ne id",
  "i foo\nw out",
  "1c\\\nfoo\ne id",
  "s/x/y/ x",
  "s/x/y",
  "k",
  "\\",
];

for (const script of DANGEROUS_SED) {
  Deno.test(`findSedScriptDanger() refuses ${JSON.stringify(script)}`, () => {
    ok(findSedScriptDanger(script) !== null);
  });
}

Deno.test("sedScripts() finds scripts the way GNU getopt does", () => {
  deepEqual(sedScripts(["s/a/b/", "file"]).scripts, ["s/a/b/"]);
  deepEqual(sedScripts(["-n", "p", "file"]).scripts, ["p"]);
  deepEqual(sedScripts(["-e", "p", "e id"]).scripts, ["p"], "with -e, operands are files");
  deepEqual(sedScripts(["-ne", "e id"]).scripts, ["e id"]);
  deepEqual(sedScripts(["-nee id"]).scripts, ["e id"]);
  deepEqual(sedScripts(["--expression=e id"]).scripts, ["e id"]);
  deepEqual(sedScripts(["--expr", "e id"]).scripts, ["e id"]);
  deepEqual(sedScripts(["-l", "5", "e id"]).scripts, ["e id"]);
  deepEqual(sedScripts(["--", "e id"]).scripts, ["e id"]);
  deepEqual(sedScripts(["file", "-n"]).scripts, ["file"]);
  equal(sedScripts(["-f", "script.sed"]).scriptFile, "script.sed");
  equal(sedScripts(["--file=script.sed"]).scriptFile, "script.sed");
  equal(sedScripts(["-nfscript.sed"]).scriptFile, "script.sed");
});

const SAFE_AWK: readonly string[] = [
  "{print}",
  "{print NR}",
  "NR==1",
  "/x/ {n++} END {print n}",
  "{a[NR]=1} END {for (k in a) print k}",
  "NR>=2",
  "NR<=2",
  "NF || NR",
  '{print "filesystem"}',
  "{ getline; print }",
  "{ argv = 1; print argv }",
  "{ closed = 1 }",
  "/re/{print}",
];

for (const program of SAFE_AWK) {
  Deno.test(`findAwkProgramDanger() accepts ${JSON.stringify(program)}`, () => {
    equal(findAwkProgramDanger(program), null);
  });
}

const DANGEROUS_AWK: readonly string[] = [
  'BEGIN{system("id")}',
  'BEGIN{system ("id")}',
  '{print | "sh"}',
  'BEGIN{"id" | getline x}',
  'BEGIN{print "x" |& "sh"}',
  '{print > "out"}',
  '{print >> "out"}',
  'BEGIN{getline < "/etc/passwd"}',
  "NR>2",
  '@load "filefuncs"',
  'BEGIN{f="sys" "tem"; @f("id")}',
  'BEGIN{extension("x")}',
  // Files and the environment reached by expression, out of sight of the path check.
  'BEGIN{ARGV[1]="\\057etc\\057shadow";ARGC=2} {print}',
  "BEGIN{ARGV[ARGC++]=x}",
  "{print ARGC}",
  'BEGIN{print ENVIRON["HOME"]}',
  'BEGIN{print PROCINFO["pid"]}',
  'BEGIN{SYMTAB["ARGC"]=2}',
  'BEGIN{FUNCTAB["x"]}',
  'END{close("f")}',
  "END{close (x)}",
];

for (const program of DANGEROUS_AWK) {
  Deno.test(`findAwkProgramDanger() refuses ${JSON.stringify(program)}`, () => {
    ok(findAwkProgramDanger(program) !== null);
  });
}

Deno.test("awkInvocation() finds the program and refuses code-loading options", () => {
  deepEqual(awkInvocation(["{print}", "f"]).programs, ["{print}"]);
  deepEqual(awkInvocation(["-F", ":", "{print}"]).programs, ["{print}"]);
  deepEqual(awkInvocation(["-F:", "{print}"]).programs, ["{print}"]);
  deepEqual(awkInvocation(["-v", "x=1", "{print}"]).programs, ["{print}"]);
  deepEqual(awkInvocation(["-vfile=1", "{print}"]).programs, ["{print}"]);
  deepEqual(awkInvocation(["-e", "BEGIN{system(1)}", "f"]).programs, ["BEGIN{system(1)}"]);
  deepEqual(awkInvocation(["--source=x", "f"]).programs, ["x"]);
  deepEqual(awkInvocation(["--", "{print}"]).programs, ["{print}"]);
  for (
    const args of [
      ["-f", "prog.awk"],
      ["-fprog.awk"],
      ["--file=prog.awk"],
      ["-E", "prog.awk"],
      ["--exec=prog.awk"],
      ["-i", "lib"],
      ["--include=lib"],
      ["-l", "filefuncs"],
      ["--load=filefuncs"],
      ["-W", "exec", "prog.awk"],
      ["-o/tmp/x", "{print}"],
      ["--pretty-print=/tmp/x", "{print}"],
      ["-d/tmp/x", "{print}"],
      ["--dump-variables", "{print}"],
      ["-p", "{print}"],
      ["--profile=/tmp/x", "{print}"],
      ["-D", "{print}"],
    ]
  ) {
    ok(awkInvocation(args).dangerousOption !== null, JSON.stringify(args));
  }
});

/** GNU sed's own verdict: true when `--sandbox` refuses the script as e/r/w. */
async function gnuSandboxRefuses(script: string): Promise<{ refused: boolean; valid: boolean }> {
  const result = await new Deno.Command("sed", {
    args: ["--sandbox", "-n", "-e", script, "/dev/null"],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(result.stderr);
  return { refused: stderr.includes("sandbox mode"), valid: result.success };
}

// deno-fmt-ignore
const FRAGMENT_COMMANDS = [
  "p", "d", "e id", "w x", "r x", "R x", "W x", "s/a/b/e", "s/a/b/w x", "s/a/b/ge", "s/a/b/gpw x",
  "y/a/b/", "a t", "i t", "c t", "=", "l", "q", "n", "N", ":l", "b l", "F", "z", "h", "G",
  "s/a/b/g", "{p}", "{e id}", "s,a,b,e", "s/e/w/", "s/w/e/g",
];
const FRAGMENT_ADDRESSES = ["", "1", "/a/", "1,3", "1!", "/a/,/b/", "\\%a%", "2~3"];
const GENERATED: string[] = [];
for (const address of FRAGMENT_ADDRESSES) {
  for (const command of FRAGMENT_COMMANDS) GENERATED.push(`${address}${command}`);
}
for (const first of ["p", "s/a/b/", "1d", "h"]) {
  for (const second of FRAGMENT_COMMANDS) GENERATED.push(`${first};${second}`);
}
// Arguments that end at a blank or newline in GNU sed 4.9, followed by a command.
for (const first of [":l", ":l;b l", ":l;t l", ":l;T l", "v", "v 4.2", "a t", "i t", "c t"]) {
  for (const separator of [" ", "\t", "\n", ";"]) {
    for (const second of ["e id", "w x", "r x", "W x", "R x", "s/a/b/e", "p"]) {
      GENERATED.push(`${first}${separator}${second}`);
    }
  }
}

Deno.test("findSedScriptDanger() flags every script GNU sed --sandbox refuses (differential)", async () => {
  const misses: string[] = [];
  for (const script of [...SAFE_SED, ...DANGEROUS_SED, ...GENERATED]) {
    const gnu = await gnuSandboxRefuses(script);
    if (gnu.refused && findSedScriptDanger(script) === null) misses.push(script);
  }
  equal(
    misses.length,
    0,
    `scripts GNU runs as e/r/w but the scanner passed: ${misses.join(" | ")}`,
  );
});

Deno.test("findSedScriptDanger() accepts only scripts GNU sed --sandbox also accepts", async () => {
  for (const script of SAFE_SED) {
    const gnu = await gnuSandboxRefuses(script);
    ok(gnu.valid && !gnu.refused, script);
  }
  for (const script of GENERATED) {
    if (findSedScriptDanger(script) !== null) continue;
    const gnu = await gnuSandboxRefuses(script);
    ok(!gnu.refused, script);
  }
});

Deno.test("awkInvocation() marks the program word, so the path check never reads it as a path", () => {
  deepEqual(awkInvocation(["/re/{print}", "f"]).programIndexes, [0]);
  deepEqual(awkInvocation(["-F", ":", "/re/", "f"]).programIndexes, [2]);
  deepEqual(awkInvocation(["-e", "/re/", "f"]).programIndexes, [1]);
  deepEqual(awkInvocation(["-e/re/", "f"]).programIndexes, [0]);
  deepEqual(awkInvocation(["--source", "/re/", "f"]).programIndexes, [1]);
  deepEqual(awkInvocation(["-n", "/re/", "f"]).programIndexes, [1]);
  deepEqual(
    awkInvocation(["-q", "/etc/shadow"]).programIndexes,
    [],
    "an option htmcp does not know may take a value: nothing is exempt from the path check",
  );
  deepEqual(awkInvocation(["--unknown", "/etc/shadow"]).programIndexes, []);
});

Deno.test("awkInvocation() finds -v and operand assignments to the variables that choose files", () => {
  equal(awkInvocation(["-v", "ARGC=3", "{print}", "f"]).specialAssignment, "ARGC=3");
  equal(awkInvocation(["-vARGC=3", "{print}", "f"]).specialAssignment, "ARGC=3");
  equal(awkInvocation(["--assign=ARGC=3", "{print}"]).specialAssignment, "ARGC=3");
  equal(awkInvocation(["{print}", "ARGC=3", "f"]).specialAssignment, "ARGC=3");
  equal(awkInvocation(["-e", "{print}", "ARGC=3"]).specialAssignment, "ARGC=3");
  equal(awkInvocation(["-v", "n=3", "{print}", "x=1", "f"]).specialAssignment, null);
  equal(awkInvocation(["ARGC=3"]).specialAssignment, null, "the first operand is the program");
});

Deno.test("sedScripts() marks the script words, and none when an option is not understood", () => {
  deepEqual(sedScripts(["/re/d", "f"]).scriptIndexes, [0]);
  deepEqual(sedScripts(["-n", "-e", "/re/p", "-e", "/x/d", "f"]).scriptIndexes, [2, 4]);
  deepEqual(sedScripts(["-ne/re/p", "f"]).scriptIndexes, [0]);
  deepEqual(sedScripts(["--expression=/re/p", "f"]).scriptIndexes, [0]);
  deepEqual(sedScripts(["-E", "--posix", "/re/d", "f"]).scriptIndexes, [1 + 1]);
  deepEqual(sedScripts(["-Q", "/etc/shadow"]).scriptIndexes, []);
  deepEqual(sedScripts(["--bogus", "/etc/shadow"]).scriptIndexes, []);
});

Deno.test("GNU awk and sed really read a file named by expression or script the argv never shows", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-awk-" });
  try {
    await Deno.writeTextFile(`${dir}/secret`, "TOP SECRET\n");
    await Deno.writeTextFile(`${dir}/f`, "x\n");
    // The path the attack reads is spelled with octal escapes only.
    const octal = [...`${dir}/secret`].map((c) =>
      `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`
    )
      .join("");
    const awk = await new Deno.Command("awk", {
      args: [`BEGIN{ARGV[1]="${octal}";ARGC=2} {print}`, "f"],
      cwd: dir,
      stdout: "piped",
      stderr: "null",
    }).output();
    equal(new TextDecoder().decode(awk.stdout), "TOP SECRET\n");
    ok(findAwkProgramDanger(`BEGIN{ARGV[1]="${octal}";ARGC=2} {print}`) !== null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
