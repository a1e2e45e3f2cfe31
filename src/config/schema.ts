/**
 * The shape of `policy.toml`, as a zod schema. Every table is strict, so an
 * unknown key at any level (a typo such as `timeout` for `timeout_ms`) is a
 * startup error instead of a silently ignored setting.
 *
 * Defaults are applied by the loader, not here: a key's absence must stay
 * visible so that an environment override can take precedence over it.
 *
 * @module
 */
import * as z from "zod";

const MIB = 1024 * 1024;

/** The largest uid Linux hands out ((uid_t)-1 means "no change" to setresuid). */
export const MAX_UID = 2 ** 32 - 2;

/** Inclusive bounds of every numeric key: `[min, max]`. */
export const NUMBER_BOUNDS = {
  // Above 2^31-1 ms a JS timer fires at once; a day is already far beyond any command.
  timeout_ms: [1, 86_400_000],
  // stdout and stderr are each held in memory up to this many bytes per running command.
  max_output_bytes: [1, 256 * MIB],
  max_concurrent: [1, 256],
  // 0 = no queue (a call beyond the cap is refused at once); a longer queue is memory only.
  queue_max: [0, 4096],
  // 0 = no waiting; past ten minutes every MCP client has given up on the call anyway.
  queue_wait_ms: [0, 600_000],
  cpu_seconds: [1, 604_800],
  // Below 1 MiB not even the dynamic loader can map a binary.
  address_space_bytes: [MIB, 2 ** 48],
  max_processes: [1, 4_194_304],
  file_size_bytes: [1, Number.MAX_SAFE_INTEGER],
  // 0-2 are stdio; Linux's default nr_open is 1048576.
  open_files: [3, 1_048_576],
  // 0 turns the limit off; otherwise at most 1 GiB.
  max_http_request_bytes: [0, 1024 * MIB],
  max_registration_bytes: [256, MIB],
  max_concurrent_per_client: [1, 256],
  // Below 1 KiB a file would hold a handful of records; 1 TiB is beyond any single file worth keeping.
  rotate_bytes: [1024, 2 ** 40],
  // 0 = checkpoints only at rotation and shutdown; a million records between two is already a lot to lose.
  checkpoint_every: [0, 1_000_000],
  // 0 = sized from the process's file-descriptor limit at startup.
  max_connections: [0, 1_048_576],
  header_timeout_ms: [100, 600_000],
  idle_timeout_ms: [100, 86_400_000],
  // Below a second an unknown `kid` flood could make a fetch per second; above an hour a
  // rotated key would lock everyone out for too long.
  jwks_cooldown_seconds: [1, 3600],
  // Introspection answers are cached at most this long (and never past the token's `exp`).
  introspection_cache_seconds: [0, 300],
  idle_ttl_s: [10, 604_800],
  max_per_caller: [1, 64],
  // A snapshot is held in the state dir and hashed on every download: 1 GiB is far beyond a
  // file a model should hand out; below a byte nothing could be shared.
  max_file_bytes: [1, 1024 * MIB],
  // Ten seconds to thirty days: a download link is a short-lived capability, never a share.
  default_ttl_s: [10, 2_592_000],
  max_ttl_s: [10, 2_592_000],
  max_links_per_caller: [1, 1024],
  // Below a second an exporter would post all the time; above an hour a dashboard goes stale.
  metrics_interval_ms: [1000, 3_600_000],
  // Long-running work: progress at least every 100 ms .. 10 min; a foreground
  // reply waits 100 ms .. a day before the call becomes a job; job output and
  // retention bounded like the other stores.
  progress_interval_ms: [100, 600_000],
  foreground_ms: [100, 86_400_000],
  max_timeout_ms: [1, 86_400_000],
  job_output_bytes: [1, 256 * MIB],
  job_retention_s: [10, 604_800],
  inline_output_bytes: [256, 256 * MIB],
  // An approval lives ten seconds to a day; a call waits for one at most ten minutes.
  ttl_s: [1, 86_400],
  wait_ms: [0, 600_000],
} as const satisfies Record<string, readonly [number, number]>;

type BoundedKey = keyof typeof NUMBER_BOUNDS;

function integer(key: BoundedKey) {
  const [min, max] = NUMBER_BOUNDS[key];
  const error = `must be an integer from ${min} to ${max}`;
  // One check, not .int().min().max(): each of those is a schema of its own
  // to build at every start, and all three said the same sentence.
  return z.number({ error }).refine(
    (value) => Number.isInteger(value) && value >= min && value <= max,
    { error },
  ).optional();
}

const text = (error = "must be a non-empty string") =>
  z.string({ error }).min(1, { error }).refine((value) => !value.includes("\0"), {
    error: "must not contain a NUL character",
  });

const flag = () => z.boolean({ error: "must be true or false" }).optional();

const texts = (element = "must be a non-empty string") =>
  z.array(text(element), { error: "must be an array of strings" }).optional();

const table = <T extends z.core.$ZodLooseShape>(shape: T) =>
  z.strictObject(shape, { error: "must be a table" });

/**
 * An optional top-level key whose schema is built only when the file has
 * it: a start builds the schemas of the few tables its policy uses, not of
 * all of them (a zod schema costs tens of microseconds to build).
 */
const section = <T extends z.ZodType>(build: () => T) => {
  const lazy = z.lazy(build);
  // zod decides whether a key may be absent by asking its schema's `optin`,
  // which a lazy schema answers by building its table, so every table would
  // be built at the first parse, present or not. A table is never
  // `defaulted`, so the answer (none: the `.optional()` around it says
  // "optional") is given here without building it. Held by a test that
  // parses a policy in a fresh process and finds no other table built.
  Object.defineProperty(lazy._zod, "optin", {
    value: undefined,
    writable: true,
    configurable: true,
  });
  return lazy.optional();
};

const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be ${choices(values)}` }).optional();

function choices(values: readonly string[]): string {
  const quoted = values.map((v) => `"${v}"`);
  return quoted.length === 2 ? quoted.join(" or ") : `one of ${quoted.join(", ")}`;
}

const ruleEntry = () =>
  table({
    command: text(),
    deny_args: z.array(text(), { error: "must be an array of strings" }).min(1, {
      error: "must list at least one argument sequence",
    }).optional(),
    // A prompt rule names the argument sequences that are held for a human
    // (`args`, matched exactly as deny_args is) and the sentence shown to them.
    args: z.array(text(), { error: "must be an array of strings" }).min(1, {
      error: "must list at least one argument sequence",
    }).optional(),
    reason: text().optional(),
    enforce: oneOf(["deny", "warn"]),
    decision: oneOf(["deny", "prompt"]),
    justification: text().optional(),
  });

const extraPatternEntry = () => table({ name: text(), regex: text() });

/** Every code a `[[tests]]` entry may expect (the result codes a check can give). */
export const POLICY_TEST_CODES = [
  "OK",
  "POLICY_DENIED",
  "PARSE_ERROR",
  "CWD_ESCAPE",
  "PATH_ESCAPE",
] as const;

const flagWords = () =>
  z.array(
    z.string({ error: 'must be a flag such as "-m" or "--message="' }).regex(
      /^--?[A-Za-z0-9][A-Za-z0-9-]*(=|=\.\.\.)?$/,
      { error: 'must be a flag such as "-m" or "--message=" (a trailing = takes a value)' },
    ),
    { error: "must be an array of flags" },
  );

const commandSchemaEntry = () => {
  const words = flagWords();
  return table({
    subcommands: texts(),
    flags: z.union([words, z.record(z.string(), words)], {
      error: "must be an array of flags, or a table of such arrays by subcommand",
    }).optional(),
    global_flags: words.optional(),
  });
};

const testEntry = () =>
  table({
    name: text().optional(),
    command: text(),
    cwd: text().optional(),
    expect: z.enum(POLICY_TEST_CODES, {
      error: `must be ${POLICY_TEST_CODES.map((code) => `"${code}"`).join(", ")}`,
    }),
    reason_contains: text().optional(),
  });

/** The whole file. */
export const PolicyFileSchema = table({
  jail_root: text().optional(),
  audit_log: text().optional(),
  audit_fail_mode: oneOf(["closed", "open"]),
  state_dir: text().optional(),
  audit: section(() =>
    table({
      rotate_bytes: integer("rotate_bytes"),
      rotate_daily: flag(),
      checkpoint_every: integer("checkpoint_every"),
      checkpoint_stderr: flag(),
      expose_to_model: flag(),
    })
  ),
  // An entry is a command name, or a table naming one with a decision; the
  // table's keys are checked in lists.ts, where each fault gets its sentence.
  allowlist: section(() =>
    table({
      commands: z.array(
        z.union([text(), z.record(z.string(), z.unknown())], {
          error: "must be a non-empty string",
        }),
        { error: "must be an array of strings" },
      ).optional(),
    })
  ),
  denylist: section(() => table({ commands: texts() })),
  rules: section(() => z.array(ruleEntry(), { error: "must be an array of [[rules]] tables" })),
  tests: section(() => z.array(testEntry(), { error: "must be an array of [[tests]] tables" })),
  commands: section(() => z.record(z.string(), commandSchemaEntry(), { error: "must be a table" })),
  limits: section(() =>
    table({
      timeout_ms: integer("timeout_ms"),
      max_output_bytes: integer("max_output_bytes"),
      max_concurrent: integer("max_concurrent"),
      queue_max: integer("queue_max"),
      queue_wait_ms: integer("queue_wait_ms"),
      cpu_seconds: integer("cpu_seconds"),
      address_space_bytes: integer("address_space_bytes"),
      max_processes: integer("max_processes"),
      file_size_bytes: integer("file_size_bytes"),
      open_files: integer("open_files"),
      progress_interval_ms: integer("progress_interval_ms"),
      foreground_ms: integer("foreground_ms"),
      max_timeout_ms: integer("max_timeout_ms"),
      job_output_bytes: integer("job_output_bytes"),
      job_retention_s: integer("job_retention_s"),
      inline_output_bytes: integer("inline_output_bytes"),
    })
  ),
  redaction: section(() =>
    table({
      enabled: flag(),
      entropy_fallback: flag(),
      extra_patterns: z.array(extraPatternEntry(), {
        error: "must be an array of { name, regex } tables",
      }).optional(),
    })
  ),
  env: section(() => table({ pass: texts() })),
  paths: section(() => table({ confine_args: flag() })),
  guards: section(() => table({ disable: texts() })),
  describe: section(() => table({ show_jail_path: flag() })),
  mode: section(() => table({ full_control: flag() })),
  sessions: section(() =>
    table({
      idle_ttl_s: integer("idle_ttl_s"),
      max_per_caller: integer("max_per_caller"),
    })
  ),
  approval: section(() =>
    table({
      ttl_s: integer("ttl_s"),
      wait_ms: integer("wait_ms"),
      require: oneOf(["any", "operator"]),
      always_allow_file: text().optional(),
    })
  ),
  links: section(() =>
    table({
      enabled: flag(),
      max_file_bytes: integer("max_file_bytes"),
      default_ttl_s: integer("default_ttl_s"),
      max_ttl_s: integer("max_ttl_s"),
      max_links_per_caller: integer("max_links_per_caller"),
    })
  ),
  log: section(() =>
    table({
      format: oneOf(["text", "json"]),
      level: oneOf(["debug", "info", "warn", "error"]),
    })
  ),
  telemetry: section(() =>
    table({
      otlp_endpoint: text(),
      service_name: text().optional(),
      metrics_interval_ms: integer("metrics_interval_ms"),
    })
  ),
  sandbox: section(() =>
    table({
      mode: oneOf(["none", "bwrap", "auto"]),
      // true/false are the older spelling of "host"/"none", kept so existing policies load.
      network: z.union([z.boolean(), z.enum(["none", "allowlist", "host"])], {
        error: 'must be "none", "allowlist" or "host"',
      }).optional(),
      network_allow: texts('must be a "HOST:PORT" string'),
      accept_path_check_only: flag(),
      user: z.union([
        text(),
        z.number().int().min(0).max(MAX_UID),
      ], { error: `must be a user name or a uid from 1 to ${MAX_UID}` }).optional(),
    })
  ),
  http: section(() =>
    table({
      listen: text().optional(),
      base_url: text().optional(),
      tls_cert: text().optional(),
      tls_key: text().optional(),
      allowed_origins: texts(),
      allowed_hosts: texts(),
      max_http_request_bytes: integer("max_http_request_bytes"),
      max_registration_bytes: integer("max_registration_bytes"),
      max_concurrent_per_client: integer("max_concurrent_per_client"),
      max_connections: integer("max_connections"),
      header_timeout_ms: integer("header_timeout_ms"),
      idle_timeout_ms: integer("idle_timeout_ms"),
    })
  ),
  auth: section(() =>
    table({
      mode: oneOf(["oauth", "none", "external"]),
      allow_localhost_bypass: flag(),
      allow_plain_pkce: flag(),
      client_id_metadata_allow: texts(),
      issuer: text().optional(),
      audience: text().optional(),
      jwks_uri: text().optional(),
      algorithms: texts(),
      jwks_cooldown_seconds: integer("jwks_cooldown_seconds"),
      scope_claim: text().optional(),
      introspection_endpoint: text().optional(),
      introspection_client_id: text().optional(),
      introspection_secret_file: text().optional(),
      introspection_cache_seconds: integer("introspection_cache_seconds"),
      profiles: table({
        claim: text(),
        scopes: z.record(
          z.string({ error: "must be a claim value" }),
          z.array(text(), { error: "must be an array of scopes" }),
          { error: "must be a table of claim value = [scopes]" },
        ),
      }).optional(),
    })
  ),
  state: section(() =>
    table({ backend: oneOf(["local", "postgres"]), url_file: text().optional() })
  ),
});

/** The validated file, every key still optional. */
export type PolicyFile = z.infer<typeof PolicyFileSchema>;
