/**
 * The only outbound network grants: the external identity provider's hosts
 * (external mode) and the allowlisted client-id metadata hosts (built-in
 * mode), each `host:port` exactly, over HTTP only.
 */
import assert from "node:assert/strict";
import { makePolicy } from "../_helpers/policy.ts";
import type { Policy } from "../../src/config/types.ts";
import { permissionSetFor } from "../../src/permissions/mod.ts";

function policy(jail: string, auth: Partial<Policy["auth"]>): Policy {
  const base = makePolicy({ jailRoot: jail, auditLog: "/var/log/htmcp/audit.jsonl" });
  return {
    ...base,
    http: { ...base.http, listen: "127.0.0.1:8443" },
    auth: { ...base.auth, ...auth },
  };
}

function netOf(p: Policy, transport: "stdio" | "http"): string[] {
  const result = permissionSetFor(p, { transport, launcherPaths: [] });
  if (!result.ok) throw new Error(result.reason);
  return result.set.net.map((grant) => grant.value);
}

Deno.test("external mode grants net on the provider's issuer, jwks_uri and introspection host:port only", async () => {
  const jail = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-perm-" }));
  try {
    const p = policy(jail, {
      mode: "external",
      external: {
        issuer: "https://id.example.com/realms/a",
        audience: null,
        jwksUri: "https://keys.example.com:8443/jwks",
        algorithms: ["ES256"],
        jwksCooldownSeconds: 30,
        scopeClaim: null,
        introspection: {
          endpoint: "http://127.0.0.1:9000/introspect",
          clientId: "htmcp",
          secretFile: "/etc/htmcp/introspection.secret",
          cacheSeconds: 60,
        },
        profiles: null,
      },
    });
    assert.deepEqual(netOf(p, "http"), [
      "127.0.0.1:8443",
      "id.example.com:443",
      "keys.example.com:8443",
      "127.0.0.1:9000",
    ]);
    const read = permissionSetFor(p, { transport: "http", launcherPaths: [] });
    assert.ok(read.ok && read.set.read.some((g) => g.value === "/etc/htmcp/introspection.secret"));
    assert.deepEqual(netOf(p, "stdio"), [], "stdio never talks to the provider");
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

Deno.test("client_id_metadata_allow grants net on each allowlisted host, :443 for a host entry", async () => {
  const jail = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-perm-" }));
  try {
    const p = policy(jail, {
      clientIdMetadataAllow: ["https://app.example.com/client.json", "tools.example.org"],
    });
    assert.deepEqual(netOf(p, "http"), [
      "127.0.0.1:8443",
      "app.example.com:443",
      "tools.example.org:443",
    ]);
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});
