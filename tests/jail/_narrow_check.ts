/**
 * Child-process helper for narrow_permissions_test.ts: runs the jail checks
 * under a Deno read grant for the jail alone and prints the verdicts as JSON.
 * Usage: deno run --allow-read=JAIL _narrow_check.ts JAIL CANDIDATE...
 */
import { confineArgs, confineCwd } from "../../src/jail/mod.ts";

const [root, ...candidates] = Deno.args;
if (root === undefined) throw new Error("usage: _narrow_check.ts JAIL CANDIDATE...");
const verdicts: Record<string, string> = {};
for (const candidate of candidates) {
  const result = await confineArgs(root, root, [candidate]);
  verdicts[candidate] = result.ok ? "OK" : result.code;
}
const cwd = await confineCwd(root, undefined);
verdicts["<cwd>"] = cwd.ok ? "OK" : cwd.code;
console.log(JSON.stringify(verdicts));
