import { equal } from "node:assert/strict";
import { isLoopbackHost } from "../../src/config/mod.ts";
import { isLoopbackHost as authIsLoopback } from "../../src/auth/mod.ts";
import { isLoopbackName } from "../../src/transport/http/address.ts";
import { checkRedirectUri } from "../../src/auth/server/redirect_uri.ts";

/** Every input, and whether it is this machine's loopback. */
const CASES: readonly (readonly [string, boolean])[] = [
  ["localhost", true],
  ["LOCALHOST", true],
  ["127.0.0.1", true],
  ["127.1.2.3", true],
  ["[::1]", true],
  ["::1", true],
  ["::ffff:127.0.0.1", true],
  ["127.0.0.256", false],
  ["127.0.0.1.evil.example", false],
  ["localhost.evil.example", false],
  ["128.0.0.1", false],
  ["0.0.0.0", false],
  ["[::]", false],
  ["10.0.0.1", false],
  ["example.com", false],
  ["", false],
];

for (const [host, expected] of CASES) {
  Deno.test(`every layer agrees that ${JSON.stringify(host)} is ${expected ? "" : "not "}loopback`, () => {
    equal(isLoopbackHost(host), expected);
    equal(authIsLoopback(host), expected);
    equal(isLoopbackName(host), expected);
    if (host !== "" && !host.includes(":") || host.startsWith("[")) {
      const redirect = checkRedirectUri(`http://${host}:8765/cb`);
      equal(redirect.ok, expected, `${host}: ${redirect.ok ? "" : redirect.reason}`);
    }
  });
}
