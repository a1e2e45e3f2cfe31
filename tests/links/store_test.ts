/**
 * The link store on real files with a moved clock: lifetimes end on access
 * and by the sweep (which also removes orphaned and stale copies), the
 * per-caller bound, the last download deleting the link, and a snapshot
 * that no longer matches its hash being refused and deleted by the route.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { LinkStore, startLinks } from "../../src/links/mod.ts";
import { handleDownload } from "../../src/links/route.ts";
import { snapshotJailFile } from "../../src/links/snapshot.ts";
import type { LinkSettings } from "../../src/config/types.ts";
import { makeSandboxJail } from "../_helpers/jail.ts";
import { makePolicy } from "../_helpers/policy.ts";

const SETTINGS: LinkSettings = {
  enabled: true,
  maxFileBytes: 1024,
  defaultTtlMs: 60_000,
  maxTtlMs: 120_000,
  maxLinksPerCaller: 2,
};

interface Fixture {
  readonly jail: string;
  readonly stateDir: string;
  readonly clock: { now: number };
  readonly store: LinkStore;
  files(): Promise<string[]>;
}

async function withStore(fn: (f: Fixture) => Promise<void>): Promise<void> {
  const jail = await makeSandboxJail("htmcp-links-");
  const dir = join(jail, "..");
  const stateDir = join(dir, "state");
  const clock = { now: 1_000_000 };
  const store = new LinkStore(stateDir, jail, SETTINGS, () => clock.now);
  const files = async () => {
    const names: string[] = [];
    for await (const entry of Deno.readDir(join(stateDir, "links"))) {
      if (entry.name !== ".lock") names.push(entry.name);
    }
    return names.sort();
  };
  try {
    await fn({ jail, stateDir, clock, store, files });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const request = (path: string, extra: Partial<{ ttlMs: number; maxDownloads: number }> = {}) => ({
  path,
  ttlMs: extra.ttlMs ?? 60_000,
  maxDownloads: extra.maxDownloads ?? null,
  inline: false,
});

Deno.test("a link past its lifetime is refused on access and its snapshot deleted", async () => {
  await withStore(async ({ jail, clock, store, files }) => {
    await Deno.writeTextFile(join(jail, "f.txt"), "f\n");
    const made = await store.create("local", request("f.txt"));
    assert.ok(made.ok);
    const snapshot = `${made.record.link_id}.snapshot`;
    assert.ok((await files()).includes(snapshot));
    assert.equal((await Deno.stat(join(jail, "../state/links", snapshot))).mode! & 0o777, 0o600);
    clock.now += 60_000;
    const claim = await store.claim(made.token);
    assert.equal(claim.ok, false);
    assert.equal(!claim.ok && claim.why, "expired");
    assert.deepEqual(await files(), [], "record and snapshot are gone");
    assert.equal(!((await store.claim(made.token)).ok), true);
  });
});

Deno.test("the sweep deletes expired links, snapshots without a record, and stale temporary copies", async () => {
  await withStore(async ({ jail, stateDir, clock, store, files }) => {
    await Deno.writeTextFile(join(jail, "f.txt"), "f\n");
    const short = await store.create("local", request("f.txt", { ttlMs: 10_000 }));
    const long = await store.create("local", request("f.txt", { ttlMs: 100_000 }));
    assert.ok(short.ok && long.ok);
    const folder = join(stateDir, "links");
    await Deno.writeTextFile(join(folder, "lnk_00000000000000000000dead.snapshot"), "orphan");
    const staleTemp = join(folder, "lnk_00000000000000000000beef.snapshot.x.tmp");
    await Deno.writeTextFile(staleTemp, "crash leftover");
    const freshTemp = join(folder, "lnk_00000000000000000000cafe.snapshot.y.tmp");
    await Deno.writeTextFile(freshTemp, "copy in progress");
    await Deno.utime(staleTemp, new Date(clock.now), new Date(clock.now - 2 * 3_600_000));
    await Deno.utime(freshTemp, new Date(clock.now), new Date(clock.now));
    clock.now += 10_000;
    const ended = await store.sweep();
    assert.deepEqual(ended.map((r) => r.link_id), [short.record.link_id]);
    const left = await files();
    assert.ok(left.includes(`${long.record.link_id}.snapshot`));
    assert.ok(!left.includes(`${short.record.link_id}.snapshot`));
    assert.ok(!left.includes("lnk_00000000000000000000dead.snapshot"));
    assert.ok(!left.includes("lnk_00000000000000000000beef.snapshot.x.tmp"));
    assert.ok(left.includes("lnk_00000000000000000000cafe.snapshot.y.tmp"));
    assert.equal(left.filter((name) => name.endsWith(".json")).length, 1);
  });
});

Deno.test("startLinks sweeps at startup and audits each expired link", async () => {
  await withStore(async ({ jail, stateDir, clock, store, files }) => {
    await Deno.writeTextFile(join(jail, "f.txt"), "f\n");
    const made = await store.create("client:c1", request("f.txt", { ttlMs: 10_000 }));
    assert.ok(made.ok);
    clock.now += 20_000;
    const events: [string, Record<string, unknown>][] = [];
    const audit = {
      writeEvent: (event: string, fields: unknown) => {
        events.push([event, fields as Record<string, unknown>]);
        return Promise.resolve({ ok: true as const, seq: events.length });
      },
    };
    const policy = makePolicy({ jailRoot: jail, overrides: { stateDir, links: SETTINGS } });
    const service = await startLinks(policy, audit as never, () => clock.now);
    assert.ok(service !== null);
    service.stop();
    assert.deepEqual(events, [[
      "link_expired",
      { client_id: "c1", link_id: made.record.link_id, path: "f.txt" },
    ]]);
    assert.deepEqual(await files(), []);
    const off = makePolicy({
      jailRoot: jail,
      overrides: { stateDir, links: { ...SETTINGS, enabled: false } },
    });
    assert.equal(await startLinks(off, audit as never), null);
  });
});

Deno.test("a caller holds at most max_links_per_caller live links; others are not counted against it", async () => {
  await withStore(async ({ jail, store, files }) => {
    await Deno.writeTextFile(join(jail, "f.txt"), "f\n");
    assert.ok((await store.create("client:a", request("f.txt"))).ok);
    assert.ok((await store.create("client:a", request("f.txt"))).ok);
    const before = await files();
    const third = await store.create("client:a", request("f.txt"));
    assert.equal(!third.ok && third.code, "LINK_LIMIT_REACHED");
    assert.deepEqual(await files(), before, "the refused copy is not left behind");
    assert.ok((await store.create("client:b", request("f.txt"))).ok);
  });
});

Deno.test("the last allowed download deletes the link while its open snapshot still reads", async () => {
  await withStore(async ({ jail, store, files }) => {
    await Deno.writeTextFile(join(jail, "f.txt"), "payload\n");
    const made = await store.create("local", request("f.txt", { maxDownloads: 2 }));
    assert.ok(made.ok);
    const first = await store.claim(made.token);
    assert.ok(first.ok);
    first.claimed.file.close();
    const last = await store.claim(made.token);
    assert.ok(last.ok);
    assert.equal(last.claimed.record.downloads, 2);
    assert.deepEqual(await files(), []);
    const bytes = new Uint8Array(64);
    const read = await last.claimed.file.read(bytes);
    last.claimed.file.close();
    assert.equal(new TextDecoder().decode(bytes.subarray(0, read ?? 0)), "payload\n");
    const after = await store.claim(made.token);
    assert.equal(!after.ok && after.why, "unknown");
  });
});

Deno.test("a snapshot changed in the state dir fails its hash check: 404, audited, link deleted", async () => {
  await withStore(async ({ jail, stateDir, store, files }) => {
    await Deno.writeTextFile(join(jail, "f.txt"), "genuine\n");
    const made = await store.create("local", request("f.txt"));
    assert.ok(made.ok);
    await Deno.writeTextFile(
      join(stateDir, "links", `${made.record.link_id}.snapshot`),
      "forged!\n",
    );
    const events: [string, Record<string, unknown>][] = [];
    const audit = {
      writeEvent: (event: string, fields: unknown) => {
        events.push([event, fields as Record<string, unknown>]);
        return Promise.resolve({ ok: true as const, seq: events.length });
      },
    };
    const response = await handleDownload(
      { store, audit: audit as never, failMode: "closed" },
      new Request(`http://127.0.0.1/download/${made.token}`),
      "127.0.0.1",
    );
    assert.equal(response.status, 404);
    assert.equal((await response.arrayBuffer()).byteLength, 0);
    assert.deepEqual(events.map(([event, fields]) => [event, fields.reason ?? null]), [
      ["link_download_refused", "tampered"],
    ]);
    assert.deepEqual(await files(), []);
  });
});

Deno.test("a named pipe in the jail is refused as not a regular file, without blocking on it", async () => {
  await withStore(async ({ jail, stateDir }) => {
    const made = await new Deno.Command("mkfifo", { args: [join(jail, "pipe")] }).output();
    assert.equal(made.code, 0);
    const target = join(stateDir, "copy");
    await Deno.mkdir(stateDir, { recursive: true, mode: 0o700 });
    const result = await snapshotJailFile(jail, "pipe", 1024, target);
    assert.equal(!result.ok && result.code, "NOT_A_REGULAR_FILE");
    await assert.rejects(() => Deno.lstat(target), Deno.errors.NotFound);
  });
});
