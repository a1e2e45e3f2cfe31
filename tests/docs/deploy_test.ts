/**
 * The deployment files under deploy/ are real configuration, not prose: the
 * nginx example passes `nginx -t` (a private prefix, never the system
 * nginx), the Kubernetes manifests parse as YAML with the settings the docs
 * promise, and the Containerfile runs as a non-root user with bubblewrap.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const DEPLOY = fileURLToPath(new URL("../../deploy/", import.meta.url));

async function run(command: string, args: string[], cwd?: string) {
  const out = await new Deno.Command(command, {
    args,
    ...(cwd === undefined ? {} : { cwd }),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

Deno.test("deploy/nginx/htmcp.conf passes nginx -t and turns SSE buffering off", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-nginx-" });
  try {
    const example = await Deno.readTextFile(join(DEPLOY, "nginx", "htmcp.conf"));
    for (
      const needle of ["proxy_buffering off;", "X-Accel-Buffering no", "proxy_read_timeout 3600s;"]
    ) {
      assert.ok(example.includes(needle), needle);
    }
    // The example names the operator's certificate; the check uses a throwaway one.
    const cert = await run("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-subj",
      "/CN=mcp.example.com",
      "-days",
      "1",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
    ]);
    assert.equal(cert.code, 0, cert.stderr);
    const site = example
      .replace("/etc/nginx/tls/mcp.example.com.crt", join(dir, "cert.pem"))
      .replace("/etc/nginx/tls/mcp.example.com.key", join(dir, "key.pem"));
    await Deno.writeTextFile(join(dir, "htmcp.conf"), site);
    await Deno.mkdir(join(dir, "logs"));
    await Deno.writeTextFile(
      join(dir, "nginx.conf"),
      `pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log;
events {}
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/htmcp.conf;
}
`,
    );
    const checked = await run("nginx", ["-t", "-p", dir, "-c", join(dir, "nginx.conf")]);
    assert.equal(checked.code, 0, checked.stderr);
    assert.match(checked.stderr, /syntax is ok/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deploy/k8s manifests parse and carry the promised security settings", async () => {
  // Python's YAML parser (installed with the OS) reads every document of every file.
  const script = `
import json, glob, sys, yaml
out = {}
for path in sorted(glob.glob(sys.argv[1] + "/*.yaml")):
    out[path.rsplit("/", 1)[1]] = list(yaml.safe_load_all(open(path)))
print(json.dumps(out))
`;
  const parsed = await run("python3", ["-c", script, join(DEPLOY, "k8s")]);
  assert.equal(parsed.code, 0, parsed.stderr);
  // Manifests are deep, loosely shaped documents; a wrong path fails the assertion anyway.
  // deno-lint-ignore no-explicit-any
  const files = JSON.parse(parsed.stdout) as Record<string, Record<string, any>[]>;
  assert.deepEqual(Object.keys(files), [
    "configmap.yaml",
    "deployment.yaml",
    "ingress.yaml",
    "service.yaml",
  ]);
  const deployment = files["deployment.yaml"]?.find((d) => d.kind === "Deployment");
  const container = deployment?.spec.template.spec.containers[0];
  assert.equal(deployment?.spec.template.spec.securityContext.runAsNonRoot, true);
  assert.equal(container.securityContext.readOnlyRootFilesystem, true);
  assert.equal(container.securityContext.allowPrivilegeEscalation, false);
  assert.deepEqual(container.securityContext.capabilities.drop, ["ALL"]);
  assert.ok(container.startupProbe.exec.command.includes("check"));
  assert.deepEqual(container.readinessProbe.httpGet, { path: "/readyz", port: "http" });
  assert.deepEqual(container.livenessProbe.httpGet, { path: "/healthz", port: "http" });
  const mounts = container.volumeMounts.map((m: { mountPath: string }) => m.mountPath);
  for (const path of ["/jail", "/var/lib/htmcp", "/var/log/htmcp", "/etc/htmcp"]) {
    assert.ok(mounts.includes(path), path);
  }
  const annotations = files["ingress.yaml"]?.[0]?.metadata.annotations;
  assert.equal(annotations["nginx.ingress.kubernetes.io/proxy-buffering"], "off");
  assert.equal(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"], "3600");
  const policy = files["configmap.yaml"]?.[0]?.data["policy.toml"];
  assert.match(policy, /mode = "external"/);
});

Deno.test("deploy/Containerfile runs as a non-root user, with bubblewrap and the state as volumes", async () => {
  const text = await Deno.readTextFile(join(DEPLOY, "Containerfile"));
  assert.match(text, /^USER 10001:10001$/m);
  assert.match(text, /apt-get install .*bubblewrap/);
  assert.match(text, /^VOLUME \["\/jail", "\/var\/lib\/htmcp", "\/var\/log\/htmcp"\]$/m);
});
