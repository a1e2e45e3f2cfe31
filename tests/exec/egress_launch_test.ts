/**
 * The launcher argv and environment with the egress proxy in force: the
 * socket bound read-only into the sandbox, the inner helper starting the
 * forwarder, the proxy variables set; and none of it without the proxy or
 * outside bwrap mode.
 */
import assert from "node:assert/strict";
import {
  buildCallLaunch,
  chainEnvironment,
  DEFAULT_LAUNCHER_TOOLS,
  type LaunchPlan,
  SANDBOX_HELPER_PATH,
} from "../../src/exec/mod.ts";
import { makePolicy, TEST_LIMITS } from "../_helpers/policy.ts";

const jail = Deno.makeTempDirSync();
const policy = makePolicy({ jailRoot: jail });
Deno.removeSync(jail);
const SOCKET = "/tmp/htmcp-egress-0123456789abcdef/proxy-0.sock";
const target = { path: "/usr/bin/curl", args: ["http://example.org/"], cwd: policy.jailRoot };

function plan(over: Partial<LaunchPlan> = {}): LaunchPlan {
  return {
    mode: "bwrap",
    privilege: "root",
    serverIsRoot: true,
    runAs: { uid: 65534, gid: 65534 },
    tools: DEFAULT_LAUNCHER_TOOLS,
    backstopMs: 32_000,
    limits: TEST_LIMITS,
    ...over,
  };
}

Deno.test("buildCallLaunch() binds the egress socket read-only and starts the forwarder in the inner helper", () => {
  const launch = buildCallLaunch(plan({ egressSocket: SOCKET }), policy, target);
  const argv = launch.argv;
  const bind = argv.indexOf(SOCKET);
  assert.deepEqual(argv.slice(bind - 1, bind + 2), [
    "--ro-bind",
    SOCKET,
    "/dev/.htmcp-egress.sock",
  ]);
  assert.ok(argv.includes("--unshare-net"), "the namespace stays empty");
  assert.deepEqual(argv.slice(-3), [SANDBOX_HELPER_PATH, "--inner", "--request"]);
  assert.deepEqual(launch.sandbox!.args, [
    "--inner",
    "--egress=3128:/dev/.htmcp-egress.sock",
    "--",
    "/usr/bin/curl",
    "http://example.org/",
  ]);
  assert.equal(launch.sandbox!.env["HTTPS_PROXY"], "http://127.0.0.1:3128");
});

Deno.test("buildCallLaunch() has no forwarder and no socket without the proxy", () => {
  const launch = buildCallLaunch(plan(), policy, target);
  const words = [...launch.argv, ...launch.sandbox!.args];
  assert.ok(!words.some((arg) => arg.startsWith("--egress")));
  assert.ok(!words.includes("/dev/.htmcp-egress.sock"));
  // Mode none has no network namespace to forward into: the plan's socket is ignored.
  const none = buildCallLaunch(plan({ mode: "none", egressSocket: SOCKET }), policy, target).argv;
  assert.ok(!none.some((arg) => arg.startsWith("--egress") || arg === SOCKET));
});

Deno.test("chainEnvironment() sets the four proxy variables over any passed from the host", () => {
  const env = chainEnvironment(plan({ egressSocket: SOCKET }), {
    PATH: "/usr/bin",
    HTTP_PROXY: "http://corporate:8080",
  });
  for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]) {
    assert.equal(env[name], "http://127.0.0.1:3128", name);
  }
  const plain = chainEnvironment(plan(), { PATH: "/usr/bin" });
  assert.equal(plain["HTTP_PROXY"], undefined);
});
