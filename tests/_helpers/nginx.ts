/**
 * A real nginx on loopback for fleet tests: in the foreground, one process
 * (so the pid the test holds is the server, and only it is signalled), as
 * nobody when the tests run as root, with every temp path in its own folder.
 */
import { join } from "node:path";

export const NGINX = "/usr/sbin/nginx";

/** A free loopback port (bound, read, released). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function run(command: string, args: string[]): Promise<string> {
  const result = await new Deno.Command(command, {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(result.stdout);
}

/**
 * Starts nginx listening on `127.0.0.1:listen` with `httpBody` inside its
 * `http {}` block (upstreams, the `server` block), proxying with HTTP/1.1,
 * no buffering and the client's Host, as an SSE-safe balancer must.
 */
export async function startNginx(
  dir: string,
  listen: number,
  httpBody: string,
): Promise<{ stop(): Promise<void> }> {
  const conf = join(dir, "nginx.conf");
  await Deno.writeTextFile(
    conf,
    `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  proxy_http_version 1.1;
  proxy_buffering off;
  proxy_set_header Host $http_host;
  proxy_set_header Connection "";
${httpBody}
}
`,
  );
  const root = (await run("/usr/bin/id", ["-u"])).trim() === "0";
  if (root) await run("/usr/bin/chown", ["-R", "nobody", dir]);
  const argv = [NGINX, "-p", dir, "-c", conf];
  const full = root
    ? ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", ...argv]
    : argv;
  const child = new Deno.Command(full[0] as string, {
    args: full.slice(1),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const stderr = new Response(child.stderr).text();
  for (let i = 0; i < 100; i++) {
    if (exited) throw new Error(`nginx exited: ${await stderr}`);
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port: listen })).close();
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    async stop() {
      // Signalled only while it is still the child this test started.
      if (!exited) child.kill("SIGTERM");
      await status;
      await stderr;
    },
  };
}
