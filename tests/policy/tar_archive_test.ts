import { equal, ok } from "node:assert/strict";
import { isRemoteArchiveName, remoteArchiveName } from "../../src/policy/tar_archive.ts";

Deno.test("isRemoteArchiveName() follows GNU tar: a colon with no slash before it", () => {
  ok(isRemoteArchiveName("host:a.tar"));
  ok(isRemoteArchiveName("user@host:/srv/a.tar"));
  ok(isRemoteArchiveName("host:dir/a.tar"));
  ok(!isRemoteArchiveName("./a:b.tar"));
  ok(!isRemoteArchiveName("dir/a:b.tar"));
  ok(!isRemoteArchiveName("a.tar"));
});

Deno.test("remoteArchiveName() finds the -f value in every spelling GNU getopt accepts", () => {
  for (
    const args of [
      ["-xf", "h:a"],
      ["-xfh:a"],
      ["-f", "h:a", "-x"],
      ["--file=h:a"],
      ["--file", "h:a"],
      ["--fi=h:a"],
      ["xf", "h:a"],
      ["xvf", "h:a"],
      ["cbf", "20", "h:a", "x"],
      ["cfb", "h:a", "20", "x"],
      ["-cf", "local.tar", "-f", "h:a"],
    ]
  ) {
    equal(remoteArchiveName(args), "h:a", JSON.stringify(args));
  }
});

Deno.test("remoteArchiveName() honours --force-local only where tar reads it as that option", () => {
  equal(remoteArchiveName(["--force-local", "-xf", "a:b"]), null);
  equal(remoteArchiveName(["-xf", "a:b", "--force-local"]), null);
  equal(remoteArchiveName(["--force", "-xf", "a:b"]), null);
  equal(remoteArchiveName(["-cf", "a:b", "--", "--force-local"]), "a:b", "after --, a file name");
  equal(remoteArchiveName(["--exclude", "--force-local", "-cf", "a:b"]), "a:b");
  equal(remoteArchiveName(["-X", "--force-local", "-cf", "a:b"]), "a:b");
});

Deno.test("remoteArchiveName() ignores colons in member names and other options", () => {
  equal(remoteArchiveName(["-cf", "a.tar", "x:y"]), null);
  equal(remoteArchiveName(["-cf", "a.tar", "--exclude=x:y", "f"]), null);
  equal(remoteArchiveName(["-tf", "a.tar"]), null);
});

Deno.test("GNU tar really treats host:file as a remote archive and runs the remote shell", async () => {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-tar-" });
  try {
    await Deno.writeTextFile(`${dir}/rsh.sh`, "#!/bin/sh\ntouch canary\nexit 1\n");
    await Deno.chmod(`${dir}/rsh.sh`, 0o755);
    await new Deno.Command("tar", {
      args: [`--rsh-command=${dir}/rsh.sh`, "-tf", "127.0.0.1:a.tar"],
      cwd: dir,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    ok((await Deno.lstat(`${dir}/canary`)).isFile, "tar ran the remote shell for 127.0.0.1:a.tar");
    equal(remoteArchiveName(["-tf", "127.0.0.1:a.tar"]), "127.0.0.1:a.tar");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
