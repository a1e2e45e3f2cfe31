import { deepEqual, equal, ok } from "node:assert/strict";
import { checkPlan, type PlanCheckResult } from "../../src/plan/check_plan.ts";
import { parsePlan } from "../../src/plan/mod.ts";
import { makePolicy } from "../_helpers/policy.ts";

/** A real tree: jail/{a.txt,b.txt,.hidden.txt,-rf,src/{x.ts,y.ts},app/sub}, a link out, a sibling outside. */
function makeTree() {
  const base = Deno.makeTempDirSync({ prefix: "htmcp-plan-" });
  const jail = `${base}/jail`;
  const outside = `${base}/outside`;
  Deno.mkdirSync(`${jail}/src`, { recursive: true });
  Deno.mkdirSync(`${jail}/app/sub`, { recursive: true });
  Deno.mkdirSync(outside);
  for (const name of ["a.txt", "b.txt", ".hidden.txt", "-rf", "src/x.ts", "src/y.ts"]) {
    Deno.writeTextFileSync(`${jail}/${name}`, name);
  }
  Deno.writeTextFileSync(`${outside}/secret.txt`, "secret");
  const policy = makePolicy({
    jailRoot: jail,
    allow: ["ls", "cat", "sort", "head", "wc", "grep", "echo", "seq", "true", "false"],
    deny: ["rm", "sh"],
  });
  return {
    base,
    jail: policy.jailRoot,
    outside,
    policy,
    [Symbol.dispose]() {
      Deno.removeSync(base, { recursive: true });
    },
  };
}

async function check(
  tree: ReturnType<typeof makeTree>,
  text: string,
  cwd?: string,
): Promise<PlanCheckResult> {
  const parsed = parsePlan(text);
  ok(parsed.ok, JSON.stringify(parsed));
  return await checkPlan(tree.policy, parsed.plan, cwd);
}

function argvs(result: PlanCheckResult): string[][] {
  ok(result.ok, JSON.stringify(result));
  return result.plan.pipelines.flatMap((p) => p.stages.map((s) => [...s.argv]));
}

Deno.test("checkPlan() expands globs inside the jail, sorted, hiding dot files", async () => {
  using tree = makeTree();
  deepEqual(argvs(await check(tree, "ls *.txt")), [["ls", "a.txt", "b.txt"]]);
  deepEqual(argvs(await check(tree, "ls src/*.ts")), [["ls", "src/x.ts", "src/y.ts"]]);
  deepEqual(argvs(await check(tree, "ls .*.txt")), [["ls", ".hidden.txt"]]);
  deepEqual(argvs(await check(tree, "ls ?.txt")), [["ls", "a.txt", "b.txt"]]);
  deepEqual(argvs(await check(tree, "ls [a].txt")), [["ls", "a.txt"]]);
  deepEqual(argvs(await check(tree, "ls [!a].txt")), [["ls", "b.txt"]]);
  deepEqual(argvs(await check(tree, "ls */*.ts")), [["ls", "src/x.ts", "src/y.ts"]]);
});

Deno.test("checkPlan() passes a pattern that matches nothing as typed, like sh", async () => {
  using tree = makeTree();
  deepEqual(argvs(await check(tree, "ls *.md")), [["ls", "*.md"]]);
  deepEqual(argvs(await check(tree, "ls '*.txt'")), [["ls", "*.txt"]]);
});

Deno.test("checkPlan() passes a match that starts with - as ./-x, never as an option", async () => {
  using tree = makeTree();
  const all = argvs(await check(tree, "ls *"));
  deepEqual(all, [["ls", "./-rf", "a.txt", "app", "b.txt", "src"]]);
});

Deno.test("checkPlan() refuses a glob whose match is a symlink out of the jail", async () => {
  using tree = makeTree();
  Deno.symlinkSync(`${tree.outside}/secret.txt`, `${tree.jail}/c.txt`);
  const result = await check(tree, "cat *.txt");
  ok(!result.ok);
  equal(result.code, "PATH_ESCAPE");
});

Deno.test("checkPlan() refuses a glob that would list a folder linked out of the jail", async () => {
  using tree = makeTree();
  Deno.symlinkSync(tree.outside, `${tree.jail}/out`);
  const result = await check(tree, "cat out/*");
  ok(!result.ok);
  equal(result.code, "PATH_ESCAPE");
  ok(result.reason.includes("outside the jail"), result.reason);
});

Deno.test("checkPlan() refuses absolute patterns and patterns as command names", async () => {
  using tree = makeTree();
  const absolute = await check(tree, "ls /etc/*");
  ok(!absolute.ok);
  equal(absolute.code, "PATH_ESCAPE");
  const name = await check(tree, "l* -la");
  ok(!name.ok);
  equal(name.code, "POLICY_DENIED");
});

Deno.test("checkPlan() judges every stage and names the refused one", async () => {
  using tree = makeTree();
  const denied = await check(tree, "cat a.txt | sh");
  ok(!denied.ok);
  equal(denied.code, "POLICY_DENIED");
  equal(denied.stage, 2);
  ok(denied.reason.startsWith(`Stage 2 ("sh"):`), denied.reason);
  const unknown = await check(tree, "ls && grep x a.txt | python3");
  ok(!unknown.ok);
  equal(unknown.stage, 3);
  const escaped = await check(tree, "ls | cat ../outside/secret.txt");
  ok(!escaped.ok);
  equal(escaped.code, "PATH_ESCAPE");
  equal(escaped.stage, 2);
});

Deno.test("checkPlan() confines redirection targets, /dev/null the only exception", async () => {
  using tree = makeTree();
  const ok1 = await check(tree, "seq 1 5 > out.txt 2>/dev/null");
  ok(ok1.ok, JSON.stringify(ok1));
  deepEqual(ok1.plan.pipelines[0]?.stages[0]?.redirections, [
    { kind: "write", fd: 1, append: false, path: `${tree.jail}/out.txt` },
    { kind: "write", fd: 2, append: false, path: "/dev/null" },
  ]);
  for (
    const text of ["ls > /etc/x", "ls > ../x", "sort < ../outside/secret.txt", "ls 2>> /tmp/x"]
  ) {
    const result = await check(tree, text);
    ok(!result.ok, text);
    equal(result.code, "PATH_ESCAPE", text);
  }
  Deno.symlinkSync(`${tree.outside}/new.txt`, `${tree.jail}/link.txt`);
  const throughLink = await check(tree, "echo x > link.txt");
  ok(!throughLink.ok);
  equal(throughLink.code, "PATH_ESCAPE");
  const pattern = await check(tree, "ls > *.txt");
  ok(!pattern.ok);
  equal(pattern.code, "POLICY_DENIED");
});

Deno.test("checkPlan() follows leading cd for every later path, and confines it", async () => {
  using tree = makeTree();
  const result = await check(tree, "cd src && ls *.ts > list.txt");
  ok(result.ok, JSON.stringify(result));
  equal(result.plan.cwd, `${tree.jail}/src`);
  deepEqual(result.plan.pipelines[0]?.stages[0]?.argv, ["ls", "x.ts", "y.ts"]);
  deepEqual(result.plan.pipelines[0]?.stages[0]?.redirections, [
    { kind: "write", fd: 1, append: false, path: `${tree.jail}/src/list.txt` },
  ]);
  equal(result.plan.pipelines[0]?.connector, null);
  const nested = await check(tree, "cd app && cd sub && ls", undefined);
  ok(nested.ok);
  equal(nested.plan.cwd, `${tree.jail}/app/sub`);
  const fromCwd = await check(tree, "cd sub && ls", "app");
  ok(fromCwd.ok);
  equal(fromCwd.plan.cwd, `${tree.jail}/app/sub`);
  for (const text of ["cd / && ls", "cd .. && ls", "cd ../outside && ls", "cd missing && ls"]) {
    const refused = await check(tree, text);
    ok(!refused.ok, text);
    equal(refused.code, "CWD_ESCAPE", text);
  }
  Deno.symlinkSync(tree.outside, `${tree.jail}/out`);
  const link = await check(tree, "cd out && ls");
  ok(!link.ok);
  equal(link.code, "CWD_ESCAPE");
});

Deno.test("checkPlan() keeps sequence connectors for the runner", async () => {
  using tree = makeTree();
  const result = await check(tree, "true && false || echo no ; ls");
  ok(result.ok);
  deepEqual(result.plan.pipelines.map((p) => p.connector), [null, "&&", "||", ";"]);
});

Deno.test("checkPlan() without the kernel sandbox refuses steps after or beside one that may change what paths lead to; under bwrap it checks them as usual", async () => {
  using tree = makeTree();
  const none = { ...tree.policy, allowlist: new Map(tree.policy.allowlist) };
  const mv = makePolicy({ jailRoot: tree.jail, allow: ["mv", "cat", "mkdir", "touch"] });
  for (const [name, entry] of mv.allowlist) none.allowlist.set(name, entry);
  const parse = (text: string) => {
    const parsed = parsePlan(text);
    ok(parsed.ok, JSON.stringify(parsed));
    return parsed.plan;
  };
  const refused = await checkPlan(
    none,
    parse("cat a.txt && mv a.txt c.txt && cat c.txt"),
    undefined,
  );
  ok(!refused.ok);
  equal(refused.code, "POLICY_DENIED");
  equal(refused.stage, 3);
  ok(refused.reason.startsWith('Stage 3 ("cat") runs after Stage 2 ("mv")'), refused.reason);
  const beside = await checkPlan(none, parse("cat a.txt | mv a.txt c.txt"), undefined);
  ok(!beside.ok);
  equal(beside.stage, 2);
  // Regular files and folders only, or the changing step last: checked as usual.
  ok((await checkPlan(none, parse("mkdir n && touch n/x && cat a.txt"), undefined)).ok);
  ok((await checkPlan(none, parse("cat a.txt && mv a.txt c.txt"), undefined)).ok);
  const sandboxed = { ...none, sandbox: { ...none.sandbox, mode: "bwrap" as const } };
  ok((await checkPlan(sandboxed, parse("mv a.txt c.txt && cat c.txt"), undefined)).ok);
});
